import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FingerprintFailures } from '../../../cache/fingerprints.js';
import { loadValidation } from '../../../cache/measurements.js';
import { openStore, type Db } from '../../../cache/store.js';
import { configSchema } from '../../../pipeline/config/schema.js';
import { createContext } from '../../../pipeline/context.js';
import { createLogger } from '../../../pipeline/logging.js';
import { registry } from '../../../pipeline/registry.js';
import { runStage } from '../../../pipeline/runner.js';
import { createValidateStage } from '../../../stages/validate/index.js';
import { monthScope, testConfig, testContext } from '../../helpers/context.js';
import { storeCandidate } from './candidate.js';
import { FakeRunner, RICH_BENCHMARKS, type FakeScript } from './fake-runner.js';

/**
 * Fingerprints that failed at a base commit are remembered for it (issue 37): a later candidate
 * of the same base commit, in the same environment, skips those workloads without taking their
 * fingerprints again. Real SQLite (a temporary file), the validate stage as it runs, the harness
 * workers faked (fake-harness.ts): each fake base worker lists the fingerprints it was asked for.
 */

const [FAILING, TIMING_OUT, CRASHING, SKIPPING] = RICH_BENCHMARKS as [string, string, string, string];
const REMEMBERED = [FAILING, TIMING_OUT, SKIPPING].sort();

/** Every workload runs fastlib/other.py, the patch changes fastlib/core.py: nothing is selected, nothing measured. */
const harness: NonNullable<FakeScript['harness']> = {
  fingerprints: Object.fromEntries(RICH_BENCHMARKS.map((n) => [n, n === FAILING ? null : [['/repo/fastlib/other.py', 1, 5] as const]])),
  fingerprintFailures: { [TIMING_OUT]: 'timeout', [CRASHING]: 'crashed' },
  skipping: [SKIPPING],
  outlines: { '/repo/fastlib/core.py': [['def', 'group_sum', 1, 5] as const] },
  imported: ['/repo/fastlib/other.py'],
};

describe('validate: failed fingerprints remembered per base commit', () => {
  let dir: string;
  let db: Db;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'perfmine-fp-failures-'));
    db = openStore(join(dir, 'perfmine.db'));
  });
  afterEach(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Validates the candidate `number` (stored if new) with a fresh fake runner; the fingerprints its base worker took. */
  async function validate(
    number: number,
    script: FakeScript = { harness },
    options: { baseSha?: string; batchTimeoutSeconds?: number } = {},
  ) {
    const { key } = storeCandidate(db, { number, ...(options.baseSha ? { baseSha: options.baseSha } : {}) });
    const fake = new FakeRunner(script);
    const timeout = options.batchTimeoutSeconds === undefined ? {} : { batchTimeoutSeconds: options.batchTimeoutSeconds };
    const ctx = testContext(db, { config: testConfig({ validate: { harness: { seed: 7, ...timeout } } }) });
    await runStage(
      ctx,
      createValidateStage(() => fake),
      monthScope('2025-04', { prs: [number] }),
    );
    const bases = fake.workers.filter((w) => w.side === 'base');
    expect(bases).toHaveLength(1);
    return { key, row: ctx.ledger.get('validate', key)!, taken: [...bases[0]!.fingerprinted].sort() };
  }

  const stored = () =>
    db.prepare('SELECT workload, status, timeout_s FROM fingerprint_failures ORDER BY workload').all() as {
      workload: string;
      status: string;
      timeout_s: number;
    }[];

  it('stores a failure, a timeout and a skip (not a crash) and reuses them at the next candidate of the base commit, without taking them again', async () => {
    const first = await validate(101);
    expect(first.taken).toEqual([...RICH_BENCHMARKS].sort());
    expect(stored()).toEqual(
      [
        { workload: FAILING, status: 'failed', timeout_s: 60 },
        { workload: TIMING_OUT, status: 'timeout', timeout_s: 60 },
        { workload: SKIPPING, status: 'skipped', timeout_s: 60 },
      ].sort((a, b) => a.workload.localeCompare(b.workload)),
    );
    expect(first.row.detail).toMatch(
      /fingerprints: 32 taken \(3 of them failed, remembered for the base commit\), 0 reused from the store \(0 recorded before, 0 failures not taken again\)/,
    );

    const second = await validate(102);
    // the 28 that succeeded are reused as before; of the four that did not, only the crash is taken again
    expect(second.taken).toEqual([CRASHING]);
    expect(second.row.detail).toMatch(/fingerprints: 1 taken, 31 reused from the store \(28 recorded before, 3 failures not taken again\)/);
    // the same decision and the same selection as when they were taken
    expect(second.row).toMatchObject({ status: first.row.status, reason: first.row.reason });
    const skipped = (key: string) => [...loadValidation(db, key)!.selection!.skipped].sort();
    expect(skipped(second.key)).toEqual(skipped(first.key));
    expect(skipped(second.key)).toEqual(expect.arrayContaining(REMEMBERED));
    expect(stored().map((r) => r.workload)).toEqual(REMEMBERED);
  });

  it('the saving, counted: the second candidate of a base commit takes 1 fingerprint instead of 4 (a runner that cannot identify the image remembers nothing)', async () => {
    await validate(101, { harness, identity: null });
    expect(stored()).toEqual([]);
    const without = await validate(102, { harness, identity: null });
    expect(without.taken).toEqual([FAILING, TIMING_OUT, CRASHING, SKIPPING].sort());
    expect(without.row.detail).toMatch(/fingerprints: 4 taken, 28 reused/);
    await validate(103);
    const withMemory = await validate(104);
    expect(withMemory.taken).toEqual([CRASHING]);
  });

  it('takes a timed-out fingerprint again only under a larger time limit', async () => {
    await validate(101, { harness }, { batchTimeoutSeconds: 30 });
    expect(stored().find((r) => r.workload === TIMING_OUT)).toMatchObject({ status: 'timeout', timeout_s: 30 });
    // the same limit, then a smaller one: not taken again
    expect((await validate(102, { harness }, { batchTimeoutSeconds: 30 })).taken).toEqual([CRASHING]);
    expect((await validate(103, { harness }, { batchTimeoutSeconds: 10 })).taken).toEqual([CRASHING]);
    // a larger one: the timeout is taken again (and remembered under it), the failures are not
    expect((await validate(104, { harness }, { batchTimeoutSeconds: 120 })).taken).toEqual([TIMING_OUT, CRASHING].sort());
    expect(stored().find((r) => r.workload === TIMING_OUT)).toMatchObject({ status: 'timeout', timeout_s: 120 });
    expect((await validate(105, { harness }, { batchTimeoutSeconds: 120 })).taken).toEqual([CRASHING]);
  });

  it('forgets a timeout that a larger limit lets finish', async () => {
    await validate(101, { harness }, { batchTimeoutSeconds: 30 });
    const finishes = { ...harness, fingerprintFailures: { [CRASHING]: 'crashed' as const } };
    expect((await validate(102, { harness: finishes }, { batchTimeoutSeconds: 120 })).taken).toEqual([TIMING_OUT, CRASHING].sort());
    expect(stored().map((r) => r.workload)).toEqual([FAILING, SKIPPING].sort());
    // from then on it is a fingerprint like the others
    expect((await validate(103, { harness: finishes }, { batchTimeoutSeconds: 30 })).taken).toEqual([CRASHING]);
  });

  it('takes them again at another base commit, and in another environment (the base image built again)', async () => {
    await validate(101);
    const elsewhere = await validate(102, { harness }, { baseSha: 'f'.repeat(40) });
    // no fingerprint of the other commit is reused (git cannot tell what changed), no failure either
    expect(elsewhere.taken).toEqual([...RICH_BENCHMARKS].sort());
    const rebuilt = await validate(103, { harness, identity: 'fake:the base image built again' });
    expect(rebuilt.taken).toEqual([FAILING, TIMING_OUT, CRASHING, SKIPPING].sort());
    expect(rebuilt.row.detail).toMatch(/fingerprints: 4 taken \(3 of them failed, remembered for the base commit\), 28 reused/);
    // each environment's failures are its own
    expect(db.prepare('SELECT COUNT(DISTINCT environment) AS n FROM fingerprint_failures WHERE sha = ?').get('a'.repeat(40))).toEqual({
      n: 2,
    });
  });

  it('remembers nothing of a run stopped in the middle of the suite', async () => {
    // the run stops at the 3rd fingerprint, after the failure and the timeout were answered (and stored)
    const stoppedAt = { ...harness, fingerprintStopsAt: 2 };
    await validate(101, { harness: stoppedAt });
    expect(stored().map((r) => r.workload)).toEqual([FAILING, TIMING_OUT].sort());
    // the crash and what came after were never answered: taken at the next candidate
    const next = await validate(102);
    expect(next.taken).toEqual(RICH_BENCHMARKS.slice(2).sort());
  });
});

describe('the store of failed fingerprints', () => {
  it('upserts: one row per commit, environment and workload, the latest answer kept', () => {
    const db = openStore(':memory:');
    const failures = new FingerprintFailures(db);
    const f = { workload: 'w', status: 'timeout' as const, message: 'killed after 60 s', timeoutSeconds: 60, ms: 61_000 };
    failures.save('o/a', 's', 'env1', f);
    failures.save('o/a', 's', 'env1', { ...f, timeoutSeconds: 120, message: 'killed after 120 s', ms: 121_000 });
    failures.save('o/a', 's', 'env2', { ...f, status: 'failed', message: 'x'.repeat(5000) });
    expect([...failures.at('o/a', 's', 'env1').values()]).toEqual([
      { ...f, timeoutSeconds: 120, message: 'killed after 120 s', ms: 121_000 },
    ]);
    expect(failures.at('o/a', 's', 'env2').get('w')!.message).toHaveLength(2000);
    expect(failures.at('o/a', 'other', 'env1').size).toBe(0);
    failures.forget('o/a', 's', 'env1', 'w');
    expect(failures.at('o/a', 's', 'env1').size).toBe(0);
    expect(failures.at('o/a', 's', 'env2').size).toBe(1);
    expect(() => db.prepare("INSERT INTO fingerprint_failures VALUES ('o/a', 's', 'e', 'w', 'crashed', '', NULL, NULL, '')").run()).toThrow(
      /CHECK/,
    );
    db.close();
  });

  it("travels with a validate item to a Slurm node and back (the item's store slice)", () => {
    const db = openStore(':memory:');
    new FingerprintFailures(db).save('o/a', 's', 'e', { workload: 'w', status: 'failed', message: 'm', timeoutSeconds: 60, ms: 1 });
    new FingerprintFailures(db).save('o/b', 's', 'e', { workload: 'w', status: 'failed', message: 'm', timeoutSeconds: 60, ms: 1 });
    const config = configSchema.parse({ logLevel: 'silent' });
    const credentials = { githubTokens: [], openaiApiKey: undefined, googleApplicationCredentials: undefined, bigqueryProject: undefined };
    const ctx = createContext({ config, credentials, db, log: createLogger({ level: 'silent', format: 'json' }) });
    const payload = registry.validate.remote!.payload(
      { ...ctx, stage: 'validate', key: 'o/a#7' },
      { key: 'o/a#7', input: { classify: { repo: 'o/a', number: 7 }, synthesize: {}, prContentHash: 'h', settings: {} } },
    ) as { seed: Record<string, { repo: string }[]> };
    expect(payload.seed['fingerprint_failures']!.map((r) => r.repo)).toEqual(['o/a']);
    db.close();
  });
});
