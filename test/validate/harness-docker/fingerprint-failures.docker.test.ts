import { afterAll, describe, expect, it } from 'vitest';
import { FingerprintCache } from '../../../cache/fingerprints.js';
import { openStore } from '../../../cache/store.js';
import type { SynthesizeOutput } from '../../../pipeline/concepts/records/synthesize-output.js';
import { DockerService } from '../../../pipeline/services/docker.js';
import { measureWithHarness } from '../../../stages/validate/measure-harness.js';
import { testConfig } from '../../helpers/context.js';
import { memoryLogger, testLabel } from '../../synthesize/harness.js';
import { dockerWorkers, environmentOf, suiteImage } from './suite-image.js';

/**
 * Fingerprints that fail at a base commit, remembered for it (issue 37), with validate's real
 * Docker runner and the real harness: a suite whose workloads raise, skip or hang past their time
 * limit, and a patch to a function none of them runs (so only the base worker starts, to
 * fingerprint). A second candidate of the commit takes no fingerprint again; the base image built
 * again takes the failures again. (A crash is never remembered: fingerprint-failure-kinds.test.ts,
 * where the harness runs on this host; here it would be selected, and measured.)
 */
const label = testLabel('harness-fp-failures');
const docker = new DockerService({ runLabel: label });
const { log } = memoryLogger();

const CORE = `def used(n):
    t = 0
    for i in range(n):
        t += i % 7
    return t


def unused(n):
    return n + 1
`;

const BENCH = `import time
from pkg.core import used

def time_ok():
    used(1000)

def time_ok_too():
    used(10)

def time_raises():
    1 / 0

class Skips:
    def setup(self):
        raise NotImplementedError("not here")
    def time_x(self):
        used(1)

def time_hang():
    while True:
        time.sleep(0.01)

time_hang.timeout = 2
`;

const FILES = {
  'asv.conf.json': '{"version": 1, "benchmark_dir": "benchmarks"}',
  'pkg/__init__.py': '',
  'pkg/core.py': CORE,
  'benchmarks/__init__.py': '',
  'benchmarks/bench.py': BENCH,
};

/** A patch to unused(), which no workload runs. */
const PATCH = `diff --git a/pkg/core.py b/pkg/core.py
--- a/pkg/core.py
+++ b/pkg/core.py
@@ -8,2 +8,2 @@ def used(n):
 def unused(n):
-    return n + 1
+    return n + 2
`;

afterAll(async () => {
  await docker.removeLabelled(label);
}, 120_000);

describe('failed fingerprints remembered per base commit, in real containers', () => {
  it('a second candidate of the base commit takes none again; the image built again takes the failures again', async () => {
    const tag = `perfmine/test-fp-failures:${label}`;
    await suiteImage(docker, tag, FILES);
    const db = openStore(':memory:');
    const fingerprints = new FingerprintCache(db);
    const config = testConfig({ validate: { harness: { seed: 3 } } }).validate;
    const synthesized = { repo: 'fixture/suite', sha: 'a'.repeat(40), commitDate: '2025-01-01T00:00:00Z' } as SynthesizeOutput;
    const env = { ...environmentOf('fixture/suite#1', tag), synthesized };
    const { runner } = dockerWorkers(docker, log, { base: tag, expert: tag });
    const candidate = async () => {
      const started = Date.now();
      const m = await measureWithHarness(
        env,
        'asv.conf.json',
        tag,
        { runner, config, log, fingerprints },
        { patch: PATCH, benchmarkDir: 'benchmarks' },
      );
      expect(m.evidence.nothingSelected).toMatch(/no workload can be faster/);
      return { account: m.fingerprints!, skipped: [...m.selection!.skipped].sort(), ms: Date.now() - started };
    };
    const failing = ['bench.Skips.time_x', 'bench.time_hang', 'bench.time_raises'];

    const first = await candidate();
    expect(first.account).toMatchObject({ taken: 5, reused: 0, reusedFailures: 0, failuresRecorded: 3 });
    expect(first.skipped).toEqual(expect.arrayContaining(failing));
    const rows = db.prepare('SELECT workload, status, timeout_s FROM fingerprint_failures ORDER BY workload').all();
    expect(rows).toEqual([
      { workload: 'bench.Skips.time_x', status: 'skipped', timeout_s: 60 },
      { workload: 'bench.time_hang', status: 'timeout', timeout_s: 2 },
      { workload: 'bench.time_raises', status: 'failed', timeout_s: 60 },
    ]);

    const second = await candidate();
    // the two that ran are reused as fingerprints (as before issue 37), the three failures are not taken again
    expect(second.account).toMatchObject({ taken: 0, reused: 2, reusedFailures: 3, failuresRecorded: 0 });
    expect(second.skipped).toEqual(first.skipped);

    // the base image built again (another id under the same tag): its failures are taken again
    const before = (await docker.inspectImage(tag))!.id;
    await suiteImage(docker, tag, FILES);
    expect((await docker.inspectImage(tag))!.id).not.toBe(before);
    const rebuilt = await candidate();
    expect(rebuilt.account).toMatchObject({ taken: 3, reused: 2, reusedFailures: 0, failuresRecorded: 3 });
    expect(await runner.workerIdentity(env, `${tag}-missing`)).toBeNull();
    log.info({ first: first.ms, second: second.ms, rebuilt: rebuilt.ms }, 'fingerprint-failures: candidate times (ms)');
    console.log(
      `fingerprint-failures.docker: candidate wall times: first ${first.ms} ms, second ${second.ms} ms, image rebuilt ${rebuilt.ms} ms`,
    );
    db.close();
  }, 600_000);
});
