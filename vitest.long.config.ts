import { configDefaults, defineConfig } from 'vitest/config';
import base, { LONG_SUITES } from './vitest.config.js';

/**
 * `npm run test:long`: the suites too long for `npm test` within CI's 90 minutes, two at a time as
 * in `npm test` (asv-engine 847 s in a CI run; kill-docker 1,000 to 1,300 s here beside another
 * suite measuring; the Slurm month 416 s in a CI run):
 * - test/e2e/asv-engine.docker.test.ts: the asv engine (`validate.engine: asv`) through every
 *   stage with the stand-in asv image, every asv invocation a fresh container (14 per candidate
 *   with its protocol); `npm test` covers its parts (the asv runner in Docker, asv's result
 *   formats against the reference, the asv verdict);
 * - test/faults/kill-docker-stages.docker.test.ts: SIGKILL at seeded points of synthesize,
 *   validate (in the middle of a measurement) and emit, each stage run again to the reference's
 *   decisions; `npm test` kills synthesize in test/e2e/run-cli.docker.test.ts, and collect and
 *   classify in test/faults/kill-*.test.ts (validate and emit are killed only here).
 * - test/executor/demo-month.slurm.test.ts: the demo's kept candidate (#101) through every stage
 *   with `executor: slurm` on the local cluster, each item's decision checked against a local
 *   run's; `npm test` covers the executor on the same cluster in
 *   test/executor/slurm-cluster.slurm.test.ts (jobs cancelled, killed by their time limit or with
 *   unusable results, a killed coordinator, a hard stop) and the stages' local decisions in
 *   test/cli/run-pr.test.ts.
 * Run them before merging a change to validate's engines, to the Docker adapter, to the stage
 * runner's recovery or to the Slurm executor.
 */
export default defineConfig({
  ...base,
  test: { ...base.test, include: [...LONG_SUITES], exclude: [...configDefaults.exclude] },
});
