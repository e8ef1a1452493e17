import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { waitForLine } from './cli.js';

/**
 * The suites that measure with the harness share this machine's two cores with whatever else runs.
 * Two of them measuring at once cost each other their power (on a shared 2-core machine the month's
 * candidates had median minimum detectable speedups of 1.10-1.17 measured alone with 20 rounds,
 * 1.28-1.64 with 10 rounds and another suite measuring beside them),
 * so each takes a slot for its whole run: `exclusive` for the suites whose assertions need the
 * machine's full power (nothing else measures meanwhile), `shared` for those that assert only
 * effects far beyond any noise (they may run together, never beside an exclusive one).
 *
 * The slot is a flock(1) lock held by a child process: taken when it prints `held`, given back
 * when its stdin ends (or this process dies, which ends it too), so no test waits by sleeping.
 * Other suites (no measurement) are not slowed: they do not take a slot.
 */
const LOCK = join(tmpdir(), 'perfmine-test-measurement.lock');

/** How long a suite may wait for its slot (the longest suite that may hold it, and more). */
const WAIT_MS = 3_600_000;

export type SlotMode = 'shared' | 'exclusive';

/**
 * Registers hooks that take the measurement slot before the suite's own `beforeAll` (call this
 * first in the file) and give it back after its own `afterAll`.
 */
export function measurementSlot(mode: SlotMode): void {
  let release: (() => Promise<void>) | undefined;
  beforeAll(async () => {
    release = await takeSlot(mode);
  }, WAIT_MS);
  afterAll(async () => {
    await release?.();
  });
}

/** Takes the slot (waiting as long as it takes); resolves to the function that gives it back. */
export async function takeSlot(mode: SlotMode, lock = LOCK): Promise<() => Promise<void>> {
  const child = spawn('flock', [mode === 'exclusive' ? '-x' : '-s', lock, 'sh', '-c', 'echo held; exec cat'], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.on('close', () => resolve()));
  const failed = new Promise<never>((_, reject) => {
    child.on('error', reject);
    void exited.then(() => reject(new Error(`flock exited before it held ${lock}`)));
  });
  await Promise.race([waitForLine(child.stdout, /^held$/), failed]);
  failed.catch(() => undefined);
  return async () => {
    child.stdin.end();
    await exited;
  };
}
