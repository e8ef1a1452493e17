import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from './harness.js';
import { takeSlot } from './measure-slot.js';

/** Whether the lock could be taken in this mode right now (flock -n: never waits). */
const free = (lock: string, mode: '-s' | '-x') => spawnSync('flock', ['-n', mode, lock, 'true']).status === 0;

describe('the measurement slot of the suites that measure', () => {
  it('lets shared holders in together, keeps an exclusive one out until the last has given it back', async () => {
    const lock = join(tempDir(), 'slot.lock');
    const a = await takeSlot('shared', lock);
    const b = await takeSlot('shared', lock);
    expect(free(lock, '-s')).toBe(true);
    expect(free(lock, '-x')).toBe(false);
    await a();
    expect(free(lock, '-x')).toBe(false);
    await b();
    expect(free(lock, '-x')).toBe(true);
  });

  it('an exclusive holder keeps shared ones out; a waiter gets the slot once it is given back', async () => {
    const lock = join(tempDir(), 'slot.lock');
    const x = await takeSlot('exclusive', lock);
    expect(free(lock, '-s')).toBe(false);
    let got = false;
    const waiting = takeSlot('shared', lock).then((release) => {
      got = true;
      return release;
    });
    // still out: the exclusive holder has not given it back (checked without waiting on time)
    expect(free(lock, '-s')).toBe(false);
    expect(got).toBe(false);
    await x();
    const release = await waiting;
    expect(got).toBe(true);
    expect(free(lock, '-x')).toBe(false);
    await release();
    expect(free(lock, '-x')).toBe(true);
  });
});
