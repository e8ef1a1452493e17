import { runStage } from '../../pipeline/runner.js';
import { monthWindow } from '../../pipeline/window.js';
import { filterStage } from '../../stages/filter/index.js';
import { harness } from '../helpers/harness.js';
const { ctx } = harness({ db: process.argv[2]!, config: { llm: { mode: 'none' } } });
const t0 = performance.now();
const r = await runStage(ctx, filterStage, { window: monthWindow('2025-04'), repos: [], prs: [], source: { kind: 'github' } }, { force: true });
console.log(JSON.stringify({ ms: Math.round(performance.now() - t0), ran: r.ran, done: r.done, dropped: r.dropped }));
