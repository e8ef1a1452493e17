import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadInvocations, loadValidation, loadWorkloadVerdicts } from '../../../cache/measurements.js';
import { openStore, type Db } from '../../../cache/store.js';
import { runStage } from '../../../pipeline/runner.js';
import { createValidateStage } from '../../../stages/validate/index.js';
import { validateOutputSchema } from '../../../pipeline/concepts/records/validate-output.js';
import { monthScope, testConfig, testContext } from '../../helpers/context.js';
import { FAILING_JUNIT, FakeRunner, PASSING_JUNIT, RICH_BENCHMARKS, UNCOLLECTABLE_JUNIT, type FakeScript } from './fake-runner.js';
import { BUILD_SCRIPT, storeCandidate } from './candidate.js';

/**
 * The validate stage's orchestration with the container seam replaced by a runner that serves the
 * real rich #3399 r4x4 invocations (the noisy negative control), with planted speedups where a
 * test needs one. Everything else is real: the schedule, the framed-output reading, the asv
 * parser, both verdicts, the decision, the ledger and the measurements tables.
 */

const SPED_UP = new Set([
  'benchmarks.TextSuite.time_divide_unicode_heavy',
  'benchmarks.PrettySuite.time_pretty',
  'benchmarks.TableSuite.time_table_no_wrapping',
]);

describe('validate stage, engine asv (container seam faked with real asv results)', () => {
  let db: Db;
  beforeEach(() => {
    db = openStore(':memory:');
  });
  afterEach(() => db.close());

  async function validate(script: FakeScript, config: Parameters<typeof testConfig>[0] = {}) {
    const { key, pr } = storeCandidate(db);
    const fake = new FakeRunner(script);
    const ctx = testContext(db, { config: testConfig({ ...config, validate: { engine: 'asv', ...config.validate } }) });
    const report = await runStage(
      ctx,
      createValidateStage(() => fake),
      monthScope('2025-04'),
    );
    const row = ctx.ledger.get('validate', key)!;
    return { key, pr, fake, report, row, ctx };
  }

  it('keeps a candidate with a genuine 2x speedup: A B B A schedule, every invocation stored raw, both verdicts per workload', async () => {
    const { key, fake, report, row, ctx } = await validate({ expert: { names: SPED_UP, factor: 0.5 } });
    expect(report).toMatchObject({ planned: 1, ran: 1, done: 1 });
    expect(row.status).toBe('done');
    const output = validateOutputSchema.parse(row.output);
    expect(new Set(output.improved)).toEqual(SPED_UP);
    expect(output).toMatchObject({
      decision: 'kept',
      pairs: 4,
      calibrationPairs: 3,
      workloads: 32,
      pairedWorsened: 0,
      falsePositiveRate: 0,
    });

    // A B (c c) B A (c c) A B (c c) B A; then tests and snapshot, then the expert image is released
    expect(fake.calls).toEqual([
      'build',
      'asv base 1',
      'asv expert 2',
      'asv calibration-first 3',
      'asv calibration-second 4',
      'asv expert 5',
      'asv base 6',
      'asv calibration-first 7',
      'asv calibration-second 8',
      'asv base 9',
      'asv expert 10',
      'asv calibration-first 11',
      'asv calibration-second 12',
      'asv expert 13',
      'asv base 14',
      'pytest base',
      'pytest expert',
      'snapshot record',
      'snapshot compare',
      'release perfmine/expert:acme/fastlib#101',
    ]);
    // the base image runs the 4 base invocations and both sides of the 3 calibration pairs
    expect(fake.images.filter((i) => i.startsWith('perfmine/env:'))).toHaveLength(10);
    // leftovers of a crashed run were removed once, before any item
    expect(fake.prepared).toBe(1);
    expect(fake.settings[0]).toEqual({ machine: 'perfmine', bench: null, rounds: 2, attributes: {}, cpuAffinity: null });
    // synthesize's layout and outputs: the checkout at /repo, its script and tiers, the Python it chose
    expect(fake.layouts[0]).toEqual({ repoDir: '/repo', configPath: 'asv.conf.json', resultsDir: 'results', benchmarkDir: 'benchmarks' });
    expect(fake.environments[0]).toMatchObject({
      key,
      number: 101,
      baseImage: 'perfmine/env:aaaaaaaaaaaa',
      repoDir: '/repo',
      python: 'python3.11',
      network: false,
    });
    expect(fake.environments[0]!.synthesized).toMatchObject({
      script: BUILD_SCRIPT,
      repoImageTag: 'perfmine/repo:acme__fastlib',
      asvConfigPath: 'asv.conf.json',
      importName: 'fastlib',
    });

    const invocations = loadInvocations(db, key);
    expect(invocations.map((i) => i.role)).toEqual(fake.calls.filter((c) => c.startsWith('asv ')).map((c) => c.split(' ')[1]));
    for (const i of invocations) expect(JSON.parse(i.results!)).toHaveProperty('result_columns');

    const validation = loadValidation(db, key)!;
    expect(validation).toMatchObject({
      decision: 'kept',
      pairs: 4,
      calibrationPairs: 3,
      calibrated: true,
      falsePositives: { flagged: 0, compared: 32, rate: 0 },
    });
    expect(validation.machineFactors).toHaveLength(4);
    expect(validation.asvCalibrationFlags).toBeGreaterThanOrEqual(0);

    const verdicts = loadWorkloadVerdicts(db, key);
    expect(verdicts).toHaveLength(32);
    for (const w of verdicts) {
      expect(w.paired.pairRatios).toHaveLength(4);
      expect(w.paired.threshold).toBe(validation.threshold);
      expect(w.asv.pValue).not.toBeNull();
      expect(w.paired.change).toBe(SPED_UP.has(w.workload) ? 'improved' : 'unchanged');
    }
    expect(ctx.metrics.get('validate.falsePositiveRate')).toBe(0);
    expect(ctx.metrics.get('validate.calibrationCompared')).toBe(32);
  });

  it('drops the placebo (the real rich runs, where asv flags several) as no-improvement, without running tests or snapshot', async () => {
    const { key, fake, row } = await validate({});
    expect(row).toMatchObject({ status: 'dropped', reason: 'no-improvement' });
    const output = validateOutputSchema.parse(row.output);
    expect(output.improved).toEqual([]);
    expect(output.asvImproved + output.asvWorsened).toBeGreaterThan(0);
    expect(fake.calls.some((c) => c.startsWith('pytest') || c.startsWith('snapshot'))).toBe(false);
    expect(loadWorkloadVerdicts(db, key)).toHaveLength(32);
  });

  it('drops a slowdown as no-improvement and stores its worsened workloads', async () => {
    const { key, row } = await validate({ expert: { names: SPED_UP, factor: 2 } });
    expect(row).toMatchObject({ status: 'dropped', reason: 'no-improvement' });
    const worsened = loadWorkloadVerdicts(db, key).filter((w) => w.paired.change === 'worsened');
    expect(new Set(worsened.map((w) => w.workload))).toEqual(SPED_UP);
  });

  it('drops a speedup that changes a benchmark return value as snapshot-mismatch', async () => {
    const { row } = await validate({
      expert: { names: SPED_UP, factor: 0.5 },
      snapshot: { mismatched: ['benchmarks.PrettySuite.time_pretty'] },
    });
    expect(row).toMatchObject({ status: 'dropped', reason: 'snapshot-mismatch' });
    expect(row.detail).toContain('benchmarks.PrettySuite.time_pretty: base 1, expert 2');
  });

  it('drops a speedup that breaks a test the base passes as tests-regressed', async () => {
    const { row } = await validate({ expert: { names: SPED_UP, factor: 0.5 }, tests: { base: PASSING_JUNIT, expert: FAILING_JUNIT } });
    expect(row).toMatchObject({ status: 'dropped', reason: 'tests-regressed' });
    expect(row.detail).toContain('tests.test_core::test_mean[1-2] (failed)');
  });

  it('drops a candidate whose tests cannot be collected on the base', async () => {
    const { row, fake } = await validate({ expert: { names: SPED_UP, factor: 0.5 }, tests: { base: UNCOLLECTABLE_JUNIT, expert: null } });
    expect(row).toMatchObject({ status: 'dropped', reason: 'tests-not-collected' });
    expect(fake.calls).not.toContain('pytest expert');
  });

  it('keeps the expert image under its lasting name when validate.keepExpertImages is set', async () => {
    const { fake, row } = await validate({ expert: { names: SPED_UP, factor: 0.5 } }, { validate: { keepExpertImages: true } });
    expect(fake.calls.at(-1)).toBe('keep perfmine/expert:acme/fastlib#101');
    expect(fake.calls.some((c) => c.startsWith('release'))).toBe(false);
    expect(validateOutputSchema.parse(row.output).expertImage).toBe('perfmine/expert-kept:101');
  });

  it('drops an expert whose build script fails as expert-build-failed, naming the step', async () => {
    const { row, fake } = await validate({ build: 'build-fails' });
    expect(row).toMatchObject({ status: 'dropped', reason: 'expert-build-failed' });
    expect(row.detail).toContain('the expert build failed: build/compiler-error');
    expect(fake.calls).toEqual(['build']);
  });

  it("builds the expert with the base's benchmarks, asv config and tests: the PR's changes to them are not applied, and the detail says so", async () => {
    const core =
      'diff --git a/fastlib/core.py b/fastlib/core.py\n--- a/fastlib/core.py\n+++ b/fastlib/core.py\n@@ -1,3 +1,3 @@\n-    for k in keys: out[k] += v\n+    np.add.at(out, keys, values)\n';
    const bench =
      'diff --git a/benchmarks/bench.py b/benchmarks/bench.py\n--- a/benchmarks/bench.py\n+++ b/benchmarks/bench.py\n@@ -1 +1 @@\n-N = 100000\n+N = 10\n';
    const test =
      'diff --git a/tests/test_core.py b/tests/test_core.py\n--- a/tests/test_core.py\n+++ b/tests/test_core.py\n@@ -1 +1 @@\n-assert group_sum(x) == 3\n+pass\n';
    const { key, pr } = storeCandidate(db, { diff: bench + core + test });
    const fake = new FakeRunner({ expert: { names: SPED_UP, factor: 0.5 } });
    const ctx = testContext(db, { config: testConfig({ validate: { engine: 'asv' } }) });
    await runStage(
      ctx,
      createValidateStage(() => fake),
      monthScope('2025-04'),
    );
    expect(pr.diff).toContain('benchmarks/bench.py');
    expect(fake.patches).toEqual([core]);
    const row = ctx.ledger.get('validate', key)!;
    expect(row.status).toBe('done');
    expect(row.detail).toContain(
      "the base's benchmarks, asv config and tests on both sides (not applied: benchmarks/bench.py, tests/test_core.py)",
    );

    // a PR that changes only those: nothing to build or measure
    const { key: only } = storeCandidate(db, { number: 102, diff: bench + test });
    const quiet = new FakeRunner({});
    const again = testContext(db, { config: testConfig({ validate: { engine: 'asv' } }) });
    await runStage(
      again,
      createValidateStage(() => quiet),
      monthScope('2025-04'),
    );
    expect(again.ledger.get('validate', only)).toMatchObject({ status: 'dropped', reason: 'no-improvement' });
    expect(again.ledger.get('validate', only)!.detail).toContain(
      'the patch changes only what both sides keep from the base: benchmarks/bench.py, tests/test_core.py',
    );
    expect(quiet.calls).toEqual([]);
  });

  it('drops a patch that does not apply before measuring anything', async () => {
    const { key, row, fake } = await validate({ build: 'patch-fails' });
    expect(row).toMatchObject({ status: 'dropped', reason: 'patch-does-not-apply' });
    expect(row.detail).toContain('error: patch failed');
    expect(fake.calls).toEqual(['build']);
    expect(loadInvocations(db, key)).toEqual([]);
    expect(loadValidation(db, key)).toMatchObject({ decision: 'patch-does-not-apply', pairs: 0 });
  });

  it('drops a suite that cannot be imported after the first invocation', async () => {
    const { row, fake } = await validate({ suiteNotImportable: true });
    expect(row).toMatchObject({ status: 'dropped', reason: 'suite-not-importable' });
    expect(row.detail).toContain('Failed to build the project and import the benchmark suite');
    expect(fake.calls.filter((c) => c.startsWith('asv'))).toEqual(['asv base 1']);
  });

  it('stops scheduling pairs at the time budget and says the measurement is incomplete', async () => {
    const { key, row } = await validate(
      { expert: { names: SPED_UP, factor: 0.5 }, invocationMs: 1000_000 },
      { validate: { timeBudgetSeconds: 5000 } },
    );
    expect(row).toMatchObject({ status: 'dropped', reason: 'measurement-incomplete' });
    const invocations = loadInvocations(db, key);
    expect(invocations.filter((i) => i.status === 'ok')).toHaveLength(4);
    expect(invocations.filter((i) => i.status === 'not-run')).toHaveLength(10);
  });

  it('passes the configured selection, rounds, attributes and affinity to asv, and allows network per repository', async () => {
    const { fake } = await validate(
      { expert: { names: SPED_UP, factor: 0.5 } },
      { validate: { bench: 'TextSuite', rounds: 3, attributes: { repeat: 5 }, cpuAffinity: '1', networkRepos: ['acme/fastlib'] } },
    );
    expect(fake.settings[0]).toEqual({ machine: 'perfmine', bench: 'TextSuite', rounds: 3, attributes: { repeat: 5 }, cpuAffinity: '1' });
    expect(fake.environments[0]).toMatchObject({ key: 'acme/fastlib#101', network: true });
  });

  it('plans only candidates whose base commit has a done synthesize item, and reuses a decided one', async () => {
    storeCandidate(db);
    storeCandidate(db, { number: 102, baseSha: 'f'.repeat(40) });
    // 102's base commit has a synthesize item, but failed
    const ctx = testContext(db);
    ctx.ledger.fail(
      'synthesize',
      1,
      { key: `acme/fastlib@${'f'.repeat(40)}`, repo: 'acme/fastlib', at: null, inputHash: 'x' },
      { kind: 'item', reason: 'no-script', message: 'x' },
      null,
    );
    const stage = createValidateStage(() => new FakeRunner({}));
    const planned = await stage.plan(ctx, monthScope('2025-04'));
    expect(planned.map((p) => p.key)).toEqual(['acme/fastlib#101']);
    const first = await runStage(ctx, stage, monthScope('2025-04'));
    const second = await runStage(ctx, stage, monthScope('2025-04'));
    expect([first.ran, second.ran, second.reused]).toEqual([1, 0, 1]);
  });

  it('refuses a configuration that could never keep a candidate', async () => {
    storeCandidate(db);
    const ctx = testContext(db, { config: testConfig({ validate: { engine: 'asv', calibrationPairs: 1 } }) });
    await expect(
      runStage(
        ctx,
        createValidateStage(() => new FakeRunner({})),
        monthScope('2025-04'),
      ),
    ).rejects.toThrow(/calibrationPairs/);
  });
});

describe('validate stage, engine perfmine (harness workers faked with real rich samples)', () => {
  let db: Db;
  beforeEach(() => {
    db = openStore(':memory:');
  });
  afterEach(() => db.close());

  async function validate(script: FakeScript, config: Parameters<typeof testConfig>[0] = {}) {
    const { key } = storeCandidate(db);
    const fake = new FakeRunner(script);
    const ctx = testContext(db, { config: testConfig({ ...config, validate: { harness: { seed: 7 }, ...config.validate } }) });
    const report = await runStage(
      ctx,
      createValidateStage(() => fake),
      monthScope('2025-04'),
    );
    return { key, fake, report, row: ctx.ledger.get('validate', key)!, ctx };
  }

  it('keeps a genuine 2x speedup: three warm workers, rounds of batches in random order, the verdict per workload with its MDS, every batch stored', async () => {
    const { key, fake, row } = await validate({ expert: { names: SPED_UP, factor: 0.5 } });
    expect(row.status).toBe('done');
    const output = validateOutputSchema.parse(row.output);
    expect(new Set(output.improved)).toEqual(SPED_UP);
    // the calibration worker measures the first 10 rounds (harness.calibrationRounds)
    expect(output).toMatchObject({ decision: 'kept', pairs: 20, calibrationPairs: 10, workloads: 32, pairedWorsened: 0 });
    expect(fake.calls).toEqual([
      'build',
      'harness base',
      'harness expert',
      'harness calibration',
      'pytest base',
      'pytest expert',
      'snapshot record',
      'snapshot compare',
      'release perfmine/expert:acme/fastlib#101',
    ]);
    // the base image runs the base and calibration workers, the expert image the expert's
    expect(fake.images.slice(0, 3)).toEqual(['perfmine/env:aaaaaaaaaaaa', 'perfmine/expert:acme/fastlib#101', 'perfmine/env:aaaaaaaaaaaa']);
    // alternating on one core: all pinned to the last of the 2 CPUs, same hash seed
    expect(fake.workerSpecs.map((s) => [s.side, s.cpuset, s.hashSeed, s.configPath])).toEqual([
      ['base', '1', '0', 'asv.conf.json'],
      ['expert', '1', '0', 'asv.conf.json'],
      ['calibration', '1', '0', 'asv.conf.json'],
    ]);
    expect(fake.workers.every((w) => w.closed)).toBe(true);
    // warm-up: the base calibrates number (0), then every batch of every side uses its number
    const [base, expert] = fake.workers;
    const first = base!.commands.filter((c) => c.benchmark === 'benchmarks.TextSuite.time_divide');
    expect(first[0]).toMatchObject({ number: 0, samples: 1, warmup: null });
    // then, round by round, the sides take turns sample by sample: five one-sample batches, the
    // first warmed up (harness.interleave: sample)
    expect(first.slice(1).every((c) => c.number === 100 && c.samples === 1)).toBe(true);
    expect(first.slice(1, 11).map((c) => c.warmup)).toEqual([0.02, 0, 0, 0, 0, 0.02, 0, 0, 0, 0]);
    expect(first).toHaveLength(1 + 20 * 5);
    expect(expert!.commands.every((c) => c.number === 100)).toBe(true);
    // a fresh worker process on every side before every round but the first (the calibration
    // worker's until its 10 rounds are done)
    expect(fake.workers.map((w) => w.restarts)).toEqual([19, 19, 9]);

    const validation = loadValidation(db, key)!;
    expect(validation).toMatchObject({
      engine: 'perfmine',
      decision: 'kept',
      pairs: 20,
      calibrated: true,
      falsePositives: { compared: 32, flagged: 0 },
    });
    expect(validation.protocol).toMatchObject({ engine: 'perfmine', rounds: 20, samples: 5, mode: 'alternate', seed: 7 });
    expect(validation.mdsMedian).toBeGreaterThan(1.0);
    const verdicts = loadWorkloadVerdicts(db, key);
    for (const w of verdicts) {
      expect(w.paired.pairRatios).toHaveLength(20);
      expect(w.paired.mds).toBeGreaterThanOrEqual(1.05);
      expect(w.paired.change).toBe(SPED_UP.has(w.workload) ? 'improved' : 'unchanged');
    }
    const batches = db.prepare('SELECT workload, side, number, samples FROM harness_batches WHERE key = ?').all(key) as {
      workload: string;
      side: string;
      number: number;
      samples: string;
    }[];
    expect(batches).toHaveLength(32 * 3);
    const settledAt = new Map(verdicts.map((w) => [w.workload, w.paired.settled?.round ?? 20]));
    for (const b of batches) {
      expect(b.number).toBe(100);
      // every round up to its settlement (adaptive sampling) holds 5 samples; none after (the
      // calibration side: none after its 10 rounds either)
      const rounds = JSON.parse(b.samples) as (number[] | null)[];
      const upTo = Math.min(settledAt.get(b.workload)!, b.side === 'calibration' ? 10 : 20);
      expect(
        rounds.slice(0, upTo).every((r) => r !== null && r.length === 5),
        b.workload,
      ).toBe(true);
      expect(
        rounds.slice(upTo).every((r) => r === null),
        b.workload,
      ).toBe(true);
    }
  });

  it('stops measuring a workload once its verdict is settled (adaptive sampling), and measures every round without looks', async () => {
    const adaptive = await validate({ expert: { names: SPED_UP, factor: 0.5 } });
    const verdicts = loadWorkloadVerdicts(db, adaptive.key);
    // the three 2x workloads are settled as changed at a look (after 6, 10 or 15 rounds: this fake's noise is rich's)
    for (const w of verdicts.filter((x) => SPED_UP.has(x.workload))) {
      expect(w.paired.settled?.as, w.workload).toBe('changed');
      expect([6, 10, 15]).toContain(w.paired.settled!.round);
    }
    expect(
      verdicts
        .filter((x) => x.paired.change === 'improved')
        .map((x) => x.workload)
        .sort(),
    ).toEqual([...SPED_UP].sort());
    const adaptiveBatches = adaptive.fake.workers.reduce((n, w) => n + w.commands.length, 0);
    db.close();
    db = openStore(':memory:');
    const fixed = await validate(
      { expert: { names: SPED_UP, factor: 0.5 } },
      { validate: { harness: { seed: 7, adaptive: { looks: [] } } } },
    );
    const fixedBatches = fixed.fake.workers.reduce((n, w) => n + w.commands.length, 0);
    // per workload: the warm-up pass's 3 batches, 20 rounds of 5 turns of base and expert, 10 of the calibration's
    expect(fixedBatches).toBe(32 * (3 + 20 * 5 * 2 + 10 * 5));
    expect(adaptiveBatches).toBeLessThan(fixedBatches);
    // the same decisions
    expect(new Set(validateOutputSchema.parse(fixed.row.output).improved)).toEqual(SPED_UP);
    expect(loadWorkloadVerdicts(db, fixed.key).every((w) => w.paired.settled === null)).toBe(true);
  });

  it('drops the placebo as no-improvement, with nothing flagged', async () => {
    const { row, fake, key } = await validate({});
    expect(row).toMatchObject({ status: 'dropped', reason: 'no-improvement' });
    expect(fake.calls.some((c) => c.startsWith('pytest'))).toBe(false);
    expect(loadWorkloadVerdicts(db, key).filter((w) => w.paired.change !== 'unchanged')).toEqual([]);
  });

  it('drops a suite the base cannot import as suite-not-importable, without starting the other workers', async () => {
    const { row, fake } = await validate({
      harness: {
        fatal: { base: { reason: 'suite-not-importable', message: 'ImportError in benchmarks.bench_io: No module named requests' } },
      },
    });
    expect(row).toMatchObject({ status: 'dropped', reason: 'suite-not-importable' });
    expect(row.detail).toContain('No module named requests');
    expect(fake.calls.filter((c) => c.startsWith('harness'))).toEqual(['harness base']);
  });

  it('measures the other workloads when some fail: a timeout on the base, a crash on the expert, a missing one, a failing calibration', async () => {
    const { row, key } = await validate({
      expert: { names: SPED_UP, factor: 0.5 },
      harness: {
        failures: {
          'benchmarks.TextSuite.time_fit': { side: 'base', status: 'timeout', fromBatch: 3 },
          'benchmarks.TextSuite.time_split': { side: 'expert', status: 'crashed' },
          'benchmarks.TextSuite.time_render': { side: 'calibration', status: 'failed' },
        },
        missingOnExpert: ['benchmarks.TextSuite.time_wrapping'],
      },
    });
    expect(row.status).toBe('done');
    expect(new Set(validateOutputSchema.parse(row.output).improved)).toEqual(SPED_UP);
    const byName = new Map(loadWorkloadVerdicts(db, key).map((w) => [w.workload, w]));
    expect(byName.get('benchmarks.TextSuite.time_fit')!.paired.change).toBe('incomparable');
    expect(byName.get('benchmarks.TextSuite.time_split')!.paired).toMatchObject({ change: 'incomparable', reason: 'failed-on-expert' });
    expect(byName.get('benchmarks.TextSuite.time_wrapping')!.paired.change).toBe('incomparable');
    // without calibration of its own, a workload still gets a verdict from its pairs
    expect(byName.get('benchmarks.TextSuite.time_render')!.paired.change).toBe('unchanged');
    const failures = db
      .prepare('SELECT workload, side, failure FROM harness_batches WHERE key = ? AND failure IS NOT NULL ORDER BY workload, side')
      .all(key) as { workload: string; side: string; failure: string }[];
    expect(failures.map((f) => [f.workload, f.side, (JSON.parse(f.failure) as { status: string }).status])).toEqual([
      ['benchmarks.TextSuite.time_fit', 'base', 'timeout'],
      ['benchmarks.TextSuite.time_render', 'calibration', 'failed'],
      ['benchmarks.TextSuite.time_split', 'expert', 'crashed'],
      ['benchmarks.TextSuite.time_wrapping', 'expert', 'missing'],
    ]);
  });

  it("with several rounds per worker process, pools each process's rounds into one pair", async () => {
    const { fake, row, key } = await validate(
      { expert: { names: SPED_UP, factor: 0.5 } },
      { validate: { harness: { roundsPerProcess: 5, seed: 7 } } },
    );
    expect(row.status).toBe('done');
    // the calibration worker's 10 rounds are two processes' worth
    expect(validateOutputSchema.parse(row.output)).toMatchObject({ pairs: 4, calibrationPairs: 2 });
    expect(fake.workers.map((w) => w.restarts)).toEqual([3, 3, 1]);
    for (const w of loadWorkloadVerdicts(db, key)) expect(w.paired.pairRatios).toHaveLength(4);
    expect(loadValidation(db, key)!.protocol).toMatchObject({ rounds: 20, roundsPerProcess: 5 });
  });

  it('ends the measurement of a side whose worker cannot start again, and says so', async () => {
    const { row, key } = await validate({ expert: { names: SPED_UP, factor: 0.5 }, harness: { restartFails: { expert: 3 } } });
    // the expert's third restart (before round 4) failed: three rounds were measured
    const failures = db.prepare("SELECT failure FROM harness_batches WHERE key = ? AND side = 'expert'").all(key) as {
      failure: string | null;
    }[];
    expect(
      failures.every(
        (f) =>
          f.failure !== null && (JSON.parse(f.failure) as { status: string; message: string }).message.includes('could not start again'),
      ),
    ).toBe(true);
    expect(validateOutputSchema.parse(row.output).pairs).toBe(3);
  });

  it('measures only the workloads whose code the patch changes, and a few controls (selection by coverage)', async () => {
    // the candidate's patch changes lines 1-3 of fastlib/core.py, in group_sum
    const code = (file: string): (readonly [string, number, number])[] => [[file, 1, 5]];
    const fingerprints = Object.fromEntries(
      RICH_BENCHMARKS.map((n) => [n, SPED_UP.has(n) ? code('/repo/fastlib/core.py') : code('/repo/fastlib/other.py')]),
    );
    const harness = {
      fingerprints,
      outlines: { '/repo/fastlib/core.py': [['def', 'group_sum', 1, 5] as const] },
      imported: ['/repo/fastlib/core.py', '/repo/fastlib/other.py'],
    };
    const { key, fake, row } = await validate({ expert: { names: SPED_UP, factor: 0.5 }, harness });
    expect(row.status).toBe('done');
    expect(row.detail).toMatch(
      /measured 3 of 32 workloads and 5 controls, 24 skipped: 3 of 32 workloads run the changed code \(fastlib\/core\.py:group_sum\)/,
    );
    const selection = loadValidation(db, key)!.selection!;
    expect(selection).toMatchObject({ mode: 'coverage' });
    expect(new Set(selection.selected)).toEqual(SPED_UP);
    expect(selection.controls).toHaveLength(5);
    // only those were measured: by every worker, in every round
    const measured = new Set(fake.workers[1]!.commands.map((c) => c.benchmark));
    expect(measured).toEqual(new Set([...SPED_UP, ...selection.controls]));
    expect(
      loadWorkloadVerdicts(db, key)
        .map((w) => w.workload)
        .sort(),
    ).toEqual([...measured].sort());
    // the base worker fingerprinted every workload; the others fingerprinted nothing
    expect(fake.workers[0]!.fingerprinted.sort()).toEqual([...RICH_BENCHMARKS].sort());
    expect(fake.workers.slice(1).every((w) => w.fingerprinted.length === 0)).toBe(true);
  });

  it('keeps fingerprints per commit and reuses them at another commit for the workloads whose covered files did not change', async () => {
    const code = (file: string): (readonly [string, number, number])[] => [[file, 1, 5]];
    const fingerprints = Object.fromEntries(
      RICH_BENCHMARKS.map((n, i) => [n, code(i % 2 === 0 ? '/repo/fastlib/core.py' : '/repo/fastlib/other.py')]),
    );
    const harness = {
      fingerprints,
      outlines: { '/repo/fastlib/core.py': [['def', 'group_sum', 1, 5] as const] },
      imported: ['/repo/fastlib/core.py'],
    };
    const first = storeCandidate(db);
    const secondBase = 'f'.repeat(40);
    storeCandidate(db, { number: 102, baseSha: secondBase });
    // between the two base commits only fastlib/other.py changed
    const fake = new FakeRunner({ harness, changedSince: { [first.pr.baseSha]: ['fastlib/other.py'] } });
    const ctx = testContext(db, { config: testConfig({ validate: { harness: { seed: 7 } } }) });
    await runStage(
      ctx,
      createValidateStage(() => fake),
      monthScope('2025-04'),
    );
    const recorded = (sha: string) => db.prepare('SELECT COUNT(*) AS n FROM fingerprints WHERE sha = ?').get(sha) as { n: number };
    expect(recorded(first.pr.baseSha).n).toBe(32);
    expect(recorded(secondBase).n).toBe(32);
    // two base workers: the first candidate's fingerprinted all 32, the second's only the 16 that ran other.py
    const bases = fake.workers.filter((w) => w.side === 'base');
    const counts = bases.map((w) => w.fingerprinted.length).sort((a, b) => a - b);
    expect(counts).toEqual([16, 32]);
  });

  it("runs the tests with validate.pytestArgs and then the repository's own", async () => {
    const { fake, row } = await validate(
      { expert: { names: SPED_UP, factor: 0.5 } },
      { validate: { pytestArgs: ['-x'] }, repositories: { 'acme/fastlib': { pytestArgs: ['-o', 'addopts='] } } },
    );
    expect(row.status).toBe('done');
    expect(fake.testArgs).toEqual([
      { key: 'acme/fastlib#101', args: ['-x', '-o', 'addopts='] },
      { key: 'acme/fastlib#101', args: ['-x', '-o', 'addopts='] },
    ]);
  });

  it('keeps each fingerprint as it is taken: a run stopped in the middle of a suite resumes where it stopped', async () => {
    const code = (file: string): (readonly [string, number, number])[] => [[file, 1, 5]];
    const fingerprints = Object.fromEntries(
      RICH_BENCHMARKS.map((n) => [n, SPED_UP.has(n) ? code('/repo/fastlib/core.py') : code('/repo/fastlib/other.py')]),
    );
    const script = {
      fingerprints,
      outlines: { '/repo/fastlib/core.py': [['def', 'group_sum', 1, 5] as const] },
      imported: ['/repo/fastlib/core.py', '/repo/fastlib/other.py'],
    };
    const { key, pr } = storeCandidate(db);
    const recorded = () => (db.prepare('SELECT COUNT(*) AS n FROM fingerprints WHERE sha = ?').get(pr.baseSha) as { n: number }).n;
    const ctx = testContext(db, { config: testConfig({ validate: { harness: { seed: 7 } } }) });
    const stopped = new FakeRunner({ harness: { ...script, fingerprintStopsAt: 20 } });
    await runStage(
      ctx,
      createValidateStage(() => stopped),
      monthScope('2025-04'),
    );
    expect(ctx.ledger.get('validate', key)!.status).not.toBe('done');
    expect(recorded()).toBe(20);
    const again = new FakeRunner({ harness: script });
    await runStage(
      testContext(db, { config: testConfig({ validate: { harness: { seed: 7 } } }) }),
      createValidateStage(() => again),
      monthScope('2025-04'),
    );
    expect(again.workers.find((w) => w.side === 'base')!.fingerprinted).toHaveLength(12);
    expect(recorded()).toBe(32);
  });

  it('neither selects nor takes as controls the workloads that skip or fail at the base (networkx: a data set out of reach)', async () => {
    const skipping = RICH_BENCHMARKS.slice(0, 3);
    const failing = RICH_BENCHMARKS[3]!;
    const fingerprints = Object.fromEntries(
      RICH_BENCHMARKS.map((n) => [n, n === failing ? null : [['/repo/fastlib/other.py', 1, 5] as const]]),
    );
    const harness = {
      fingerprints,
      skipping,
      outlines: { '/repo/fastlib/core.py': [['def', 'group_sum', 1, 5] as const] },
      imported: ['/repo/fastlib/other.py'],
    };
    const { key, row, fake } = await validate({ harness });
    expect(row).toMatchObject({ status: 'dropped', reason: 'no-improvement' });
    expect(row.detail).toMatch(/changes no code any workload runs/);
    expect(row.detail).toMatch(/4 workloads skip or fail at the base/);
    // nothing measured: the skipping workloads were not taken for changed code they might run
    expect(fake.workers).toHaveLength(1);
    const selection = loadValidation(db, key)!.selection!;
    expect(selection.selected).toEqual([]);
    expect(selection.controls.filter((c) => skipping.includes(c))).toEqual([]);
    expect(selection.skipped).toEqual(expect.arrayContaining([...skipping, failing]));
  });

  it('drops as no-improvement a patch that changes no code any workload runs, measuring nothing', async () => {
    const fingerprints = Object.fromEntries(RICH_BENCHMARKS.map((n) => [n, [['/repo/fastlib/other.py', 1, 5] as const]]));
    const harness = {
      fingerprints,
      outlines: { '/repo/fastlib/core.py': [['def', 'group_sum', 1, 5] as const] },
      imported: ['/repo/fastlib/other.py'],
    };
    const { row, fake } = await validate({ harness });
    expect(row).toMatchObject({ status: 'dropped', reason: 'no-improvement' });
    expect(row.detail).toMatch(
      /the patch changes no code any workload runs \(it changes fastlib\/core\.py:group_sum\): no workload can be faster/,
    );
    // only the base worker was started (to fingerprint), and no batch ran on any side
    expect(fake.workers).toHaveLength(1);
    expect(fake.workers.flatMap((w) => w.commands)).toEqual([]);
  });

  it('pins duet workers to two cores, base apart from the others', async () => {
    const { fake, row } = await validate({ expert: { names: SPED_UP, factor: 0.5 } }, { validate: { harness: { mode: 'duet', seed: 3 } } });
    expect(row.status).toBe('done');
    expect(fake.workerSpecs.map((s) => [s.side, s.cpuset])).toEqual([
      ['base', '0'],
      ['expert', '1'],
      ['calibration', '1'],
    ]);
    // the base ran twice a round: once beside the expert, once beside the calibration worker (in
    // its 10 rounds)
    const base = fake.workers[0]!.commands.filter((c) => c.benchmark === 'benchmarks.TextSuite.time_divide');
    expect(base).toHaveLength(1 + 2 * 10 + 10);
  });
});

it('the fake serves the real suite', () => {
  expect(RICH_BENCHMARKS).toHaveLength(32);
});
