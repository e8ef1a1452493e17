import { configDefaults, defineConfig, mergeConfig } from 'vitest/config';
import base from './vitest.config.js';

/**
 * `npm run test:unit`: every suite that needs no Docker engine, no Slurm cluster and no root.
 * Suites that start containers (or ask the engine anything) are named `*.docker.test.ts`, suites
 * that submit jobs to the local cluster of scripts/setup-slurm.sh `*.slurm.test.ts`; both are left
 * out here, and `npm test` runs them all.
 */
export default mergeConfig(
  base,
  defineConfig({
    test: {
      exclude: [...configDefaults.exclude, 'test/**/*.docker.test.ts', 'test/**/*.slurm.test.ts'],
    },
  }),
);
