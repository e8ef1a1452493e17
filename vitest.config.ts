import { defineConfig } from 'vitest/config';

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
  },
});
