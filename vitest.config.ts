import { configDefaults, defineConfig } from 'vitest/config';
import ImmediateFailures from './test/helpers/failures-reporter.js';
import MeasuringSuitesApart from './test/helpers/sequencer.js';

/** The power suite runs on its own (`npm run test:power`, vitest.power.config.ts), not in `npm test`. */
export const POWER_SUITE = 'test/validate/harness-docker/power.docker.test.ts';
/**
 * The long suites run with `npm run test:long` (vitest.long.config.ts), not in `npm test`: each
 * repeats, for one path, builds and measurements the suites of `npm test` already make (847 s in
 * a CI run, and 1,000 to 1,300 s here; the Slurm month 416 s), and with them `npm test` outgrew
 * CI's 90 minutes.
 */
export const LONG_SUITES: readonly string[] = [
  'test/e2e/asv-engine.docker.test.ts',
  'test/faults/kill-docker-stages.docker.test.ts',
  'test/executor/demo-month.slurm.test.ts',
];

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: [...configDefaults.exclude, POWER_SUITE, ...LONG_SUITES],
    // The CLI the tests spawn is the compiled one (dist/): compiled again first when a source changed.
    globalSetup: ['test/helpers/build.ts'],
    pool: 'forks',
    // A worker process runs file after file, the modules they share loaded once: 18 small suites took
    // 142 s instead of 204 s here (the import phase 40 s instead of 75 s). Suites restore what they
    // change of the process (environment variables) and spy on objects of their own only.
    isolate: false,
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Docker-backed suites share one engine; they set their own longer timeouts.
    maxWorkers: 2,
    // The suites that measure take turns (test/helpers/measure-slot.ts) in this order (test/helpers/sequencer.ts).
    sequence: { sequencer: MeasuringSuitesApart },
    // A failed file's errors are printed when it ends (test/helpers/failures-reporter.ts), so that a
    // run stopped at CI's time limit, which never prints vitest's report at the end, still says why.
    reporters: ['default', new ImmediateFailures()],
  },
});
