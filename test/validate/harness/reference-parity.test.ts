import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { parseResultsFile, resultSetOf } from '../../../pipeline/concepts/asv/index.js';
import { HARNESS_SCRIPT } from '../../../pipeline/services/environments/harness-files.js';
import { REFERENCE_DIR } from '../../concepts/asv/reference.js';
import { removeSuite, runProgram, writeSuite } from './harness-fixture.js';

/**
 * Parity with what real asv wrote for real suites (../shared/reference/asv-real/): each suite's
 * shape (its modules, classes, benchmark kinds, parameters and parameter names, as real asv
 * recorded them in benchmarks.json) is rebuilt as a suite of empty benchmarks, and the harness
 * discovers and runs it. Its workload names must be exactly the ones real asv's results files
 * hold, with the same parameters, types and units (the benchmarks' code, hence their version
 * hashes, cannot be rebuilt here: the real suites' own code is needed for that, and was checked
 * against them by hand: 32 of 32 rich and 36 of 36 networkx versions equal).
 */

/** Rebuilds a suite's shape from its reference benchmarks.json (see the script's docstring). */
const REBUILD = fileURLToPath(new URL('./rebuild_suite.py', import.meta.url));

const CASES = [
  // networkx's reference ran a selection (its README): the same --bench here
  {
    suite: 'networkx #7971',
    benchmarks: 'networkx-7971/benchmarks.json',
    results: 'networkx-7971/aab03808-existing-py_usr_bin_python3.json',
    bench: ['--bench', 'benchmark_many_components|benchmark_algorithms'],
  },
  {
    suite: 'rich #3399',
    benchmarks: 'rich-3399/r4x4/ab/benchmarks.json',
    results: 'rich-3399/r4x4/ab/349042fd-existing-py_usr_bin_python3.json',
    bench: [],
  },
] as const;

const dirs: string[] = [];
afterAll(() => dirs.forEach(removeSuite));

describe.each(CASES)('the harness on the shape of $suite', ({ benchmarks, results, bench }) => {
  const reference = JSON.parse(readFileSync(join(REFERENCE_DIR, 'asv-real', benchmarks), 'utf8')) as Record<
    string,
    { type: string; unit: string; params: string[][]; param_names: string[] } | number
  >;

  async function rebuilt(): Promise<string> {
    const dir = writeSuite({});
    dirs.push(dir);
    const r = await runProgram('python3', [REBUILD, join(REFERENCE_DIR, 'asv-real', benchmarks), dir], dir);
    expect(r.code, r.stderr).toBe(0);
    return dir;
  }

  it('discovers every benchmark with the names, parameters, parameter names, types and units real asv recorded', async () => {
    const dir = await rebuilt();
    const r = await runProgram('python3', [HARNESS_SCRIPT, 'discover'], dir);
    expect(r.code, r.stderr).toBe(0);
    const ours = JSON.parse(r.stdout) as Record<string, { type: string; unit: string; params: string[][]; param_names: string[] } | number>;
    const names = (b: typeof ours) =>
      Object.keys(b)
        .filter((k) => k !== 'version')
        .sort();
    expect(names(ours)).toEqual(names(reference));
    for (const name of names(reference)) {
      const [a, b] = [ours[name] as Exclude<(typeof ours)[string], number>, reference[name] as Exclude<(typeof ours)[string], number>];
      expect({ type: a.type, unit: a.unit, params: a.params, param_names: a.param_names }, name).toEqual({
        type: b.type,
        unit: b.unit,
        params: b.params,
        param_names: b.param_names,
      });
    }
  });

  it("runs them into a results file with exactly the workloads of the real results file, each benchmark's parameters in the same order", async () => {
    const dir = await rebuilt();
    const r = await runProgram(
      'python3',
      [
        HARNESS_SCRIPT,
        'run',
        '--out-dir',
        join(dir, 'results'),
        '--commit',
        'a'.repeat(40),
        '--machine',
        'perfmine',
        '-a',
        'rounds=1',
        '-a',
        'repeat=1',
        '-a',
        'warmup_time=0',
        ...bench,
      ],
      dir,
    );
    expect(r.code, r.stderr).toBe(0);
    const file = readdirSync(join(dir, 'results', 'perfmine')).find((f) => f.startsWith('aaaaaaaa-'))!;
    const ours = resultSetOf(parseResultsFile(readFileSync(join(dir, 'results', 'perfmine', file), 'utf8'), file));
    const real = resultSetOf(parseResultsFile(readFileSync(join(REFERENCE_DIR, 'asv-real', results), 'utf8'), results));
    const byBenchmark = (set: typeof ours) => {
      const m = new Map<string, string[]>();
      for (const w of set.workloads) m.set(w.key, [...(m.get(w.key) ?? []), w.name]);
      return m;
    };
    const [a, b] = [byBenchmark(ours), byBenchmark(real)];
    // the real file holds the benchmarks that ran (a selection, for networkx); each is ours, unrolled alike
    expect(real.workloads.length).toBeGreaterThan(0);
    for (const [key, names] of b) expect(a.get(key), key).toEqual(names);
    // and every workload ran: a value for each (these benchmarks do nothing, quickly)
    for (const w of ours.workloads) expect(typeof w.value === 'number' && Number.isFinite(w.value), w.name).toBe(true);
    expect(ours.workloads.map((w) => w.name).sort()).toEqual(real.workloads.map((w) => w.name).sort());
  }, 300_000);
});
