import { FingerprintCache } from '../../cache/fingerprints.js';
import { saveValidation, type ValidationIdentity, type ValidationRows } from '../../cache/measurements.js';
import { validationRows } from './validation-rows.js';
import { loadPullRequest, pullRequestContentHash } from '../../cache/pull-requests.js';
import { ConfigError, ItemError } from '../../pipeline/errors.js';
import { previousOutputs } from '../../pipeline/previous-outputs.js';
import { defineStage, type ItemContext, type PipelineContext, type WorkItem } from '../../pipeline/stage.js';
import { commitKey } from '../../pipeline/concepts/keys.js';
import { classifyOutputSchema, type ClassifyOutput } from '../../pipeline/concepts/records/classify-output.js';
import { parseAsvConfig } from '../../pipeline/concepts/asv-config.js';
import { synthesizeOutputSchema, type SynthesizeOutput } from '../../pipeline/concepts/records/synthesize-output.js';
import { benchmarkDirOf, REPO_DIR } from '../../pipeline/services/environments/verification.js';
import type { ValidateConfig } from './config.js';
import { dockerRunnerOf } from './docker-runner.js';
import type { ValidateOutput } from '../../pipeline/concepts/records/validate-output.js';
import { resolveResultsDir } from './protocol/asv-invocation.js';
import { validateResultSettings, type ValidateSettings } from './result-settings.js';
import type { MeasurementRunner } from './runner-port.js';
import type { Selection } from './selection.js';
import type { FingerprintAccount } from './measured.js';
import { validateCandidate, type CandidateValidation } from './validate-candidate.js';
import { stageRemote } from '../../pipeline/executor/stage-remote.js';
import type { Metrics } from '../../pipeline/metrics.js';
import { repositoryEnvironment } from '../../pipeline/config/repository-environment.js';

export interface ValidateInput {
  readonly classify: ClassifyOutput;
  readonly synthesize: SynthesizeOutput;
  /** Hash of the collected record (the expert patch is its diff). */
  readonly prContentHash: string;
  /** What of the configuration the candidate's validation depends on, and only that (result-settings.ts). */
  readonly settings: ValidateSettings;
}

/** Builds the container seam from the context; tests pass their own. */
export type RunnerFactory = (ctx: PipelineContext) => MeasurementRunner;

const dockerRunner: RunnerFactory = (ctx) => dockerRunnerOf(ctx.config, ctx.services.docker, ctx.log, ctx.metrics);

/** The interpreter of pytest and the snapshot helper: configured, else the one synthesize chose. */
export function pythonOf(config: ValidateConfig, synthesize: SynthesizeOutput): string {
  return config.python ?? (synthesize.pythonVersion ? `python${synthesize.pythonVersion}` : 'python3');
}

/** What `persist` stores of a validated candidate (too big for the ledger's output). */
interface ValidateRows {
  readonly id: ValidationIdentity;
  readonly rows: ValidationRows;
}

/**
 * validate: measures each candidate in its verified image, base against expert in alternating
 * fresh containers, decides asv's verdict and perfmine's paired verdict per workload, checks the
 * tests and the benchmarks' return values, and keeps it (done) or drops it with a named reason.
 */
export function createValidateStage(runnerFactory: RunnerFactory = dockerRunner) {
  return defineStage<ValidateInput, ValidateOutput, ValidateRows>({
    name: 'validate',
    // 2: measured in synthesize's images (checkout at /repo), the expert built and verified by synthesize's machinery
    // 3: the PR's changes to the benchmarks, the asv config and the tests are not applied (both sides keep the base's)
    version: 3,
    description:
      'asv in the verified image, base and expert alternating in fresh containers; asv verdict and paired verdict per workload; tests and snapshot',
    system: 'docker',

    async preflight(ctx) {
      const c = ctx.config.validate;
      if (c.engine === 'asv' && c.calibrationPairs < c.paired.minCalibrationPairs) {
        throw new ConfigError(
          `validate.calibrationPairs: ${c.calibrationPairs} is fewer than validate.paired.minCalibrationPairs (${c.paired.minCalibrationPairs}): no candidate could be kept`,
          {
            reason: 'invalid-config',
            fix: `set validate.calibrationPairs to at least ${c.paired.minCalibrationPairs}`,
          },
        );
      }
      if (c.engine === 'asv' && c.pairs < c.paired.minPairs) {
        throw new ConfigError(`validate.pairs: ${c.pairs} is fewer than validate.paired.minPairs (${c.paired.minPairs})`, {
          reason: 'invalid-config',
        });
      }
      // Leftovers of a crashed run (e.g. a transient expert image) go before anything starts
      // (executor slurm: the nodes' engines are not this machine's; each job cleans up after itself).
      if (ctx.config.executor.kind !== 'slurm') await runnerFactory(ctx).prepare?.();
    },

    async plan(ctx, scope) {
      const items: WorkItem<ValidateInput>[] = [];
      for (const { row, output: classify } of previousOutputs(ctx, 'validate', 'classify', classifyOutputSchema, scope)) {
        const synth = ctx.ledger.get('synthesize', commitKey(classify.repo, classify.baseSha));
        if (synth?.status !== 'done') continue;
        const synthesize = synthesizeOutputSchema.safeParse(synth.output);
        if (!synthesize.success) {
          ctx.log.warn(
            { stage: 'validate', item: row.key, issue: synthesize.error.issues[0]?.message },
            'synthesize output unreadable; item skipped',
          );
          continue;
        }
        const prContentHash = pullRequestContentHash(ctx.db, classify.repo, classify.number);
        if (prContentHash === undefined) continue;
        items.push({
          key: row.key,
          repo: classify.repo,
          at: classify.mergedAt,
          input: {
            classify,
            synthesize: synthesize.data,
            prContentHash,
            settings: validateResultSettings(ctx.config, classify.repo),
          },
        });
      }
      return items;
    },

    async run(ctx: ItemContext, item) {
      const { classify, synthesize, settings } = item.input;
      // every setting read below is in the item's input (validateResultSettings) or cannot change its result
      const config = ctx.config.validate;
      const pr = loadPullRequest(ctx.db, classify.repo, classify.number);
      if (!pr)
        throw new ItemError('pull-request-missing', `${item.key}: its record is not in the store`, {
          fix: 'run `perfmine stage collect --force` for it',
        });
      if (!pr.asvConfig) throw new ItemError('asv-config-missing', `${item.key}: no asv config at the base commit in the collected record`);
      const asvConfig = parseAsvConfig(pr.asvConfig.text);
      if (!asvConfig.ok) throw new ItemError('asv-config-unreadable', `${item.key}: ${pr.asvConfig.path}: ${asvConfig.error}`);
      if (pr.asvConfig.path !== synthesize.asvConfigPath) {
        throw new ItemError(
          'asv-config-mismatch',
          `${item.key}: the collected record has ${pr.asvConfig.path}, the environment was verified with ${synthesize.asvConfigPath}`,
          {
            fix: 'run `perfmine stage synthesize --force` for its base commit',
          },
        );
      }
      const resultsDir = (asvConfig.config as Record<string, unknown>)['results_dir'];
      const started = Date.now(); // the item's machine time, for what a task cost (pipeline/concepts/task-costs.ts)
      const validation = await validateCandidate(
        {
          key: item.key,
          patch: pr.diff,
          environment: {
            key: item.key,
            number: classify.number,
            baseImage: synthesize.imageTag,
            synthesized: synthesize,
            repoDir: REPO_DIR,
            python: pythonOf(config, synthesize),
            env: config.env,
            network: settings.network,
            pytestArgs: repositoryEnvironment(ctx.config, classify.repo).pytestArgs,
          },
          layout: {
            repoDir: REPO_DIR,
            configPath: synthesize.asvConfigPath,
            resultsDir: resolveResultsDir(synthesize.asvConfigPath, typeof resultsDir === 'string' ? resultsDir : undefined),
            benchmarkDir: benchmarkDirOf(synthesize.asvConfigPath, pr.asvConfig.text) ?? 'benchmarks',
          },
        },
        {
          runner: runnerFactory(ctx),
          config,
          log: ctx.log,
          signal: ctx.signal,
          metrics: ctx.metrics,
          fingerprints: new FingerprintCache(ctx.db),
        },
      );
      const calibration = validation.verdicts?.paired.calibration;
      if (calibration?.calibrated) {
        ctx.metrics.add('validate.calibrationFlagged', calibration.falsePositives.flagged);
        ctx.metrics.add('validate.calibrationCompared', calibration.falsePositives.compared);
        setFalsePositiveRate(ctx.metrics);
      }
      const output = summarize(item.input, validation, Date.now() - started);
      const d = validation.decision;
      const dropped = validation.patchDropped ?? [];
      const detail =
        withFingerprints(withSelection(d.detail, validation.selection), validation.fingerprints) +
        (dropped.length > 0 && !d.detail.includes(dropped[0]!)
          ? `; the base's benchmarks, asv config and tests on both sides (not applied: ${listed(dropped)})`
          : '');
      const id = {
        key: item.key,
        repo: classify.repo,
        number: classify.number,
        baseSha: classify.baseSha,
        mergeSha: classify.mergeSha,
        baseImage: synthesize.imageTag,
      };
      const rows = { id, rows: validationRows(validation) };
      return d.kept ? { status: 'done', output, detail, rows } : { status: 'dropped', reason: d.reason, detail, output, rows };
    },

    // executor slurm: the candidate is measured on a compute node (its whole node: executor.slurm.exclusive)
    remote: stageRemote<ValidateInput, ValidateOutput, ValidateRows>('validate', {
      reads: (item) => [
        { table: 'pull_requests', where: 'repo = ? AND number = ?', params: [item.input.classify.repo, item.input.classify.number] },
        { table: 'fingerprints', where: 'repo = ?', params: [item.input.classify.repo] },
        { table: 'fingerprint_failures', where: 'repo = ?', params: [item.input.classify.repo] },
      ],
      writes: [{ table: 'fingerprints' }, { table: 'fingerprint_failures' }],
      adopt(outcome, _ids, ctx) {
        // the node's calibration counters are added to the run's by now
        setFalsePositiveRate(ctx.metrics);
        return outcome;
      },
    }),

    persist(db, _item, outcome) {
      if (outcome.rows) saveValidation(db, outcome.rows.id, outcome.rows.rows);
    },
  });
}

/** The run's rate of calibration pairs flagged as changed, from its counters. */
function setFalsePositiveRate(metrics: Metrics): void {
  const compared = metrics.get('validate.calibrationCompared');
  if (compared > 0) metrics.set('validate.falsePositiveRate', metrics.get('validate.calibrationFlagged') / compared);
}

/** Up to four paths, and how many more. */
function listed(paths: readonly string[]): string {
  return paths.length > 4 ? `${paths.slice(0, 4).join(', ')} and ${paths.length - 4} more` : paths.join(', ');
}

/** The decision's detail, with what was measured when workloads were selected (`perfmine status --stage validate --items`). */
function withSelection(detail: string, s: Selection | null): string {
  if (s === null) return detail;
  const total = s.selected.length + s.controls.length + s.skipped.length;
  return s.mode === 'all'
    ? `${detail}; every workload measured: ${s.reason}`
    : `${detail}; measured ${s.selected.length} of ${total} workloads and ${s.controls.length} controls, ${s.skipped.length} skipped: ${s.reason}`;
}

/** How the selection's fingerprints were had: taken, or reused from the store (those recorded before, and failures not taken again). */
function withFingerprints(detail: string, a: FingerprintAccount | null | undefined): string {
  if (!a) return detail;
  const recorded = a.failuresRecorded > 0 ? ` (${a.failuresRecorded} of them failed, remembered for the base commit)` : '';
  return `${detail}; fingerprints: ${a.taken} taken${recorded}, ${a.reused + a.reusedFailures} reused from the store (${a.reused} recorded before, ${a.reusedFailures} failures not taken again)`;
}

function summarize(input: ValidateInput, v: CandidateValidation, durationMs: number): ValidateOutput {
  const p = v.verdicts?.paired;
  const workloads = v.verdicts?.workloads ?? [];
  return {
    repo: input.classify.repo,
    number: input.classify.number,
    baseSha: input.classify.baseSha,
    mergeSha: input.classify.mergeSha,
    mergedAt: input.classify.mergedAt,
    baseImage: input.synthesize.imageTag,
    expertImage: v.expertImage,
    decision: v.decision.kept ? 'kept' : v.decision.reason,
    pairs: p?.pairs ?? 0,
    calibrationPairs: p?.calibration.pairs ?? 0,
    threshold: p?.calibration.calibrated ? p.threshold : null,
    falsePositiveRate: p?.calibration.falsePositives.rate ?? null,
    workloads: workloads.length,
    improved: workloads.filter((w) => w.paired.change === 'improved').map((w) => w.name),
    asvImproved: workloads.filter((w) => w.asv.mark === '-').length,
    asvWorsened: workloads.filter((w) => w.asv.mark === '+').length,
    pairedWorsened: workloads.filter((w) => w.paired.change === 'worsened').length,
    durationMs,
    expertBuildMs: v.expertBuildMs ?? null,
  };
}

export const validateStage = createValidateStage();
