import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../pipeline/logging.js';
import { measureSide } from '../../../stages/validate/score/index.js';
import type { ScoreTask } from '../../../stages/validate/score/task-source.js';
import type { ValidateConfig } from '../../../stages/validate/config.js';
import type { MeasurementRunner } from '../../../stages/validate/runner-port.js';

/**
 * An agent's patch that changes only the benchmarks, the asv config or the tests is scored as the
 * unchanged repository: both sides keep the base's (as validate and the Harbor verifier do), so
 * there is nothing to build or measure, and the runner is never called.
 */
const candidate = {
  key: 'acme__fastlib-101',
  environment: {} as ScoreTask['candidate']['environment'],
  layout: { repoDir: '/repo', configPath: 'asv.conf.json', resultsDir: '.asv/results', benchmarkDir: 'benchmarks' },
} satisfies ScoreTask['candidate'];
const untouchable = new Proxy({} as MeasurementRunner, {
  get: (_t, name) => {
    throw new Error(`the runner was called: ${String(name)}`);
  },
});
const deps = {
  runner: untouchable,
  config: {} as ValidateConfig,
  log: createLogger({ level: 'debug', format: 'json', destination: { write: () => undefined } }),
};

describe('scoring a patch of benchmarks and tests alone', () => {
  it('is the empty patch, named as such, without building or measuring', async () => {
    const patch =
      'diff --git a/benchmarks/bench.py b/benchmarks/bench.py\n--- a/benchmarks/bench.py\n+++ b/benchmarks/bench.py\n@@ -1 +1 @@\n-N = 100000\n+N = 1\n' +
      'diff --git a/tests/test_core.py b/tests/test_core.py\n--- a/tests/test_core.py\n+++ b/tests/test_core.py\n@@ -1 +1 @@\n-assert f() == 3\n+pass\n';
    const side = await measureSide(candidate, patch, deps);
    expect(side).toMatchObject({ failure: 'empty-patch', workloads: [], pairs: 0 });
    expect(side.detail).toBe(
      'the patch changes only what both sides keep from the base (benchmarks, asv config, tests): benchmarks/bench.py, tests/test_core.py',
    );
  });
});
