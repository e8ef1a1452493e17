import { defineConfig } from 'vitest/config';
import LongSuitesFirst from './test/helpers/sequencer.js';

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
    // The suites that measure a month start first (test/helpers/sequencer.ts).
    sequence: { sequencer: LongSuitesFirst },
  },
});
