import { randomInt } from 'node:crypto';
import { parseBenchmarksFile, type BenchmarkInfo } from '../../pipeline/concepts/asv/benchmarks.js';
import { ItemError } from '../../pipeline/errors.js';
import type { MeasurementEvidence } from './decide.js';
import { workerCpusets } from './harness/cpus.js';
import { diffFiles } from '../../pipeline/concepts/diff-lines.js';
import type { FingerprintFailureStatus, StoredFingerprint, StoredFingerprintFailure } from '../../cache/fingerprints.js';
import { hashOf } from '../../pipeline/hash.js';
import { selectWorkloads, type Fingerprint, type Selection } from './selection.js';
import { calibratedSettings, measureInterleaved, type InterleaveSettings, type Side, type WorkloadRecord } from './harness/interleave.js';
import type { FailureStatus, ReadyMessage } from './harness/messages.js';
import { harnessCalibrationTable, harnessPairTable, harnessResultSet } from './harness/tables.js';
import { settledAtLook } from './harness/settle.js';
import { finalAlpha, verdictOfTables, type PairedReport } from './paired/index.js';
import type { FingerprintAccount, Measured, MeasureDeps } from './measured.js';
import type { CandidateEnvironment } from './runner-port.js';
import { combineVerdicts } from './two-verdicts.js';

/**
 * Validate's measurement with perfmine's own harness: base, expert and a second base as warm
 * workers in three containers of the same limits, without network, driven batch by batch in a
 * random order (harness/interleave.ts); perfmine's verdict on the rounds' pairs, asv's on the
 * pooled samples.
 */

/** The suite as asv's benchmarks.json (what the harness reported when it started). */
export function benchmarksJsonOf(start: ReadyMessage): string {
  return JSON.stringify({ ...start.benchmarks, version: 2 });
}

function measuredOn(workloads: readonly WorkloadRecord[], side: 'base' | 'expert'): number {
  return workloads.filter((w) => w[side].rounds.some((r) => r !== null)).length;
}

/** One line per kind of failure, for the decision's detail. */
function failureLines(workloads: readonly WorkloadRecord[]): string[] {
  const out: string[] = [];
  for (const side of ['base', 'expert'] as const) {
    const failed = workloads.filter((w) => w[side].failure !== null && w[side].failure!.status !== 'missing');
    if (failed.length === 0) continue;
    const first = failed[0]!;
    out.push(
      `${failed.length} workload${failed.length === 1 ? '' : 's'} failed on the ${side}, e.g. ${first.ref.name}: ${first[side].failure!.status} (${first[side].failure!.message.split('\n')[0]!.slice(0, 160)})`,
    );
  }
  return out;
}

/**
 * An incomparable workload's reason from the harness's own record: a workload that failed on a
 * side in its warm-up has no round at all, so the pair table alone cannot tell which side failed.
 */
function withFailureReasons(report: PairedReport, workloads: readonly WorkloadRecord[]): PairedReport {
  const byName = new Map(workloads.map((w) => [w.ref.name, w]));
  return {
    ...report,
    workloads: report.workloads.map((v) => {
      const w = byName.get(v.name);
      if (v.change !== 'incomparable' || !w) return v;
      if (w.base.failure) return { ...v, reason: 'failed-on-base' };
      if (w.expert.failure) return { ...v, reason: 'failed-on-expert' };
      return v;
    }),
  };
}

/** The change measured, for workload selection: the patch and where the suite's own code is. */
export interface MeasuredChange {
  readonly patch: string;
  readonly benchmarkDir: string;
}

/** asv's default benchmark timeout, the harness's when neither the command nor the benchmark gives one (as container-worker.ts). */
const DEFAULT_TIMEOUT_S = 60;

/** How often a long fingerprinting pass says how far it is. */
const FINGERPRINT_REPORT_MS = 30_000;

/**
 * A fingerprint's failure that is the workload's own (it raised, skipped, or ran past its time
 * limit), remembered for the base commit; not the worker's or the run's (`crashed`: the worker
 * died or was killed, the harness stopped answering; `unknown`: the protocol), never remembered.
 */
export function workloadFailure(status: FailureStatus): status is FingerprintFailureStatus {
  return status === 'skipped' || status === 'failed' || status === 'timeout';
}

/** A remembered failure still holds under this time limit: a timeout is taken again when the limit grew. */
function stillFails(f: StoredFingerprintFailure, timeoutSeconds: number): boolean {
  return f.status !== 'timeout' || (f.timeoutSeconds !== null && timeoutSeconds <= f.timeoutSeconds);
}

/**
 * The choose hook of the measurement: fingerprints every workload on the base worker, reads the
 * outlines of the changed Python files and the suite's imported files there, and selects
 * (selection.ts). Records the selection, and how the fingerprints were had, in `into`.
 */
function chooser(
  env: CandidateEnvironment,
  change: MeasuredChange,
  deps: MeasureDeps,
  into: { selection: Selection | null; fingerprints: FingerprintAccount | null },
): NonNullable<InterleaveSettings['choose']> {
  return async (base, ready, signal) => {
    const { config, log } = deps;
    const started = Date.now();
    const root = `${env.repoDir.replace(/\/+$/, '')}/`;
    const reusable = await reusableFingerprints(env, ready, deps, signal);
    const remembered = await rememberedFailures(env, ready, deps, signal);
    const s = env.synthesized;
    const account = { taken: 0, reused: 0, reusedFailures: 0, reusedMs: 0, failuresRecorded: 0 };
    const stored: StoredFingerprint[] = [];
    // each fingerprint is kept as soon as it is taken: a large suite's first pass takes minutes
    // (xarray: 528 workloads), and a run stopped in the middle resumes where it stopped
    const keep = (f: StoredFingerprint) => {
      stored.push(f);
      deps.fingerprints?.save(s.repo, s.sha, s.commitDate, [f]);
    };
    let lastReport = started;
    // workloads that skip or fail at the base (NotImplementedError in setup, SkipNotImplemented:
    // networkx's drug-network parameter without the network; an exception, or past the
    // benchmark's timeout, as the measurement's batches would be) can be faster on no side: neither
    // selected nor controls. Such a failure is not a fingerprint (no nearby commit reuses it): it is
    // remembered for this base commit in this environment only (rememberedFailures: the image's id
    // and what else it can depend on), so later candidates of the commit skip the workload without
    // taking it again (xarray #10370 spent 1,048 s on fingerprints); a timeout is taken again under
    // a larger time limit. A worker that crashed says nothing of the workload: that one is still
    // selected, and nothing of it is remembered.
    const skipping: string[] = [];
    for (const ref of ready.workloads) {
      const version = ready.benchmarks[ref.benchmark]?.version ?? null;
      const reused = reusable.get(ref.name);
      if (reused) {
        account.reused += 1;
        account.reusedMs += reused.ms ?? 0;
        keep(reused);
        continue;
      }
      const timeoutSeconds = config.harness.batchTimeoutSeconds ?? ready.benchmarks[ref.benchmark]?.timeout ?? DEFAULT_TIMEOUT_S;
      const failed = remembered?.failures.get(ref.name);
      if (failed && stillFails(failed, timeoutSeconds)) {
        account.reusedFailures += 1;
        account.reusedMs += failed.ms ?? 0;
        skipping.push(ref.name);
        continue;
      }
      const taking = Date.now();
      account.taken += 1;
      const f = await base.fingerprint(ref, config.harness.batchTimeoutSeconds, signal);
      const ms = Date.now() - taking;
      if (!f.ok && workloadFailure(f.status)) {
        skipping.push(ref.name);
        // an answer that came while the run was being stopped is not trusted to be the workload's
        if (remembered && !signal?.aborted) {
          deps.fingerprints!.failures.save(s.repo, s.sha, remembered.environment, {
            workload: ref.name,
            status: f.status,
            message: f.message,
            timeoutSeconds,
            ms,
          });
          account.failuresRecorded += 1;
        }
        continue;
      }
      if (f.ok && failed && remembered) deps.fingerprints!.failures.forget(s.repo, s.sha, remembered.environment, ref.name);
      // only the checkout's code matters (the harness and the standard library run too)
      const code = f.ok
        ? f.code.filter(([file]) => file.startsWith(root)).map(([file, a, b]) => [file.slice(root.length), a, b] as const)
        : null;
      keep({ workload: ref.name, version, code, opaque: f.ok && f.opaque, ms });
      if (Date.now() - lastReport >= FINGERPRINT_REPORT_MS) {
        lastReport = Date.now();
        log.info({ done: stored.length + skipping.length, total: ready.workloads.length, ...account }, 'harness: fingerprinting the suite');
      }
    }
    const fingerprints: Fingerprint[] = stored.map((f) => ({
      workload: f.workload,
      opaque: f.opaque,
      ms: f.ms,
      code: f.code === null ? null : f.code.map(([p, a, b]) => [`${root}${p}`, a, b] as const),
    }));
    const changed = diffFiles(change.patch)
      .filter((f) => /\.pyi?$/.test(f.previousPath ?? f.path) && f.status !== 'added')
      .map((f) => f.previousPath ?? f.path);
    const outlines =
      changed.length > 0
        ? await base.outline(
            changed.map((p) => `${root}${p}`),
            signal,
          )
        : {};
    const chosen = selectWorkloads({
      diff: change.patch,
      repoDir: env.repoDir,
      benchmarkDir: change.benchmarkDir,
      outlines: new Map(changed.map((p) => [p, outlines?.[`${root}${p}`] ?? null])),
      imported: new Set((await base.modules(signal)) ?? []),
      fingerprints,
      controls: config.selectionControls,
      modules: modulesOf(ready),
    });
    const selection: Selection =
      skipping.length === 0
        ? chosen
        : {
            ...chosen,
            reason: `${chosen.reason}; ${skipping.length} workload${skipping.length === 1 ? '' : 's'} skip or fail at the base`,
            skipped: [...chosen.skipped, ...skipping],
          };
    into.selection = selection;
    into.fingerprints = account;
    log.info(
      {
        mode: selection.mode,
        selected: selection.selected.length,
        controls: selection.controls.length,
        skipped: selection.skipped.length,
        fingerprinted: account.taken,
        reused: account.reused,
        reusedFailures: account.reusedFailures,
        reusedMs: account.reusedMs,
        failuresRecorded: account.failuresRecorded,
        fingerprintMs: Date.now() - started,
        reason: selection.reason,
      },
      'harness: workloads selected',
    );
    if (selection.mode === 'all') return skipping.length === 0 ? null : new Set(selection.selected);
    // no workload runs the changed code: the candidate is no-improvement without a measurement
    // (controls alone decide nothing; on rich they cost 37 s a candidate)
    return selection.selected.length === 0 ? new Set<string>() : new Set([...selection.selected, ...selection.controls]);
  };
}

/** Each workload's benchmark module and its own import seconds, when the harness said them. */
function modulesOf(ready: ReadyMessage): Map<string, { module: string; importSeconds: number }> {
  const out = new Map<string, { module: string; importSeconds: number }>();
  const moduleOf = ready.module_of;
  const seconds = ready.module_import_seconds;
  if (!moduleOf || !seconds) return out;
  for (const ref of ready.workloads) {
    const module = moduleOf[ref.benchmark];
    if (module !== undefined) out.set(ref.name, { module, importSeconds: seconds[module] ?? 0 });
  }
  return out;
}

/**
 * Fingerprints recorded before that still hold: those of this commit, else those of the nearest
 * commit of the repository whose covered files did not change since (git in the base image says
 * which changed), and only for benchmarks of the same version. A failed one is never reused.
 */
async function reusableFingerprints(
  env: CandidateEnvironment,
  ready: ReadyMessage,
  deps: MeasureDeps,
  signal?: AbortSignal,
): Promise<Map<string, StoredFingerprint>> {
  const out = new Map<string, StoredFingerprint>();
  const cache = deps.fingerprints;
  if (!cache) return out;
  const s = env.synthesized;
  const same = cache.at(s.repo, s.sha);
  const near = same ?? cache.nearest(s.repo, s.sha, s.commitDate);
  if (!near) return out;
  const changed = same ? new Set<string>() : await deps.runner.changedFiles(env, near.sha, signal);
  if (changed === null) return out;
  for (const ref of ready.workloads) {
    const f = near.fingerprints.get(ref.name);
    if (!f || f.code === null || f.version !== (ready.benchmarks[ref.benchmark]?.version ?? null)) continue;
    if (f.code.some(([path]) => changed.has(path))) continue;
    out.set(ref.name, f);
  }
  return out;
}

/**
 * The failures remembered at the base commit in this environment, and the environment's digest:
 * what a harness worker of the base image runs in (the runner's identity of it: the image's id,
 * the containers' limits, the harness's files), the interpreter, the containers' variables and
 * network, PYTHONHASHSEED, the benchmark filter and the suite the harness discovered. Null (nothing
 * remembered, nothing read) without a store, or when the runner cannot identify the image.
 */
async function rememberedFailures(
  env: CandidateEnvironment,
  ready: ReadyMessage,
  deps: MeasureDeps,
  signal?: AbortSignal,
): Promise<{ environment: string; failures: ReadonlyMap<string, StoredFingerprintFailure> } | null> {
  const cache = deps.fingerprints;
  if (!cache) return null;
  const worker = await deps.runner.workerIdentity(env, env.baseImage, signal);
  if (worker === null) return null;
  const environment = hashOf({
    worker,
    python: env.python,
    env: env.env,
    network: env.network,
    hashSeed: deps.config.harness.hashSeed,
    bench: deps.config.bench,
    benchmarks: ready.benchmarks,
    workloads: ready.workloads,
  });
  const s = env.synthesized;
  return { environment, failures: cache.failures.at(s.repo, s.sha, environment) };
}

export async function measureWithHarness(
  env: CandidateEnvironment,
  configPath: string,
  expertImage: string,
  deps: MeasureDeps,
  change?: MeasuredChange,
): Promise<Measured> {
  const { runner, config, log, signal } = deps;
  const h = config.harness;
  const cpusets = workerCpusets(h.mode, h.cpus, await runner.hostCpus());
  const seed = h.seed ?? randomInt(2 ** 31);
  const budgetMs = config.timeBudgetSeconds * 1000;
  const startTimeoutMs = config.invocationTimeoutSeconds * 1000;
  const settings = calibratedSettings(h, seed, budgetMs);
  const chosen: { selection: Selection | null; fingerprints: FingerprintAccount | null } = { selection: null, fingerprints: null };
  const protocol = {
    adaptive: h.adaptive,
    engine: 'perfmine',
    rounds: h.rounds,
    roundsPerProcess: h.roundsPerProcess,
    samples: h.samples,
    warmupSeconds: h.warmupSeconds,
    mode: h.mode,
    interleave: h.interleave,
    plan: h.plan,
    calibrationRounds: h.calibrationRounds,
    samplesPerRound: h.samplesPerRound,
    cpusets,
    seed,
    hashSeed: h.hashSeed,
  };
  log.info({ mode: h.mode, rounds: h.rounds, samples: h.samples, cpusets, seed }, 'harness: starting the workers');
  const m = await measureInterleaved(
    {
      open: (side: Side, s?: AbortSignal) =>
        runner.openHarnessWorker(
          env,
          side === 'expert' ? expertImage : env.baseImage,
          {
            side,
            configPath,
            bench: config.bench,
            cpuset: cpusets[side],
            hashSeed: h.hashSeed,
            startTimeoutMs,
            maxLifetimeMs: startTimeoutMs + 2 * budgetMs + 600_000,
          },
          s,
        ),
    },
    {
      ...settings,
      onRound: (round, elapsedMs, measuring) => log.info({ round, of: h.rounds, measuring, elapsedMs }, 'harness round'),
      looks: h.adaptive.looks,
      minRounds: config.paired.minPairs,
      ...(change && config.selection === 'coverage' ? { choose: chooser(env, change, deps, chosen) } : {}),
      settle: (snapshot) => {
        const out = settledAtLook(snapshot, config.paired, h.adaptive);
        log.info(
          {
            round: snapshot.rounds,
            changed: [...out.values()].filter((s) => s === 'changed').length,
            unchanged: [...out.values()].filter((s) => s === 'unchanged').length,
          },
          'harness look: workloads settled',
        );
        return out;
      },
    },
    signal,
  );
  log.info({ rounds: m.rounds, batches: m.batches, durationMs: m.durationMs, budgetExhausted: m.budgetExhausted }, 'harness: measured');
  deps.metrics?.add('docker.measureMs', m.durationMs);
  // what the measurement took, for the task's instructions (how long an in-image compare takes)
  // the configured alpha too: the recorded `paired` options are the final analysis's, whose alpha is what the looks left it
  const recorded = { ...protocol, measuredMs: m.durationMs, roundsMeasured: m.rounds, configuredAlpha: config.paired.alpha };
  deps.metrics?.add('validate.batches', m.batches);

  const problems = failureLines(m.workloads);
  if (m.budgetExhausted) problems.push('time budget reached');
  const planned = m.workloads.filter((w) => (w.leftOut ?? 0) > 0);
  if (planned.length > 0) {
    const listed = planned.map((w) => `${w.ref.name} ${w.base.rounds.filter((r) => r !== null).length}`).slice(0, 3);
    problems.push(
      `the time plan gave ${planned.length} expensive workload${planned.length === 1 ? '' : 's'} fewer rounds than the others' ${m.rounds} (${listed.join(', ')}${planned.length > 3 ? ' ...' : ''})`,
    );
  }
  const fewer = m.workloads.filter((w) => w.samples !== undefined && w.samples < h.samples);
  if (fewer.length > 0) {
    const listed = fewer.map((w) => `${w.ref.name} ${w.samples}`).slice(0, 3);
    problems.push(
      `${fewer.length} workload${fewer.length === 1 ? '' : 's'} whose setup outweighs a sample took fewer samples a round than ${h.samples} (${listed.join(', ')}${fewer.length > 3 ? ' ...' : ''})`,
    );
  }
  const evidenceOf = (rest: Partial<MeasurementEvidence>): MeasurementEvidence => ({
    suiteNotImportable: null,
    baseMeasured: measuredOn(m.workloads, 'base'),
    expertMeasured: measuredOn(m.workloads, 'expert'),
    pairs: m.rounds,
    minPairs: config.paired.minPairs,
    calibrated: false,
    improved: [],
    problems,
    ...rest,
  });
  const base = m.base;
  if (base.event !== 'ready') {
    const message = `${base.reason}: ${base.message}`;
    if (base.reason === 'no-benchmarks')
      return {
        verdicts: null,
        evidence: evidenceOf({ problems: [message] }),
        benchmarksJson: null,
        budgetExhausted: false,
        protocol: recorded,
        harness: m,
        selection: null,
      };
    return {
      verdicts: null,
      evidence: evidenceOf({ suiteNotImportable: message }),
      benchmarksJson: null,
      budgetExhausted: false,
      protocol: recorded,
      harness: m,
      selection: null,
    };
  }
  if (m.expert && m.expert.event !== 'ready')
    problems.push(`the expert's suite: ${m.expert.reason}: ${m.expert.message.split('\n').slice(-3).join(' ')}`);

  const benchmarksJson = benchmarksJsonOf(base);
  let benchmarks: ReadonlyMap<string, BenchmarkInfo> | null = null;
  try {
    benchmarks = parseBenchmarksFile(benchmarksJson, "the harness's benchmarks");
  } catch (error) {
    if (!(error instanceof ItemError)) throw error;
    problems.push(error.message);
  }
  const calibrationTable = harnessCalibrationTable(m);
  // with interim looks made, the final analysis has the share of alpha the looks left it
  const finalOptions = { ...config.paired, alpha: finalAlpha(config.paired.alpha, h.adaptive) };
  const paired = withFailureReasons(verdictOfTables(harnessPairTable(m), calibrationTable, finalOptions), m.workloads);
  const verdicts =
    m.rounds === 0
      ? null
      : combineVerdicts(
          {
            paired,
            base: harnessResultSet(m, 'base', 'base'),
            expert: harnessResultSet(m, 'expert', 'expert'),
            calibration: calibrationTable
              ? { first: harnessResultSet(m, 'base', 'base'), second: harnessResultSet(m, 'calibration', 'base') }
              : null,
          },
          { paired: config.paired, factor: config.factor, benchmarks },
        );
  return {
    verdicts,
    evidence: evidenceOf({
      nothingSelected:
        chosen.selection?.mode === 'coverage' && chosen.selection.selected.length === 0
          ? `${chosen.selection.reason}: no workload can be faster`
          : null,
      calibrated: verdicts?.paired.calibration.calibrated ?? false,
      improved: verdicts?.workloads.filter((w) => w.paired.change === 'improved').map((w) => w.name) ?? [],
    }),
    benchmarksJson,
    budgetExhausted: m.budgetExhausted,
    protocol: recorded,
    harness: m,
    selection: chosen.selection,
    fingerprints: chosen.fingerprints,
  };
}
