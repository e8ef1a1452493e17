// Scratch profiler (not committed): git-source collect in process over a big history.
import { openStore } from '../../cache/store.js';
import { runStage } from '../../pipeline/runner.js';
import { collectStage } from '../../stages/collect/index.js';
import { harness } from '../helpers/harness.js';
import { rangeWindow, parseInstant } from '../../pipeline/window.js';
const path = process.argv[2]!;
const { ctx } = harness({ db: `/tmp/scratch/p-${Date.now()}.db`, config: { source: `git:${path}` } });
const scope = { window: rangeWindow(parseInstant('2000-01-01')!, parseInstant('2030-01-01')!), repos: ['local/big'], prs: [], source: { kind: 'git' as const, path } };
const t0 = performance.now();
const report = await runStage(ctx, collectStage, scope);
const t1 = performance.now();
console.log(JSON.stringify({ ms: Math.round(t1 - t0), planned: report.planned, done: report.done, dropped: report.dropped, failed: report.failed }));
void openStore;
