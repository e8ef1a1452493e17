import { randomUUID } from 'node:crypto';
import type { Config } from '../../pipeline/config/schema.js';
import { ConfigError, ItemError } from '../../pipeline/errors.js';
import type { Logger } from '../../pipeline/logging.js';
import { REPLAY_FORMAT, type ReplayRecord, type ReplayWorkload } from '../../pipeline/concepts/records/replay-record.js';
import { readFolderReplays, writeFolderReplay } from '../../pipeline/concepts/replay-files.js';
import { containerLimits, type ContainerLimits, type DockerService, type EngineFacts } from '../../pipeline/services/docker.js';
import { describeFinding, scanImage } from '../../pipeline/services/environments/image-scan.js';
import type { ImageInventories } from '../../cache/image-inventories.js';
import type { ReplayStore } from '../../cache/replays.js';
import { workerCpusets } from '../../stages/validate/harness/cpus.js';
import { harborOptionsOf } from '../../pipeline/services/verifier/options.js';
import { agentUserLines } from '../../pipeline/services/verifier/verifier-folder.js';
import { machineOf, probeMachine, type ProbeReading } from './machine.js';
import { verifyReplay, type ReplayMeasurement } from './verify-replay.js';
import { replayProtocol, type ReplayProtocol } from './protocol.js';
import {
  estimateText,
  judgeReplay,
  judgeWorkload,
  recordedEstimate,
  replayedEstimate,
  REPLICATION_RULE,
  type RuleSettings,
  type SpeedupEstimate,
} from './rule.js';
import { buildContext, readTaskFolder, type TaskFolder } from './task-folder.js';
import { pullBaseImages } from '../../pipeline/services/registry/pull-bases.js';
import type { RegistryApi } from '../../pipeline/services/registry/registry-api.js';
import { dockerfileBases } from '../../pipeline/services/registry/dockerfile-bases.js';
import { isLoopbackUrl } from '../../pipeline/services/loopback.js';

/**
 * `perfmine replay` of one task folder: the environment built from the folder alone (its
 * Dockerfile, lock and build script; `docker build` of the folder), checked from outside
 * (image-scan.ts against the task's base image: a refused environment does not replicate), the
 * expert side built from the same Dockerfile with the expert patch applied to /repo's working
 * tree before the build script runs (expert-dockerfile.ts), then `times` replays on those two
 * images, each a separate record: the machine read (machine.ts), the workloads validate measured
 * measured again with the task's protocol (protocol.ts, measure-replay.ts), and the replication
 * rule (rule.ts). Each record goes to `<folder>/replays/<id>.json` and to the store. Replays the
 * folder already holds (made elsewhere) are added to the store first. The images are removed at
 * the end unless kept.
 */

export interface ReplaySettings {
  readonly docker: DockerService;
  readonly config: Config;
  readonly log: Logger;
  /** Where records go besides the folder (null: the folder only). */
  readonly store: ReplayStore | null;
  /** Where the outside scan keeps base images' inventories across runs (null: this process only). */
  readonly inventories?: ImageInventories | null;
  readonly times: number;
  /** PIP_INDEX_URL for the build (null: the Dockerfile's own). */
  readonly indexUrl: string | null;
  readonly noCache: boolean;
  readonly keepImages: boolean;
  readonly note: string | null;
  readonly version: string;
  readonly rule?: RuleSettings;
  readonly now?: () => Date;
  readonly onRecord?: (record: ReplayRecord) => void;
  /** How the registry of a published folder's base images is asked what it lacks (tests give their own). */
  readonly registryApi?: RegistryApi;
}

export interface TaskReplay {
  readonly dir: string;
  readonly instanceId: string;
  readonly records: readonly ReplayRecord[];
  /** Records found in the folder that the store did not have yet. */
  readonly imported: number;
}

let sequence = 0;

function tail(text: string, lines = 12): string {
  return text.trim().split('\n').slice(-lines).join('\n');
}

/** What does not change between the replays of one call. */
interface Context {
  readonly folder: TaskFolder;
  readonly settings: ReplaySettings;
  readonly rule: RuleSettings;
  readonly limits: ContainerLimits;
  readonly engine: EngineFacts | null;
  readonly protocol: ReplayProtocol;
  readonly cpusets: Readonly<Record<'base' | 'expert' | 'calibration', string | null>>;
  readonly labels: Record<string, string>;
}

interface Built {
  readonly reused: boolean;
  readonly baseMs: number | null;
  readonly expertMs: number | null;
  readonly scan: ReplayRecord['build']['scan'];
  readonly scanMs: number;
}

interface Outcome {
  readonly verdict: ReplayRecord['verdict'];
  readonly reason: string | null;
  readonly detail: string | null;
  readonly workloads: ReplayWorkload[];
  readonly judged: number;
  readonly replicated: number;
  readonly share: number | null;
  readonly replicatedWorkloads: string[];
  readonly measureMs: number;
  readonly seed: number | null;
  readonly rounds: number | null;
}

function estimateOf(e: SpeedupEstimate | null): { speedup: number | null; interval: [number, number] | null } {
  return e === null ? { speedup: null, interval: null } : { speedup: e.speedup, interval: [e.interval[0], e.interval[1]] };
}

/** Each recorded workload with its replay and the rule's outcome (improved ones judged, the others reported). */
function judged(folder: TaskFolder, m: ReplayMeasurement, rule: RuleSettings): ReplayWorkload[] {
  return folder.workloads.map((w): ReplayWorkload => {
    const now = m.workloads.get(w.name) ?? null;
    const recorded = {
      change: w.change,
      usable_pairs: w.usablePairs,
      mds: w.mds,
      ...estimateOf(recordedEstimate(w, rule.level)),
    };
    const replay =
      now === null
        ? null
        : {
            change: now.change,
            reason: now.reason,
            usable_pairs: now.usablePairs,
            faster_pairs: now.fasterPairs,
            p_value: now.pValue,
            mds: now.mds,
            ...estimateOf(replayedEstimate(now, rule.level)),
          };
    if (w.change !== 'improved') {
      const seen =
        now === null ? 'not measured again' : `the replay calls it ${now.change} (${estimateText(replayedEstimate(now, rule.level))})`;
      return { name: w.name, recorded, replay, outcome: null, why: `not judged: validate found it ${w.change}; ${seen}` };
    }
    const j = judgeWorkload(w, now, rule);
    return { name: w.name, recorded, replay, outcome: j.outcome, why: j.why };
  });
}

function record(
  ctx: Context,
  built: Built,
  outcome: Outcome,
  machine: ReplayRecord['machine'],
  probeMs: number,
  buildMs: number,
): ReplayRecord {
  const { folder, settings } = ctx;
  const h = ctx.protocol.harness;
  const own = built.reused ? 0 : buildMs + built.scanMs;
  return {
    format: REPLAY_FORMAT,
    id: randomUUID(),
    task: {
      instance_id: folder.instanceId,
      repo: folder.repo,
      pull_number: folder.pullNumber,
      month: folder.month,
      base_commit: folder.baseCommit,
    },
    replayed_at: (settings.now?.() ?? new Date()).toISOString(),
    perfmine_version: settings.version,
    note: settings.note,
    folder: { digest: folder.digest, path: folder.dir },
    machine,
    engine: folder.engine,
    protocol: {
      engine: ctx.protocol.engine,
      rounds: h.rounds,
      roundsPerProcess: h.roundsPerProcess,
      samples: h.samples,
      clock: h.clock,
      mode: h.mode,
      interleave: h.interleave,
      plan: h.plan,
      calibrationRounds: h.calibrationRounds,
      samplesPerRound: h.samplesPerRound,
      warmupSeconds: h.warmupSeconds,
      hashSeed: h.hashSeed,
      adaptive: h.adaptive,
      cpusets: ctx.cpusets,
      seed: outcome.seed,
      roundsMeasured: outcome.rounds,
      paired: ctx.protocol.paired,
      fromTask: ctx.protocol.recorded,
    },
    rule: { level: ctx.rule.level, magnitude_tolerance: ctx.rule.magnitudeTolerance },
    build: {
      reused: built.reused,
      no_cache: settings.noCache,
      index: settings.indexUrl,
      base_ms: built.baseMs,
      expert_ms: built.expertMs,
      scan: built.scan,
    },
    durations: {
      build_ms: built.reused ? 0 : buildMs,
      scan_ms: built.reused ? 0 : built.scanMs,
      measure_ms: outcome.measureMs,
      machine_ms: own + probeMs + outcome.measureMs,
    },
    workloads: outcome.workloads,
    judged: outcome.judged,
    replicated: outcome.replicated,
    replicated_share: outcome.share,
    replicated_workloads: outcome.replicatedWorkloads,
    verdict: outcome.verdict,
    reason: outcome.reason,
    detail: outcome.detail,
  };
}

function stopped(verdict: ReplayRecord['verdict'], reason: string, detail: string): Outcome {
  return {
    verdict,
    reason,
    detail,
    workloads: [],
    judged: 0,
    replicated: 0,
    share: null,
    replicatedWorkloads: [],
    measureMs: 0,
    seed: null,
    rounds: null,
  };
}

async function probe(ctx: Context, image: string | null): Promise<{ reading: ProbeReading | null; ms: number }> {
  const started = Date.now();
  if (image === null || !(await ctx.settings.docker.imageExists(image))) return { reading: null, ms: 0 };
  const reading = await probeMachine(ctx.settings.docker, image, {
    python: ctx.folder.python,
    cpuset: ctx.cpusets.base,
    limits: ctx.limits,
    labels: { ...ctx.labels, 'org.perfmine.role': 'replay-probe' },
  });
  return { reading, ms: Date.now() - started };
}

/** Stores and writes one record. */
function keep(ctx: Context, r: ReplayRecord): ReplayRecord {
  writeFolderReplay(ctx.folder.dir, r);
  ctx.settings.store?.save(r, 'replayed');
  ctx.settings.log.info(
    {
      task: r.task.instance_id,
      replay: r.id,
      verdict: r.verdict,
      reason: r.reason,
      share: r.replicated_share,
      measureMs: r.durations.measure_ms,
    },
    'replay recorded',
  );
  ctx.settings.onRecord?.(r);
  return r;
}

/** Replays one task folder `settings.times` times (one record when it cannot be measured at all). */
export async function replayTask(dir: string, settings: ReplaySettings, signal?: AbortSignal): Promise<TaskReplay> {
  const folder = readTaskFolder(dir);
  const { docker, config, log } = settings;
  let imported = 0;
  for (const r of readFolderReplays(folder.dir).records) if (settings.store?.save(r, 'imported')) imported++;

  const limits = containerLimits(config.docker);
  const engine = await docker.engineFacts().catch(() => null);
  const protocol = replayProtocol(folder.protocol, config.validate);
  const cpusets = workerCpusets(protocol.harness.mode, protocol.harness.cpus, engine?.cpus ?? (await docker.hostCpus()));
  const ctx: Context = {
    folder,
    settings,
    rule: settings.rule ?? REPLICATION_RULE,
    limits,
    engine,
    protocol,
    cpusets,
    labels: { 'org.perfmine.item': `${folder.repo}#${folder.pullNumber}` },
  };
  const machine = (reading: ProbeReading | null, after: number[] | null) => machineOf(reading, engine, cpusets.base, limits, after);
  const records: ReplayRecord[] = [];
  const done = (): TaskReplay => ({ dir: folder.dir, instanceId: folder.instanceId, records, imported });
  const noBuild: Built = { reused: false, baseMs: null, expertMs: null, scan: null, scanMs: 0 };

  if (folder.engine !== 'perfmine') {
    const p = await probe(ctx, folder.baseImage);
    records.push(
      keep(
        ctx,
        record(
          ctx,
          noBuild,
          stopped(
            'failed',
            'engine-not-replayable',
            `the task was measured with the ${folder.engine} engine; replay measures with perfmine's harness only`,
          ),
          machine(p.reading, null),
          p.ms,
          0,
        ),
      ),
    );
    return done();
  }

  // a published folder starts from its base in a registry by digest: pulled first, or nothing is recorded
  await pullBaseImages(docker, dockerfileBases(folder.dockerfile), folder.instanceId, settings.registryApi);

  const slug = folder.instanceId.toLowerCase().replace(/[^a-z0-9_.-]+/g, '-');
  const seq = `${process.pid}-attempt-${++sequence}`;
  const baseTag = `perfmine/replay-${slug}:base-${seq}`;
  const expertTag = `perfmine/replay-${slug}:expert-${seq}`;
  const buildCommon = {
    buildArgs: settings.indexUrl ? { PIP_INDEX_URL: settings.indexUrl } : {},
    network: settings.indexUrl && isLoopbackUrl(settings.indexUrl) ? ('host' as const) : ('default' as const),
    noCache: settings.noCache,
    timeoutMs: config.validate.buildTimeoutSeconds * 1000,
    limits,
    labels: { 'org.perfmine.role': 'replay' },
    tailChars: 16_000,
  };
  try {
    log.info(
      { task: folder.instanceId, tag: baseTag, index: settings.indexUrl, noCache: settings.noCache },
      'replay: building the task from its folder',
    );
    const base = await docker.buildImage({ ...buildCommon, tag: baseTag, context: buildContext(folder, folder.dockerfile) }, signal);
    if (!base.ok) {
      const p = await probe(ctx, folder.baseImage);
      const built = { ...noBuild, baseMs: base.durationMs };
      const why = `docker build of the folder failed: ${base.error ?? 'no image'}\n${tail(base.log)}`;
      records.push(keep(ctx, record(ctx, built, stopped('failed', 'build-failed', why), machine(p.reading, null), p.ms, base.durationMs)));
      return done();
    }

    const scanStarted = Date.now();
    let scan: ReplayRecord['build']['scan'];
    try {
      const result = await scanImage({
        docker,
        baseImage: folder.baseImage,
        image: baseTag,
        inventories: settings.inventories ?? null,
        ...(signal ? { signal } : {}),
      });
      scan = { verdict: result.verdict, findings: result.findings.slice(0, 20).map(describeFinding), duration_ms: result.durationMs };
    } catch (error) {
      if (!(error instanceof ItemError) && !(error instanceof ConfigError)) throw error;
      scan = null;
      const p = await probe(ctx, baseTag);
      const built: Built = { ...noBuild, baseMs: base.durationMs, scanMs: Date.now() - scanStarted };
      records.push(
        keep(
          ctx,
          record(ctx, built, stopped('failed', 'scan-failed', (error as Error).message), machine(p.reading, null), p.ms, base.durationMs),
        ),
      );
      return done();
    }
    const scanMs = Date.now() - scanStarted;
    if (scan.verdict !== 'accepted') {
      const p = await probe(ctx, baseTag);
      const built: Built = { ...noBuild, baseMs: base.durationMs, scan, scanMs };
      const why = `the outside scan refused the environment built from the folder: ${scan.findings.slice(0, 3).join('; ')}`;
      records.push(
        keep(
          ctx,
          record(ctx, built, stopped('does-not-replicate', 'environment-tampered', why), machine(p.reading, null), p.ms, base.durationMs),
        ),
      );
      return done();
    }

    // the verifier's environment: the folder's image with the agent's user, as the Harbor export builds it
    const trialBuild = await docker.buildImage(
      { ...buildCommon, tag: expertTag, context: [{ name: 'Dockerfile', content: `FROM ${baseTag}\n${agentUserLines().join('\n')}\n` }] },
      signal,
    );
    const buildMs = base.durationMs + trialBuild.durationMs;
    if (!trialBuild.ok) {
      const p = await probe(ctx, baseTag);
      const built: Built = { ...noBuild, baseMs: base.durationMs, expertMs: trialBuild.durationMs, scan, scanMs };
      const why = `the verifier's environment (the folder's image with the agent's user) did not build: ${trialBuild.error ?? ''}\n${tail(trialBuild.log)}`;
      records.push(keep(ctx, record(ctx, built, stopped('failed', 'build-failed', why), machine(p.reading, null), p.ms, buildMs)));
      return done();
    }

    for (let i = 0; i < settings.times; i++) {
      if (signal?.aborted) break;
      const built: Built = { reused: i > 0, baseMs: base.durationMs, expertMs: trialBuild.durationMs, scan, scanMs };
      const before = await probe(ctx, baseTag);
      log.info(
        { task: folder.instanceId, replay: i + 1, of: settings.times, rounds: protocol.harness.rounds },
        "replay: the verifier on the expert's patch",
      );
      const measured = await verifyReplay(
        {
          docker,
          folder,
          image: expertTag,
          harbor: harborOptionsOf(config),
          limits,
          log,
          labels: { 'org.perfmine.item': ctx.labels['org.perfmine.item']! },
        },
        signal,
      );
      const after = await probe(ctx, baseTag);
      const timing = { measureMs: measured.durationMs, seed: measured.seed, rounds: measured.rounds };
      let outcome: Outcome;
      if (measured.error !== null) {
        outcome = { ...stopped('failed', 'verifier-error', `the verifier could not verify: ${measured.error}`), ...timing };
      } else if (measured.failure !== null) {
        // the expert's patch fails its own task's verifier (a check, or the hack detector): the task does not replicate
        const detail = [measured.failure.message, ...measured.findings.slice(0, 5)].join('\n');
        outcome = { ...stopped('does-not-replicate', `verifier-${measured.failure.check}`, detail), ...timing };
      } else if (measured.workloads.size === 0) {
        outcome = { ...stopped('failed', 'measurement-failed', measured.problem ?? 'nothing was measured'), ...timing };
      } else {
        const workloads = judged(folder, measured, ctx.rule);
        const j = judgeReplay(workloads);
        const against = workloads.filter((w) => w.outcome === 'does-not-replicate' || w.outcome === 'inconclusive');
        outcome = {
          verdict: j.verdict,
          reason: j.reason,
          detail: against.length > 0 ? against.map((w) => `${w.name}: ${w.why}`).join('\n') : null,
          workloads,
          judged: j.judged,
          replicated: j.replicated,
          share: j.share,
          replicatedWorkloads: j.replicatedWorkloads,
          ...timing,
        };
      }
      records.push(
        keep(ctx, record(ctx, built, outcome, machine(before.reading, after.reading?.loadAverage ?? null), before.ms + after.ms, buildMs)),
      );
    }
    return done();
  } finally {
    if (!settings.keepImages) {
      await docker.removeImage(expertTag).catch(() => undefined);
      await docker.removeImage(baseTag).catch(() => undefined);
    }
  }
}
