import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFingerprintAnswer } from '../../../stages/validate/harness/messages.js';
import { workloadFailure } from '../../../stages/validate/measure-harness.js';
import { removeSuite, ServeClient, writeSuite } from './harness-fixture.js';
import { BAD_SUITE } from './suites.js';

/**
 * Which fingerprint failures validate remembers for a base commit (issue 37), against the real
 * harness (`serve` on this host's Python): a hang past its time limit, an exception in setup and
 * a NotImplementedError are the workload's own and are remembered; a segfault or an exit of the
 * worker says nothing of the workload and is not.
 */

describe('serve: fingerprints that fail, and which of them are remembered', () => {
  let dir: string;
  let client: ServeClient;
  let id = 0;
  const fingerprint = async (benchmark: string) => {
    const line = await client.ask({ id: ++id, op: 'fingerprint', benchmark, param: 0, timeout: null });
    const { id: _id, ...answer } = readFingerprintAnswer(JSON.stringify(line));
    return answer;
  };

  beforeAll(async () => {
    dir = writeSuite(BAD_SUITE);
    client = new ServeClient(dir);
    expect(await client.next()).toMatchObject({ event: 'ready' });
  });
  afterAll(async () => {
    client.send({ id: ++id, op: 'exit' });
    await client.exit();
    removeSuite(dir);
  });

  it.each([
    ['bad.time_hang', 'timeout', true],
    ['bad.SetupRaises.time_x', 'failed', true],
    ['bad.SetupSkips.time_x', 'skipped', true],
    ['bad.time_segfault', 'crashed', false],
    ['bad.time_exit', 'crashed', false],
  ] as const)('%s: %s, remembered: %s', async (benchmark, status, remembered) => {
    const answer = await fingerprint(benchmark);
    expect(answer).toMatchObject({ ok: false, status });
    expect(!answer.ok && workloadFailure(answer.status)).toBe(remembered);
  });

  it('a workload that runs is a fingerprint, after any of them', async () => {
    expect(await fingerprint('bad.time_ok')).toMatchObject({ ok: true, opaque: false });
  });
});
