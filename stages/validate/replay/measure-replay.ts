import { randomInt } from 'node:crypto';
import type { Logger } from '../../../pipeline/logging.js';
import type { ContainerLimits, DockerService } from '../../../pipeline/services/docker.js';
import { harnessTarEntries } from '../../../pipeline/services/environments/harness-files.js';
import { ContainerHarnessWorker, serveCommand } from '../harness/container-worker.js';
import { calibratedSettings, measureInterleaved, type InterleavedMeasurement, type Side } from '../harness/interleave.js';
import { harnessCalibrationTable, harnessPairTable } from '../harness/tables.js';
import { settledAtLook } from '../harness/settle.js';
import { applyRule, finalAlpha, tableEvidence, verdictOfTables } from '../paired/index.js';
import type { ReplayProtocol } from './protocol.js';
import type { ReplayedWorkload } from './rule.js';

/**
 * A replay's measurement: validate's harness protocol (harness/interleave.ts: base, expert and a
 * second base for calibration as warm workers in three containers of the replayed images, batch
 * by batch in a random order, fresh processes per round, the adaptive looks) and validate's
 * verdict on its tables (verdictOfTables at the final analysis's alpha), with each workload's
 * rule numbers (median log ratio, standard error, degrees of freedom) for the replication rule.
 * Only the workloads validate measured are measured (workloads.json), so that Holm's family is
 * the one validate tested. The workers' containers are opened as validate's Docker runner opens
 * them (docker-runner.ts openHarnessWorker): the harness copied in, no network unless allowed.
 */

export interface ReplayMeasureSpec {
  readonly docker: DockerService;
  readonly limits: ContainerLimits;
  readonly log: Logger;
  readonly baseImage: string;
  readonly expertImage: string;
  /** The interpreter the workers run (`python3.11`). */
  readonly python: string;
  /** The asv config, relative to /repo. */
  readonly configPath: string;
  readonly env: Readonly<Record<string, string>>;
  readonly network: boolean;
  readonly protocol: ReplayProtocol;
  /** Pinning per side (harness/cpus.ts). */
  readonly cpusets: Readonly<Record<Side, string | null>>;
  /** The workloads to measure (validate's); the suite's others are not measured. */
  readonly workloads: ReadonlySet<string>;
  /** Labels of every container (`org.perfmine.item`). */
  readonly item: string;
}

export interface ReplayMeasurement {
  /** Per workload measured (by name): its verdict and the rule's numbers. */
  readonly workloads: ReadonlyMap<string, ReplayedWorkload>;
  /** Why nothing could be measured (the suite did not import on a side), or null. */
  readonly problem: string | null;
  readonly seed: number;
  readonly rounds: number;
  readonly batches: number;
  readonly durationMs: number;
  readonly budgetExhausted: boolean;
}

/** Incomparable workloads' reasons from the harness's own record (as measure-harness.ts does). */
function failureReason(m: InterleavedMeasurement, name: string, reason: string | null): string | null {
  const w = m.workloads.find((x) => x.ref.name === name);
  if (!w) return reason;
  if (w.base.failure) return 'failed-on-base';
  if (w.expert.failure) return 'failed-on-expert';
  return reason;
}

export async function measureReplay(spec: ReplayMeasureSpec, signal?: AbortSignal): Promise<ReplayMeasurement> {
  const { protocol, log } = spec;
  const h = protocol.harness;
  const seed = h.seed ?? randomInt(2 ** 31);
  const budgetMs = protocol.timeBudgetSeconds * 1000;
  const startTimeoutMs = protocol.invocationTimeoutSeconds * 1000;
  const open = async (side: Side, s?: AbortSignal) => {
    const session = await spec.docker.session(
      {
        image: side === 'expert' ? spec.expertImage : spec.baseImage,
        cmd: serveCommand({ python: spec.python, configPath: spec.configPath, bench: null }),
        env: { ...spec.env, PYTHONHASHSEED: h.hashSeed, PYTHONDONTWRITEBYTECODE: '1' },
        workingDir: '/repo',
        network: spec.network ? 'bridge' : 'none',
        limits: spec.limits,
        cpuset: spec.cpusets[side],
        labels: { 'org.perfmine.item': spec.item, 'org.perfmine.role': `replay-${side}` },
        files: harnessTarEntries(),
        maxLifetimeMs: startTimeoutMs + 2 * budgetMs + 600_000,
      },
      s,
    );
    return ContainerHarnessWorker.start(session, startTimeoutMs, s);
  };
  const m = await measureInterleaved(
    { open },
    {
      ...calibratedSettings(h, seed, budgetMs),
      onRound: (round, elapsedMs, measuring) => log.info({ round, of: h.rounds, measuring, elapsedMs }, 'replay round'),
      looks: h.adaptive.looks,
      choose: (_base, ready) => Promise.resolve(new Set(ready.workloads.map((w) => w.name).filter((n) => spec.workloads.has(n)))),
      settle: (snapshot) => settledAtLook(snapshot, protocol.paired, h.adaptive),
    },
    signal,
  );
  const summary = { seed, rounds: m.rounds, batches: m.batches, durationMs: m.durationMs, budgetExhausted: m.budgetExhausted };
  if (m.base.event !== 'ready')
    return {
      ...summary,
      workloads: new Map(),
      problem: `the base's suite: ${m.base.reason}: ${m.base.message.split('\n').slice(-3).join(' ')}`,
    };
  if (m.rounds === 0) return { ...summary, workloads: new Map(), problem: 'no round was measured' };

  const finalOptions = { ...protocol.paired, alpha: finalAlpha(protocol.paired.alpha, h.adaptive) };
  const table = harnessPairTable(m);
  const calibration = harnessCalibrationTable(m);
  const report = verdictOfTables(table, calibration, finalOptions);
  const rules = applyRule(tableEvidence(table, calibration, finalOptions).evidence, finalOptions);
  const workloads = new Map<string, ReplayedWorkload>();
  report.workloads.forEach((v, i) => {
    const rule = rules[i]!;
    workloads.set(v.name, {
      change: v.change,
      reason: v.change === 'incomparable' ? failureReason(m, v.name, v.reason) : v.reason,
      medianLog: rule.medianLog,
      standardError: rule.standardError,
      df: rule.df,
      mds: v.mds,
      pValue: v.pValue,
      usablePairs: v.usablePairs,
      fasterPairs: v.fasterPairs,
    });
  });
  const problem =
    m.expert && m.expert.event !== 'ready'
      ? `the expert's suite: ${m.expert.reason}: ${m.expert.message.split('\n').slice(-3).join(' ')}`
      : null;
  return { ...summary, workloads, problem };
}
