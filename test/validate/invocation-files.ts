import { parseTolerantJson } from '../../pipeline/concepts/asv/index.js';
import { median } from '../../stages/validate/paired/index.js';

/**
 * One invocation's results file cut out of an `--append-samples` file, as perfmine keeps them:
 * invocation i holds samples [i*per, (i+1)*per) with their median as the result, statistics
 * dropped (pooling recomputes them), and started_at moved i minutes later. `scale` multiplies the
 * named benchmarks' samples (a planted speedup).
 */
export function invocationFile(text: string, i: number, per: number, scale: { names?: ReadonlySet<string>; factor?: number } = {}): string {
  const data = parseTolerantJson(text) as { result_columns: string[]; results: Record<string, unknown[]> };
  const col = (name: string) => data.result_columns.indexOf(name);
  for (const [key, row] of Object.entries(data.results)) {
    const r = [...row];
    while (r.length < data.result_columns.length) r.push(null);
    const f = scale.names?.has(key) ? (scale.factor ?? 1) : 1;
    const samples = (r[col('samples')] as number[][]).map((s) => s.slice(i * per, (i + 1) * per).map((x) => x * f));
    r[col('result')] = samples.map((s) => median(s));
    r[col('samples')] = samples;
    for (const stat of ['stats_ci_99_a', 'stats_ci_99_b', 'stats_q_25', 'stats_q_75', 'stats_number', 'stats_repeat']) r[col(stat)] = null;
    r[col('started_at')] = (r[col('started_at')] as number) + i * 60_000;
    data.results[key] = r;
  }
  return JSON.stringify(data);
}
