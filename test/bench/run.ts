/**
 * `npm run bench [-- NAME...]`: perfmine's performance benchmarks (not tests). Each figure is a
 * ratio or a count measured in one run, so that it holds on a noisy machine. Prints a table and
 * writes bench/results.json. NAMES: collect-filter, chronological-cache, git-collect, decide,
 * measure, selection, startup, slurm-coordinator, index-build (default: all; slurm-coordinator needs the cluster of
 * scripts/setup-slurm.sh; chronological-cache, measure and selection need the Docker
 * engine: about 15, 10 and 20 minutes).
 */
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { chronologicalCacheBenchmark } from './chronological-cache.js';
import { collectFilterBenchmark } from './collect-filter.js';
import { decideWorkloadsBenchmark } from './decide-workloads.js';
import { gitCollectBenchmark } from './git-collect.js';
import { measureEnginesBenchmark } from './measure-engines.js';
import { selectionBenchmark } from './selection.js';
import { startupBenchmark } from './startup.js';
import { ensureBuilt } from '../helpers/build.js';
import { slurmCoordinatorBenchmark } from './slurm-coordinator.js';
import { indexBuildBenchmark } from './index-build.js';

const OUT_DIR = fileURLToPath(new URL('../../bench/', import.meta.url));
const OUT = `${OUT_DIR}results.json`;

interface Row {
  readonly figure: string;
  readonly value: string;
  readonly target: string;
  readonly ok: boolean | null;
}

const ms = (x: number) => (x >= 10_000 ? `${(x / 1000).toFixed(1)} s` : `${Math.round(x)} ms`);
const pct = (x: number) => `${(x * 100).toFixed(1)}%`;

const BENCHES: Record<string, () => Promise<{ result: unknown; rows: Row[] }>> = {
  'collect-filter': async () => {
    const r = await collectFilterBenchmark();
    return {
      result: r,
      rows: [
        { figure: `1. collect + filter, ${r.pullRequests.toLocaleString('en-US')} PRs: wall time`, value: `${ms(r.first.ms)} (collect ${ms(r.first.collectMs)}, filter ${ms(r.first.filterMs)})`, target: '', ok: null },
        { figure: '   requests / peak memory', value: `${r.first.requests.toLocaleString('en-US')} requests, ${Math.round(r.first.peakMiB)} MiB`, target: '', ok: null },
        { figure: '   same window again: requests', value: `${r.second.requests} (${r.second.conditional} conditional, ${r.second.notModified} answered 304)`, target: 'all conditional', ok: r.second.requests === r.second.conditional },
        { figure: '   same window again: rows written', value: String(r.second.rowsWritten), target: '0', ok: r.second.rowsWritten === 0 },
        { figure: '   same window again: wall time ratio', value: `${pct(r.second.ratio)} (${ms(r.second.ms)})`, target: '<= 5%', ok: r.second.ratio <= 0.05 },
        { figure: `2. rule filter alone over ${r.filterOnly.items.toLocaleString('en-US')} stored PRs`, value: `${ms(r.filterOnly.ms)} in process, ${ms(r.filterOnly.cliMs)} through the CLI (start-up alone ${ms(r.filterOnly.startupMs)}); medians of ${r.filterOnly.rounds}`, target: '< 2 s through the CLI', ok: r.filterOnly.cliMs < 2000 },
      ],
    };
  },
  'chronological-cache': async () => {
    const r = await chronologicalCacheBenchmark();
    const line = (c: typeof r.withCache) => `${c.llmRequests} LLM requests (${c.llmConversations} conversations), ${c.builds} builds, ${c.verified}/${c.commits} verified, ${ms(c.ms)}`;
    return {
      result: r,
      rows: [
        { figure: '3. synthesize, 30 commits in 3 eras: with the script cache', value: line(r.withCache), target: '', ok: null },
        { figure: '   without the script cache', value: line(r.withoutCache), target: '', ok: null },
        { figure: '   LLM requests with / without', value: `${pct(r.llmRatio)} (time ${pct(r.timeRatio)})`, target: '<= 10%', ok: r.llmRatio <= 0.1 },
      ],
    };
  },
  'git-collect': async () => {
    const r = await gitCollectBenchmark();
    const m = r.month;
    return {
      result: r,
      rows: [
        { figure: `4. git-source collect, ${r.commits.toLocaleString('en-US')} commits (${r.pullRequests.toLocaleString('en-US')} PRs)`, value: `${ms(r.stageMs)} in process, ${ms(r.cliMs)} through the CLI (start-up alone ${ms(r.startupMs)}, over an empty window ${ms(r.stageStartupMs)}); git log --first-parent --numstat ${ms(r.gitLogMs)} (--numstat ${ms(r.gitLogAllMs)})`, target: '', ok: null },
        { figure: '   ratio to git log --first-parent --numstat', value: `${r.ratio.toFixed(2)}x in process, ${r.cliRatio.toFixed(2)}x through the CLI, ${r.cliLessStartupRatio.toFixed(2)}x through the CLI less its start-up, ${r.cliLessStageStartupRatio.toFixed(2)}x less the empty window's run`, target: '<= 2x through the CLI', ok: r.cliRatio <= 2 },
        { figure: '   floor: a bare Node program storing the same PRs and diffs in SQLite', value: `${ms(r.floorMs)}: ${r.floorRatio.toFixed(2)}x (test/bench/git-collect-floor.mjs: one git log -p, no ledger, branch dates, asv configs or CLI)`, target: '', ok: null },
        { figure: `   one month (${m.window}, ${m.pullRequests} PRs)`, value: `${ms(m.stageMs)} in process, git log ${ms(m.gitLogMs)}: ${m.ratio.toFixed(2)}x; read ${m.commitsRead ?? '?'} of ${m.commitsTotal.toLocaleString('en-US')} commits`, target: '', ok: null },
      ],
    };
  },
  measure: async () => {
    const r = await measureEnginesBenchmark();
    const line = (e: typeof r.harness) =>
      `${e.seconds.toFixed(0)} s; MDS median ${e.mds.median.toFixed(3)} [${e.mds.min.toFixed(3)}, ${e.mds.max.toFixed(3)}]; found ${Object.entries(e.found).filter(([, f]) => f).map(([s]) => `${s}x`).join(' ') || 'none'}; untouched flagged ${e.untouchedFlagged}`;
    return {
      result: r,
      rows: [
        { figure: `6. one candidate, ${r.workloads} workloads, CPU hog on every core: perfmine harness`, value: line(r.harness), target: 'MDS median <= 1.05', ok: r.harness.mds.median <= 1.05 },
        { figure: '   harness, protocol before issue 37 (batch turns, even plan, 4 h budget)', value: `${line(r.before)}; ${r.before.batches} batches`, target: '', ok: null },
        {
          figure: '   now / before: MDS median, wall time',
          value: `${r.harness.mds.median.toFixed(3)} / ${r.before.mds.median.toFixed(3)}, ${((100 * r.harness.seconds) / r.before.seconds).toFixed(0)}% of the wall time`,
          target: 'MDS not larger',
          ok: r.harness.mds.median <= r.before.mds.median,
        },
        { figure: '   harness, fixed protocol (20 rounds, no interim looks)', value: `${line(r.fixed)}; ${r.fixed.batches} batches`, target: '', ok: null },
        {
          figure: '   adaptive / fixed: batches, wall time, same decisions',
          value: `${r.harness.batches} / ${r.fixed.batches} batches (${((100 * (r.harness.batches ?? 0)) / (r.fixed.batches ?? 1)).toFixed(0)}%), ${((100 * r.harness.seconds) / r.fixed.seconds).toFixed(0)}% of the wall time, ${sameDecisions(r.harness, r.fixed) ? 'same decisions' : `decisions differ: ${JSON.stringify(r.harness.changes)} vs ${JSON.stringify(r.fixed.changes)}`}`,
          target: 'same decisions',
          ok: sameDecisions(r.harness, r.fixed),
        },
        { figure: '   asv engine protocol (4 + 3 pairs, stand-in asv)', value: line(r.asv), target: '', ok: null },
        { figure: '   wall time harness / asv protocol', value: `${(r.harness.seconds / r.asv.seconds).toFixed(2)}`, target: '< 1', ok: r.harness.seconds < r.asv.seconds },
        { figure: '   untouched workloads flagged (both engines)', value: String(r.harness.untouchedFlagged + r.asv.untouchedFlagged), target: '0', ok: r.harness.untouchedFlagged + r.asv.untouchedFlagged === 0 },
      ],
    };
  },
  selection: async () => {
    const r = await selectionBenchmark();
    return {
      result: r,
      rows: [
        {
          figure: `7. ${r.workloads} workloads, a patch to two functions${r.rounds ? `, ${r.rounds} rounds` : ''}: selection by coverage`,
          value: `${r.selected.seconds.toFixed(0)} s, ${r.selected.measured} measured, found ${r.selected.found.join(' ') || 'none'}`,
          target: `found ${r.selected.expected.join(' ')}`,
          ok: r.selected.found.join(' ') === r.selected.expected.join(' '),
        },
        { figure: '   every workload', value: `${r.all.seconds.toFixed(0)} s, ${r.all.measured} measured, found ${r.all.found.join(' ') || 'none'}`, target: '', ok: null },
        { figure: '   wall time selected / all', value: `${(100 * r.ratio).toFixed(1)}%`, target: '<= 10%', ok: r.ratio <= 0.1 },
      ],
    };
  },
  startup: async () => {
    const r = startupBenchmark();
    const rows: Row[] = r.figures.map((f, i) => ({
      figure: `${i === 0 ? `8. start-up, ${r.runs} runs each: ` : '   '}${f.name}`,
      value: `min ${ms(f.minMs)}, median ${ms(f.medianMs)}`,
      target: '',
      ok: null,
    }));
    rows.push({ figure: '   perfmine --help / node opening SQLite (medians)', value: `${r.helpRatio.toFixed(2)}x`, target: '<= 2x', ok: r.helpRatio <= 2 });
    rows.push({ figure: '   perfmine status / node opening SQLite (medians)', value: `${r.statusRatio.toFixed(2)}x`, target: '<= 2x', ok: r.statusRatio <= 2 });
    return { result: r, rows };
  },
  'slurm-coordinator': async () => {
    // job arrays (the default, 100 tasks each) over every item, then one sbatch per item over a fifth of them
    const items = Number(process.env['PERFMINE_BENCH_SLURM_ITEMS'] ?? 1000);
    const arrays = await slurmCoordinatorBenchmark(items, 100);
    const singles = await slurmCoordinatorBenchmark(Math.max(1, Math.round(items / 5)), 1);
    const rows = (r: typeof arrays, how: string): Row[] => [
      { figure: `9. Slurm coordinator, ${r.items.toLocaleString('en-US')} jobs returning prepared results, ${how}: submissions`, value: `${r.submissionsPerSecond.toFixed(1)}/s (${ms(r.submitWallMs)} submitting; ${ms(r.submitMs)} summed over the sbatch calls)`, target: '', ok: null },
      { figure: '   coordinator overhead per item (busy wall time; own CPU)', value: `${r.overheadMsPerItem.toFixed(1)} ms; ${r.cpuMsPerItem.toFixed(2)} ms CPU (polls ${ms(r.pollMs)}, ingest ${ms(r.ingestMs)})`, target: '', ok: null },
      { figure: '   all ingested / wall time', value: `${r.done}/${r.items} in ${ms(r.wallMs)}`, target: 'all', ok: r.done === r.items },
    ];
    return { result: { arrays, singles }, rows: [...rows(arrays, 'job arrays of 100'), ...rows(singles, 'one sbatch per item')] };
  },
  'index-build': async () => {
    const r = await indexBuildBenchmark();
    const line = (a: typeof r.withIndex) =>
      `synthesize ${ms(a.stageMs)} for ${a.commits} commits (${a.verified} verified, ${a.withLock} locked from the index); build step median ${ms(a.buildStepMedianMs)}`;
    return {
      result: r,
      rows: [
        { figure: "10. the demo's month through synthesize: builds through the index time machine", value: line(r.withIndex), target: '', ok: null },
        { figure: '    the sample without its dependency, no network (the demo before the index path)', value: line(r.withoutIndex), target: '', ok: null },
        { figure: '    wall time with / without', value: `${r.ratio.toFixed(2)}x`, target: '', ok: null },
      ],
    };
  },
  decide: async () => {
    const r = decideWorkloadsBenchmark(5000, 20);
    return { result: r, rows: [{ figure: `5. deciding ${r.workloads.toLocaleString('en-US')} workloads x ${r.samples} samples`, value: ms(r.ms), target: '< 1 s', ok: r.ms < 1000 }] };
  },
};

function sameDecisions(a: { readonly changes: Readonly<Record<string, string>> }, b: { readonly changes: Readonly<Record<string, string>> }): boolean {
  const names = new Set([...Object.keys(a.changes), ...Object.keys(b.changes)]);
  return [...names].every((n) => a.changes[n] === b.changes[n]);
}

const wanted = process.argv.slice(2).filter((a) => !a.startsWith('-'));
const unknown = wanted.filter((w) => !(w in BENCHES));
if (unknown.length > 0) {
  process.stderr.write(`unknown benchmark(s): ${unknown.join(', ')}; known: ${Object.keys(BENCHES).join(', ')}\n`);
  process.exit(2);
}
const names = wanted.length > 0 ? wanted : Object.keys(BENCHES);
// Benchmarks that go through the CLI time the compiled one: compile first when a source is newer.
ensureBuilt();
mkdirSync(OUT_DIR, { recursive: true });
const previous = existsSync(OUT) ? (JSON.parse(readFileSync(OUT, 'utf8')) as { results?: Record<string, unknown> }) : {};
const results: Record<string, unknown> = { ...(previous.results ?? {}) };
const rows: Row[] = [];
for (const name of names) {
  process.stderr.write(`[bench] ${name} ...\n`);
  const { result, rows: r } = await BENCHES[name]!();
  results[name] = { measuredAt: new Date().toISOString(), ...(result as object) };
  rows.push(...r);
}
writeFileSync(OUT, `${JSON.stringify({ machine: { node: process.version, cpus: (await import('node:os')).cpus().length }, results }, null, 2)}\n`);
const widths = [Math.max(...rows.map((r) => r.figure.length)), Math.max(...rows.map((r) => r.value.length))];
for (const r of rows) {
  const mark = r.ok === null ? '' : r.ok ? '  ok' : '  MISSED';
  process.stdout.write(`${r.figure.padEnd(widths[0]!)}  ${r.value.padEnd(widths[1]!)}  ${r.target}${mark}\n`);
}
process.stdout.write(`\nwrote ${OUT}\n`);
