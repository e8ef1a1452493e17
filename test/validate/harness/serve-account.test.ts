import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readBatchAnswer } from '../../../stages/validate/harness/messages.js';
import { removeSuite, ServeClient, writeSuite, type Line } from './harness-fixture.js';
import { CONFIG } from './suites.js';

/**
 * The harness's account of a batch (`serve`, issue 37) with the host's python3: where a batch's
 * time went inside the worker, setup (asv's setup, teardown, setup_cache), warm-up and samples,
 * on a monotonic clock read around what the worker runs anyway. A benchmark whose setup burns
 * 20 ms of CPU shows it in every setup asv runs (before each sample), one without does not.
 */

const SUITE = `import time


def burn(seconds):
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


class SlowSetup:
    def setup(self):
        burn(0.02)

    def time_x(self):
        burn(0.001)


class QuickSetup:
    def setup(self):
        pass

    def time_x(self):
        burn(0.001)


class Cached:
    def setup_cache(self):
        burn(0.05)
        return 3

    def time_x(self, n):
        burn(0.001)


class Skips:
    def setup(self):
        burn(0.02)
        raise NotImplementedError("not here")

    def time_x(self):
        pass


def track_value():
    burn(0.01)
    return 7
`;

let dir: string;
let client: ServeClient;
let ready: Line;
let id = 0;
const batch = (benchmark: string, fields: Record<string, unknown> = {}) => client.batch(++id, benchmark, fields);

beforeAll(async () => {
  dir = writeSuite({ 'asv.conf.json': CONFIG, 'benchmarks/__init__.py': '', 'benchmarks/acct.py': SUITE });
  client = new ServeClient(dir);
  ready = await client.next();
});

afterAll(async () => {
  client.proc.stdin.end(); // EOF: the harness exits
  await client.exit();
  removeSuite(dir);
});

interface Account {
  setup: number;
  warmup: number;
  samples: number;
}

function accountOf(answer: Line): Account {
  const a = answer['account'] as Account;
  expect(a).toEqual({ setup: expect.any(Number), warmup: expect.any(Number), samples: expect.any(Number) });
  for (const part of Object.values(a)) expect(part).toBeGreaterThanOrEqual(0);
  // the driver reads it
  expect(readBatchAnswer(JSON.stringify(answer)).account).toEqual(a);
  return a;
}

describe("serve's account of a batch", () => {
  it("gives the suite's import time with ready", () => {
    expect(ready).toMatchObject({ event: 'ready', import_seconds: expect.any(Number) });
    expect(ready['import_seconds']).toBeGreaterThan(0);
  });

  it("counts every setup asv runs (before each sample) as setup, the warm-up and the samples apart, all within the batch's time", async () => {
    const slow = await batch('acct.SlowSetup.time_x', { samples: 5, number: 2, warmup: 0.05, clock: 'wall' });
    expect(slow).toMatchObject({ ok: true, kind: 'time' });
    const a = accountOf(slow);
    // the first setup and one before each later sample: 5 x 20 ms at least (and one more per warm-up call)
    expect(a.setup).toBeGreaterThanOrEqual(5 * 0.02 * 0.95);
    expect(a.warmup).toBeGreaterThanOrEqual(0.05);
    // the samples: at least what they timed (2 calls each), not the setups between them
    const timed = (slow['samples'] as number[]).reduce((x, y) => x + y, 0) * 2;
    expect(a.samples).toBeGreaterThanOrEqual(timed);
    expect(a.samples).toBeLessThan(timed + 0.1); // the timeit loops' own time (and a preemption on a busy machine)
    expect(a.setup + a.warmup + a.samples).toBeLessThanOrEqual(slow['elapsed'] as number);

    const quick = accountOf(await batch('acct.QuickSetup.time_x', { samples: 5, number: 2, warmup: 0.05, clock: 'wall' }));
    expect(quick.setup).toBeLessThan(0.05);
    expect(a.setup).toBeGreaterThan(quick.setup + 0.05);
  });

  it("counts number's calibration with the warm-up", async () => {
    const calibrated = await batch('acct.QuickSetup.time_x', { samples: 1, number: 0, warmup: null, sample_time: 0.01 });
    const a = accountOf(calibrated);
    expect(a.warmup).toBeGreaterThan(0.005);
    expect(a.setup + a.warmup + a.samples).toBeLessThanOrEqual(calibrated['elapsed'] as number);
  });

  it('counts setup_cache as setup in the batch that runs it, and not in the next', async () => {
    const first = accountOf(await batch('acct.Cached.time_x', { samples: 2, number: 1, warmup: 0 }));
    const second = accountOf(await batch('acct.Cached.time_x', { samples: 2, number: 1, warmup: 0 }));
    expect(first.setup).toBeGreaterThanOrEqual(0.05);
    expect(second.setup).toBeLessThan(0.04);
  });

  it("counts a track benchmark's call as its sample, and a skip's setup as setup", async () => {
    const track = await batch('acct.track_value');
    expect(track).toMatchObject({ ok: true, kind: 'track', value: 7 });
    expect(accountOf(track).samples).toBeGreaterThanOrEqual(0.01);
    const skipped = await batch('acct.Skips.time_x', { samples: 2, number: 1, warmup: 0 });
    expect(skipped).toMatchObject({ ok: false, status: 'skipped' });
    expect(accountOf(skipped)).toMatchObject({ warmup: 0, samples: 0 });
    expect(accountOf(skipped).setup).toBeGreaterThanOrEqual(0.02 * 0.95);
  });

  it("gives a fresh worker's import time with the restart", async () => {
    const restarted = await client.ask({ id: ++id, op: 'restart' });
    expect(restarted).toMatchObject({ ok: true, import_seconds: expect.any(Number) });
  });
});
