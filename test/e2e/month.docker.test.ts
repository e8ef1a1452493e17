import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  loadBatchAccounts,
  loadInvocations,
  loadValidation,
  loadWorkloadVerdicts,
  type StoredWorkloadVerdict,
} from '../../cache/measurements.js';
import { loadPullRequest } from '../../cache/pull-requests.js';
import { openStore, type Db } from '../../cache/store.js';
import { createContext } from '../../pipeline/context.js';
import { readCredentials } from '../../pipeline/credentials.js';
import { createSampleRepo, type SampleRepo } from '../../pipeline/demo/sample-repo.js';
import { Metrics } from '../../pipeline/metrics.js';
import { runPipeline } from '../../pipeline/orchestrate.js';
import type { StageReport } from '../../pipeline/runner.js';
import { DockerService } from '../../pipeline/services/docker.js';
import type { PipelineContext } from '../../pipeline/stage.js';
import { loadPrompt } from '../../pipeline/prompts.js';
import { monthWindow } from '../../pipeline/window.js';
import { exemptWords, findLeaks, leakCheckOf } from '../../pipeline/concepts/leak-check.js';
import { classifyOutputSchema } from '../../pipeline/concepts/records/classify-output.js';
import { statementTemplateText } from '../../pipeline/concepts/leak-check.js';
import { taskRowSchema, type TaskRow } from '../../stages/emit/row.js';
import { validateConfig } from '../../stages/validate/config.js';
import { accountSumMs } from '../../stages/validate/harness/account.js';
import { ACCOUNT_SIDES, formatAccount } from '../../pipeline/concepts/measurement-account.js';
import { runCli } from '../helpers/cli.js';
import { measureWithHarness } from '../../stages/validate/measure-harness.js';
import type { PairedWorkloadVerdict } from '../../stages/validate/paired/verdict.js';
import { buildContext, readTaskFolder } from '../../tasks/replay/task-folder.js';
import { measurementSlot } from '../helpers/measure-slot.js';
import { memoryLogger, tempDir, testConfig, testLabel } from '../synthesize/harness.js';
import { dockerWorkers, environmentOf } from '../validate/harness-docker/suite-image.js';

/**
 * Issue 7's must-show, on the real Docker engine with validate's default engine (perfmine's own
 * harness: no asv anywhere, the plain base image): the sample repository
 * (pipeline/demo/sample-repo.ts) through every stage, for four of its pull requests (`prs`, as
 * `perfmine run --pr` names them): the docs change (#102) and the version bump (#106), which filter
 * drops, and two candidates, both emitted: #101 (fib, about 1000x) and #107 (is_prime, about 2x).
 * The emitted task folder of #101 rebuilds with `docker build` on the same base image (cloning over
 * HTTP, as a consumer clones from GitHub) and the speedup is measured again, with the harness, in
 * the rebuilt image with the expert patch applied.
 *
 * The month's other four candidates (the placebo #103, #104 whose speedup changes a return value,
 * the slowdown #105 with its regression recorded per workload, #108's 1.3x) are measured by
 * test/e2e/run-cli.docker.test.ts, which runs the demo's whole month through the CLI with a short
 * protocol, in a measurement slot it shares. Here the slot is exclusive, and each candidate costs
 * it: all six took 1,692 s of a CI run; #101, #105 and #107 took 98 s here on a quiet machine, 33 s
 * of them #105's, whose slower side makes its rounds the longest (so it moved to run-cli).
 *
 * The harness's protocol is the default one (what `perfmine demo` runs) but for its length: base,
 * expert and a second base for calibration as warm workers in three containers per candidate, a
 * fresh worker process per round, 6 rounds and no look before the last instead of 20 with looks
 * at 6, 10 and 15. The controls that normalize each pair keep every candidate measuring to its
 * last round; #107's two workloads settled at the look at 6 in a CI run of 10 rounds (p about
 * 1e-6, faster in 6 of 6). No other suite measures meanwhile (an exclusive measurement slot,
 * test/helpers/measure-slot.ts). This is a shared 2-core machine: the assertions are what the
 * protocol guarantees (improved or not for effects far from the minimum detectable speedup, no
 * untouched workload flagged), with wide margins on the effects, never exact numbers.
 * test/validate/harness-docker/power.docker.test.ts (`npm run test:power`) holds the default
 * protocol's power (1.2x). test/e2e/asv-engine.docker.test.ts (`npm run test:long`) covers the asv
 * engine the same way.
 */
const REPO = 'fixture/fastmath';
const BASE_IMAGE = 'perfmine/base:bookworm';
const label = testLabel('month');
const metrics = new Metrics();
const docker = new DockerService({ runLabel: label, metrics });
const dir = tempDir('month');
const out = join(dir, 'out');
const limits = { cpus: 1, memoryMb: 1024, pidsLimit: 256 };
const { log, lines } = memoryLogger('info');

/** The pull requests this month runs: two that filter drops, and the candidates it lets through, all measured. */
const PRS = [101, 102, 106, 107];
const MEASURED = [101, 107];
const WORKLOADS = [
  'bench_core.TimeIsPrime.time_is_prime(1000003)',
  'bench_core.TimeIsPrime.time_is_prime(100003)',
  'bench_core.TimePrimes.time_count_primes(2000)',
  'bench_core.TimePrimes.time_count_primes(6000)',
  'bench_core.time_fib',
  'bench_core.time_sum_of_squares',
];
const IS_PRIME = WORKLOADS.filter((w) => w.includes('time_is_prime'));

measurementSlot('exclusive');

let sample: SampleRepo;
let db: Db;
let ctx: PipelineContext;
let reports: readonly StageReport[];

const key = (n: number) => `${REPO}#${n}`;
const report = (stage: string) => reports.find((r) => r.stage === stage)!;
/** The paired effect of a workload as a speedup (base / expert, > 1 when faster). */
const effect = (w: StoredWorkloadVerdict | { paired: { normalizedMedian: number | null } }) => 1 / w.paired.normalizedMedian!;
/** A workload's verdict in one line: what the paired rule saw, for the log and failure messages. */
const verdictLine = (w: {
  name: string;
  paired: Pick<
    PairedWorkloadVerdict,
    'change' | 'reason' | 'normalizedMedian' | 'mds' | 'pValue' | 'fasterPairs' | 'slowerPairs' | 'usablePairs' | 'noise'
  >;
}) =>
  `${w.name.padEnd(48)} ${w.paired.change.padEnd(12)} ${(w.paired.reason ?? '').padEnd(16)} effect ${effect(w).toPrecision(3)} MDS ${w.paired.mds?.toFixed(3)} p ${w.paired.pValue?.toPrecision(2)} faster ${w.paired.fasterPairs}/${w.paired.usablePairs} slower ${w.paired.slowerPairs} noise ${w.paired.noise?.toFixed(3)}`;
const changed = (verdicts: readonly StoredWorkloadVerdict[], change: string) =>
  verdicts.filter((w) => w.paired.change === change).map((w) => w.workload);
const verdictOf = (n: number, workload: string) => loadWorkloadVerdicts(db, key(n)).find((w) => w.workload === workload)!;

interface BatchRow {
  workload: string;
  side: string;
  number: number | null;
  samples: string;
  failure: string | null;
}
const harnessBatches = (n: number) =>
  db
    .prepare<[string], BatchRow>(
      'SELECT workload, side, number, samples, failure FROM harness_batches WHERE key = ? ORDER BY workload, side',
    )
    .all(key(n));

/** The added lines of a patch's hunks, as a fenced code block (what a statement quoting the patch would hold). */
function addedCode(patch: string): string {
  const added = patch
    .split('\n')
    .filter((l) => l.startsWith('+') && !l.startsWith('+++'))
    .map((l) => l.slice(1));
  return `\n\n\`\`\`python\n${added.join('\n')}\n\`\`\`\n`;
}

beforeAll(async () => {
  sample = createSampleRepo(join(dir, 'fastmath'), '2025-04');
  const dbPath = join(dir, 'perfmine.db');
  db = openStore(dbPath);
  const config = testConfig(dbPath, {
    out,
    llm: { mode: 'none' },
    docker: { baseImage: BASE_IMAGE, cpus: 1, memoryMb: 2048, pidsLimit: 512, concurrency: 1 },
    validate: { harness: { rounds: 6 } },
  });
  ctx = createContext({ config, credentials: readCredentials({}), db, log, metrics, services: { docker } });
  const result = await runPipeline(ctx, {
    window: monthWindow('2025-04'),
    repos: [REPO],
    prs: PRS,
    source: { kind: 'git', path: sample.path },
  });
  reports = result.reports;
  // The measured numbers, for the record (and for whoever reads a failure).
  for (const n of MEASURED) {
    const v = loadValidation(db, key(n));
    console.log(`#${n} ${v?.decision} ${v?.pairs} rounds, MDS median ${v?.mdsMedian?.toFixed(3)}, calibrated ${v?.calibrated}`);
    for (const w of loadWorkloadVerdicts(db, key(n))) {
      console.log(
        `  ${w.workload.padEnd(48)} ${w.paired.change.padEnd(10)} effect ${effect(w).toPrecision(3)} MDS ${w.paired.mds?.toFixed(3)} p ${w.paired.pValue?.toPrecision(2)} faster ${w.paired.fasterPairs}/${w.paired.usablePairs} asv ${w.asv.mark} ${w.asv.ratio?.toPrecision(3)}`,
      );
    }
  }
}, 2_400_000);

afterAll(async () => {
  db?.close();
  await docker.removeLabelled(label);
  rmSync(dir, { recursive: true, force: true });
}, 300_000);

describe('a month of the sample repository through every stage (real Docker engine, perfmine harness)', () => {
  it('runs every stage without failures; filter drops the docs and version-bump pull requests', () => {
    if (reports.some((r) => Object.keys(r.failed).length > 0)) console.log(lines.join(''));
    expect(reports.map((r) => r.stage)).toEqual(['discover', 'collect', 'filter', 'classify', 'synthesize', 'validate', 'emit']);
    for (const r of reports) expect(r.failed).toEqual({});
    expect(report('collect')).toMatchObject({ planned: 4, done: 4 });
    expect(report('filter')).toMatchObject({ done: 2, dropped: { 'no-core-files': 1, 'negative-message': 1 } });
    expect(report('synthesize')).toMatchObject({ planned: 2, done: 2 });
    expect(report('validate')).toMatchObject({ planned: 2, done: 2 });
    expect(report('validate').dropped).toEqual({});
    expect(report('emit')).toMatchObject({ planned: 2, done: 2 });
  });

  it('measures with the harness: the selected workloads of every side in every round until each is settled, calibrated, no asv invocation; records the time and the batches', () => {
    const protocolRounds = ctx.config.validate.harness.rounds;
    let batches = 0;
    for (const n of MEASURED) {
      const v = loadValidation(db, key(n))!;
      expect(v).toMatchObject({ engine: 'perfmine', calibrated: true });
      // adaptive sampling: the last round run is the look at which every workload was settled, or the protocol's last
      expect([...ctx.config.validate.harness.adaptive.looks, protocolRounds]).toContain(v.pairs);
      expect(v.protocol).toMatchObject({
        engine: 'perfmine',
        rounds: protocolRounds,
        roundsPerProcess: 1,
        samples: 5,
        mode: 'alternate',
        interleave: 'sample',
        plan: 'cost',
      });
      expect(v.protocol!['seed']).toEqual(expect.any(Number));
      expect(v.mdsMedian!).toBeGreaterThanOrEqual(1.05);
      expect(loadInvocations(db, key(n))).toEqual([]);
      // selection by coverage: the selected workloads and the controls are measured, the rest skipped, together the
      // suite; or every workload (mode all, all of them selected) where the patch reaches module-level code
      const selection = v.selection!;
      expect(['coverage', 'all']).toContain(selection.mode);
      if (selection.mode === 'all') expect([...selection.selected].sort()).toEqual(WORKLOADS);
      const measuredSet = new Set([...selection.selected, ...selection.controls]);
      expect([...measuredSet, ...selection.skipped].sort()).toEqual(WORKLOADS);
      const measured = WORKLOADS.filter((w) => measuredSet.has(w));
      // per workload and side (base, calibration, expert), the samples of each round's batch until it was settled
      const verdicts = new Map(loadWorkloadVerdicts(db, key(n)).map((w) => [w.workload, w]));
      expect([...verdicts.keys()].sort()).toEqual(measured);
      const rows = harnessBatches(n);
      expect(rows.map((r) => `${r.workload} ${r.side}`)).toEqual(
        measured.flatMap((w) => ['base', 'calibration', 'expert'].map((side) => `${w} ${side}`)),
      );
      for (const r of rows) {
        expect(r.failure, `${r.workload} ${r.side}`).toBeNull();
        expect(r.number!).toBeGreaterThan(0);
        const settled = verdicts.get(r.workload)!.paired.settled;
        // the calibration worker takes part in its first harness.calibrationRounds rounds only
        const calibrationRounds = ctx.config.validate.harness.calibrationRounds ?? protocolRounds;
        const ran = Math.min(settled?.round ?? v.pairs, r.side === 'calibration' ? calibrationRounds : protocolRounds);
        const samples = JSON.parse(r.samples) as unknown[];
        expect(samples).toHaveLength(protocolRounds);
        samples.forEach((entry, round) => {
          const batch = (
            r.side === 'calibration' && entry !== null && !Array.isArray(entry)
              ? (entry as { calibration: number[] | null }).calibration
              : entry
          ) as number[] | null;
          if (round >= ran) return expect(batch, `${r.workload} ${r.side} round ${round}`).toBeNull();
          expect(batch).toHaveLength(5);
          for (const x of batch!) expect(x).toBeGreaterThan(0);
        });
        // a warm-up batch, then per round it was measured in one one-sample batch per sample (the
        // sides take turns sample by sample, validate.harness.interleave)
        batches += 1 + ran * 5;
      }
      // every workload has its own noise, p-value and minimum detectable speedup
      for (const w of verdicts.values()) {
        expect(w.paired.usablePairs).toBe(w.paired.settled?.round ?? v.pairs);
        expect(w.paired.mds!).toBeGreaterThanOrEqual(1.05);
        expect(w.paired.noise!).toBeGreaterThan(0);
        expect(w.paired.pValue!).toBeGreaterThanOrEqual(0);
      }
    }
    expect(metrics.get('validate.batches')).toBe(batches);
    expect(metrics.get('validate.invocations')).toBe(0);
    expect(metrics.get('docker.measureMs')).toBeGreaterThan(0);
    // 2 environments and 2 expert images
    expect(metrics.get('docker.builds')).toBeGreaterThanOrEqual(4);
    expect(metrics.get('docker.buildMs')).toBeGreaterThan(0);
    expect(metrics.get('emit.tasks')).toBe(2);
  });

  it('records the account of each measurement, its parts summing to the measured time, and status prints it (issue 37)', async () => {
    for (const n of MEASURED) {
      const v = loadValidation(db, key(n))!;
      const a = v.account!;
      console.log(`#${n} ${formatAccount(a).join('\n    ')}`);
      expect(Math.abs(accountSumMs(a) - a.wallMs)).toBeLessThan(1);
      expect(Math.abs(a.wallMs - (v.protocol!['measuredMs'] as number))).toBeLessThan(100);
      expect(a.driverMs).toBeLessThan(0.05 * a.wallMs);
      for (const s of ACCOUNT_SIDES) for (const x of Object.values(a.sides[s])) expect(x).toBeGreaterThanOrEqual(0);
      // per workload and side, with the batches; they add up to the sides
      const rows = loadBatchAccounts(db, key(n));
      expect(rows.length).toBe(harnessBatches(n).length);
      for (const s of ACCOUNT_SIDES)
        expect(rows.filter((r) => r.side === s).reduce((t, r) => t + r.account!.batches, 0)).toBe(a.sides[s].batches);
    }
    const status = await runCli(['status', '--db', join(dir, 'perfmine.db'), '--stage', 'validate', '--items']);
    console.log(status.stdout); // for the record: what a user sees
    const lines = status.stdout.split('\n');
    for (const n of MEASURED) expect(lines[lines.findIndex((l) => l.includes(key(n))) + 1]).toMatch(/^ {9}measured [\d.]+ s: setup /);
  });

  it('keeps the far faster fib (#101): time_fib improved, nothing else changed, tests and snapshot pass', () => {
    expect(ctx.ledger.get('validate', key(101))).toMatchObject({ status: 'done' });
    const verdicts = loadWorkloadVerdicts(db, key(101));
    expect(verdicts.map((w) => w.workload)).toEqual(WORKLOADS);
    expect(changed(verdicts, 'improved')).toEqual(['bench_core.time_fib']);
    expect(changed(verdicts, 'worsened')).toEqual([]);
    const fib = verdictOf(101, 'bench_core.time_fib');
    expect(effect(fib)).toBeGreaterThan(20);
    expect(fib.asv.mark).toBe('-');
  });

  it('keeps the ~2x of skipping even divisors (#107): both time_is_prime workloads improved by 1.5x to 3x, nothing else changed', () => {
    expect(ctx.ledger.get('validate', key(107))).toMatchObject({ status: 'done' });
    const verdicts = loadWorkloadVerdicts(db, key(107));
    for (const name of IS_PRIME) {
      const w = verdictOf(107, name);
      expect(w.paired.change, name).toBe('improved');
      expect(effect(w), name).toBeGreaterThan(1.5);
      expect(effect(w), name).toBeLessThan(3);
    }
    // count_primes no longer calls is_prime (#105 rewrote it): nothing else is touched
    expect(changed(verdicts, 'improved')).toEqual(IS_PRIME);
    expect(changed(verdicts, 'worsened')).toEqual([]);
  });

  it('emits exactly the kept tasks (#101, #107): their tasks.jsonl rows and folders', () => {
    const rows: TaskRow[] = readFileSync(join(out, '2025-04', 'tasks.jsonl'), 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => taskRowSchema.parse(JSON.parse(l)));
    expect(rows.map((r) => r.instance_id)).toEqual(['fixture__fastmath-101', 'fixture__fastmath-107']);
    for (const row of rows) {
      const pr = loadPullRequest(db, REPO, row.pull_number)!;
      expect(row).toMatchObject({
        repo: REPO,
        base_commit: pr.baseSha,
        merge_commit: pr.mergeSha,
        patch: pr.diff,
        month: '2025-04',
        classifier: 'heuristic',
      });
      expect(row.workloads.count).toBe(6);
      // --llm none: the measured workloads, never the pull request's title, body or branch
      expect(row.problem_statement).not.toContain(pr.title);
      expect(readdirSync(join(out, '2025-04', row.instance_id)).sort()).toEqual([
        'Dockerfile',
        'docker_build.sh',
        'expert.patch',
        'instruction.md',
        'lock.json',
        'metadata.json',
        'perfmine',
        'problem_statement.md',
        'score.sh',
        'source',
        'usr',
        'workloads.json',
      ]);
    }
    const [fib, odd] = rows as [TaskRow, TaskRow];
    expect(fib.expert_speedup.improved!).toBeGreaterThan(20);
    expect(fib.problem_statement).toContain('| `bench_core.time_fib` |');
    expect(fib.problem_statement).not.toMatch(/iterativ|recursion|fast-fib/i);
    expect(odd.expert_speedup.improved!).toBeGreaterThan(1.15);
    expect(odd.problem_statement).toContain('| `bench_core.TimeIsPrime.time_is_prime` | 100003 |');
    expect(odd.problem_statement).not.toMatch(/even divisor|odd-divisors/i);
  });

  it("passes the leak check: no identifier, file name or quote of the patch's added code in any emitted statement", () => {
    const rows = readFileSync(join(out, '2025-04', 'tasks.jsonl'), 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => taskRowSchema.parse(JSON.parse(l)));
    const template = statementTemplateText(loadPrompt('problem-statement'));
    // What the check finds when a statement holds the patch's own added lines: the code itself,
    // where it has a run of added code long enough to quote (#101, #107).
    const planted: Record<number, string[]> = { 101: ['quote'], 107: ['quote'] };
    for (const row of rows) {
      const classified = classifyOutputSchema.parse(ctx.ledger.get('classify', key(row.pull_number))!.output);
      // the clone is the source: "present at the base" is read from the base commit's tree
      expect(classified.leakCheck?.basis).toBe('base-tree');
      const check = leakCheckOf(classified.leakCheck!, row.patch);
      const exempt = exemptWords(template, classified.repositoryDescription ?? '', ...row.workloads.names);
      expect(findLeaks(row.problem_statement, check, exempt)).toEqual([]);
      // and the check is live on this patch: a statement quoting its added code would be caught
      const kinds = [...new Set(findLeaks(`${row.problem_statement}${addedCode(row.patch)}`, check, exempt).map((l) => l.kind))];
      expect(kinds, `#${row.pull_number}`).toEqual(planted[row.pull_number]);
    }
    expect(rows.map((r) => r.pull_number)).toEqual([101, 107]);
  });

  it('rebuilds the emitted task from its folder on the same base image, and measures the speedup again with the harness', async () => {
    const folder = join(out, '2025-04', 'fixture__fastmath-101');
    const dockerfile = readFileSync(join(folder, 'Dockerfile'), 'utf8');
    expect(dockerfile).toContain(`FROM ${BASE_IMAGE}\n`);
    // `docker build` of the folder as it is: its own sealed history, no clone and no network
    const tag = `perfmine-test/task-fastmath-101:${process.pid}`;
    const built = await docker.buildImage({
      tag,
      context: buildContext(readTaskFolder(folder), dockerfile),
      timeoutMs: 600_000,
    });
    if (!built.ok) console.log(built.log);
    expect(built.ok).toBe(true);
    const head = await docker.run({
      image: tag,
      cmd: ['bash', '-c', 'git rev-parse HEAD; git status --porcelain; echo "$PERFMINE_PYTHON"'],
      timeoutMs: 60_000,
      limits,
    });
    const pr = loadPullRequest(db, REPO, 101)!;
    expect(head.stdout.trim().split('\n')).toEqual([pr.baseSha, 'python3.11']);

    // The expert side: expert.patch applied, the build script rerun, committed.
    const expert = await docker.run({
      image: tag,
      cmd: ['bash', '-c', 'git apply /task/expert.patch && bash /perfmine/docker_build.sh'],
      files: [{ name: 'task/expert.patch', content: readFileSync(join(folder, 'expert.patch')) }],
      workingDir: '/repo',
      timeoutMs: 300_000,
      limits,
      commit: { repo: 'perfmine-test/task-fastmath-101', tag: `${process.pid}-expert` },
    });
    expect(expert.exitCode, `${expert.stdout}\n${expert.stderr}`).toBe(0);
    const expertTag = `perfmine-test/task-fastmath-101:${process.pid}-expert`;

    // Measured as validate measures: the harness's three warm workers on the rebuilt images. The
    // shortest protocol (3 rounds): fib's thousandfold speedup needs no more (the demo's suite and
    // the score suite find it at 3 too).
    const { runner } = dockerWorkers(docker, log, { base: tag, expert: expertTag });
    const config = validateConfig.parse({ harness: { rounds: 3 } });
    const measure = async (attempt: number) => {
      const measured = await measureWithHarness(
        { ...environmentOf('fixture/fastmath#101-rebuilt', tag), python: 'python3.11' },
        'asv.conf.json',
        expertTag,
        { runner, config, log },
      );
      // no look before the protocol's last round (3): every workload measured in all of them
      expect(config.harness.adaptive.looks).toEqual([]);
      expect(measured.harness?.rounds).toBe(3);
      const workloads = measured.verdicts!.workloads;
      for (const w of workloads) console.log(`  rebuilt (${attempt}) ${verdictLine(w)}`);
      expect(workloads.map((w) => w.name).sort()).toEqual(WORKLOADS);
      const fib = workloads.find((w) => w.name === 'bench_core.time_fib')!;
      expect(fib.paired.change).toBe('improved');
      expect(effect(fib)).toBeGreaterThan(20);
      return workloads.filter((w) => w.name !== 'bench_core.time_fib' && w.paired.change !== 'unchanged');
    };
    // Nothing else the patch does not touch is flagged. The verdict bounds the chance that any
    // untouched workload of a candidate is flagged by paired.alpha (1%), so one measurement can
    // flag one by chance, as one CI run did (sum_of_squares, on a loaded machine): a flag must
    // recur in a second, independent measurement to fail the test, which then fails at most
    // alpha² of the time by chance, while a real bias (flagged every time) still fails it.
    const first = await measure(1);
    if (first.length === 0) return;
    console.log(`  rebuilt: flagged untouched workloads, measured again:\n${first.map((w) => `    ${verdictLine(w)}`).join('\n')}`);
    const again = await measure(2);
    expect(again.filter((w) => first.some((f) => f.name === w.name)).map(verdictLine)).toEqual([]);
  }, 1_800_000);
});
