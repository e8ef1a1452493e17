import { configDefaults, defineConfig, mergeConfig } from 'vitest/config';
import base from './vitest.config.js';

/**
 * `npm run test:unit`: every suite that needs no Docker engine and no root. Suites that start
 * containers (or ask the engine anything) are named `*.docker.test.ts` and left out here;
 * `npm test` runs them all.
 */
export default mergeConfig(
  base,
  defineConfig({
    test: {
      exclude: [...configDefaults.exclude, 'test/**/*.docker.test.ts'],
    },
  }),
);
