import { defineConfig } from 'vitest/config';
import MeasuringSuitesApart from './test/helpers/sequencer.js';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The CLI the tests spawn is the compiled one (dist/): compiled again first when a source changed.
    globalSetup: ['test/helpers/build.ts'],
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Docker-backed suites share one engine; they set their own longer timeouts.
    maxWorkers: 2,
    // The suites that measure take turns (test/helpers/measure-slot.ts) in this order (test/helpers/sequencer.ts).
    sequence: { sequencer: MeasuringSuitesApart },
  },
});
