import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Docker-backed suites share one engine; they set their own longer timeouts.
    maxWorkers: 2,
  },
});
