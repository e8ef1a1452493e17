import { loadValidation, loadWorkloadVerdicts, type StoredValidation, type StoredWorkloadVerdict } from '../../cache/measurements.js';
import { improvedWorkloads, type ImprovedWorkload } from '../../cache/improved-workloads.js';
import { loadPullRequest, pullRequestContentHash } from '../../cache/pull-requests.js';
import { nowIso } from '../../cache/store.js';
import { ItemError } from '../../pipeline/errors.js';
import { perfmineVersion } from '../../pipeline/package-root.js';
import { loadPrompt } from '../../pipeline/prompts.js';
import { defineStage, type PipelineContext, type WorkItem } from '../../pipeline/stage.js';
import { previousOutputs } from '../../pipeline/previous-outputs.js';
import type { Scope } from '../../pipeline/scope.js';
import { monthsOf, monthWindow } from '../../pipeline/window.js';
import { classifyOutputSchema, type ClassifyOutput } from '../../pipeline/concepts/records/classify-output.js';
import { statementTemplateText } from '../../pipeline/concepts/leak-check.js';
import { synthesizeOutputSchema, type SynthesizeOutput } from '../../pipeline/concepts/records/synthesize-output.js';
import { commitKey } from '../../pipeline/concepts/keys.js';
import { validateOutputSchema, type ValidateOutput } from '../../pipeline/concepts/records/validate-output.js';
import type { EmitConfig } from './config.js';
import { writeMonth, type MonthManifest, type MonthTask } from './month-files.js';
import { emitOutputSchema, type EmitOutput } from '../../pipeline/concepts/records/emit-output.js';
import { emitResultSettings } from './result-settings.js';
import { assembleRow, imageNameOf } from './row.js';
import { emittedStatement } from './statement.js';
import { taskFiles } from './task-files.js';
import { carriedWheels } from './carried-wheels.js';
import { upstreamOf } from '../../pipeline/services/package-index/time-machine.js';
import type { Upstream } from '../../pipeline/services/package-index/upstream.js';
import { compareMinutesOf, measuringToolText } from './measuring-tool.js';
import { sealedSourcesOf, type SealedSourcesFactory } from './sealed-sources.js';
import { blobRef, saveBlob, type BlobRef } from '../../cache/blobs.js';
import { BuildScripts } from '../../cache/build-scripts.js';
import { sha256 } from '../../pipeline/hash.js';
import { sourceTierFiles } from '../../pipeline/services/environments/source-tier.js';
import type { TarEntry } from '../../pipeline/services/tar.js';

export interface EmitInput {
  readonly validate: ValidateOutput;
  readonly classify: ClassifyOutput;
  readonly synthesize: SynthesizeOutput;
  readonly prContentHash: string;
  readonly workloads: readonly StoredWorkloadVerdict[];
  readonly validation: StoredValidation;
  /** The workloads validate found improved: a rules-only statement shows them. */
  readonly improved: readonly ImprovedWorkload[];
  /** sha256 of prompts/problem-statement.md: its words are never leaks. */
  readonly statementTemplate: string;
  /** The settings a task depends on (result-settings.ts). */
  readonly config: Omit<EmitConfig, 'publish'>;
  /** The verified build's own step time (ms), for how long an in-image compare takes; null when unknown. */
  readonly buildMs: number | null;
  /** sha256 of perfmine's files every environment carries (the sealing script, perfmine-bench). */
  readonly perfmineFiles: string;
}

/** Every reason emit drops a candidate for (`perfmine status --stage emit --items`). */
export const EMIT_REASONS = ['statement-leaks-solution'] as const;

const PRODUCER = `perfmine ${perfmineVersion()}`;

/** The kept tasks of one month as emit recorded them: done emit items whose candidate validate still keeps. */
export function monthTasks(ctx: Pick<PipelineContext, 'ledger' | 'log' | 'db'>, month: string): MonthTask[] {
  const rows = ctx.ledger.list('emit', { window: monthWindow(month), includeTimeless: false, statuses: ['done'] });
  const tasks: MonthTask[] = [];
  for (const row of rows) {
    if (ctx.ledger.get('validate', row.key)?.status !== 'done') continue;
    const parsed = emitOutputSchema.safeParse(row.output);
    if (!parsed.success) {
      ctx.log.warn(
        { stage: 'emit', item: row.key, issue: parsed.error.issues[0]?.message },
        'emit output unreadable; task left out of the month',
      );
      continue;
    }
    const blobs: Record<string, BlobRef> = {};
    let missing: string | null = null;
    for (const [path, digest] of Object.entries(parsed.data.blobs)) {
      const ref = blobRef(ctx.db, digest);
      if (ref) blobs[path] = ref;
      else missing = path;
    }
    if (missing !== null) {
      ctx.log.warn(
        { stage: 'emit', item: row.key, file: missing },
        'a file of the task is gone from the store; task left out of the month',
      );
      continue;
    }
    tasks.push({ row: parsed.data.row, files: parsed.data.files, blobs });
  }
  return tasks;
}

/** Writes the whole month from every kept task of it (whatever this run's --repo or --pr filter). */
export function emitMonth(
  ctx: Pick<PipelineContext, 'ledger' | 'log' | 'config' | 'db'>,
  month: string,
  producedAt: string = nowIso(),
): MonthManifest {
  const manifest = writeMonth(ctx.config.out, month, monthTasks(ctx, month), producedAt, PRODUCER);
  ctx.log.info({ stage: 'emit', month, tasks: manifest.tasks, out: ctx.config.out }, 'month written');
  return manifest;
}

/**
 * emit: one dataset row and task folder per kept candidate; finish writes each month of the
 * window (tasks.jsonl, tasks.parquet, task folders, manifest.json) from all of its kept tasks.
 * A rules-only statement gets the measured workloads here; a statement that names the solution
 * (pipeline/concepts/leak-check.ts) is not emitted: dropped as `statement-leaks-solution`. Each
 * folder carries the sealed history of its base commit (sealed-sources.ts), stored as blobs, and,
 * when emit.vendorWheels says so, its lock's files (carried-wheels.ts), blobs too.
 */
export function createEmitStage(sealedSources: SealedSourcesFactory = sealedSourcesOf) {
  return defineStage<EmitInput, EmitOutput>({
    name: 'emit',
    // 2: the task Dockerfile has synthesize's layout (/repo, PERFMINE_PYTHON) and base image
    // 3: rules-only statements from the measured workloads; every statement leak-checked (issue 18)
    // 4: the task folder gains instruction.md and score.sh
    // 5: sealed tasks: the folder carries its history (source/repo.bundle) and perfmine-bench, and
    //    says how to measure with it (issue 28)
    // 6: the folder carries its lock's files (wheels/, hash-checked) when its index is not public (issue 36)
    version: 6,
    description: 'dataset rows and task folders of kept candidates; per month tasks.jsonl, tasks.parquet and a manifest',
    system: 'local',

    async plan(ctx, scope) {
      const items: WorkItem<EmitInput>[] = [];
      const builds = new BuildScripts(ctx.db);
      const perfmineFiles = sha256(JSON.stringify(sourceTierFiles().map((f) => [f.name, f.mode ?? 0o644, sha256(textOf(f))])));
      for (const { row, output: validate } of previousOutputs(ctx, 'emit', 'validate', validateOutputSchema, scope)) {
        const classify = classifyOutputSchema.safeParse(ctx.ledger.get('classify', row.key)?.output);
        if (!classify.success) {
          ctx.log.warn({ stage: 'emit', item: row.key }, 'classify output unreadable; item skipped');
          continue;
        }
        const synthesize = synthesizeOutputSchema.safeParse(
          ctx.ledger.get('synthesize', commitKey(validate.repo, validate.baseSha))?.output,
        );
        const validation = loadValidation(ctx.db, row.key);
        const prContentHash = pullRequestContentHash(ctx.db, validate.repo, validate.number);
        const attempt = synthesize.success ? builds.get(synthesize.data.attemptId) : undefined;
        if (!synthesize.success || !validation || prContentHash === undefined) {
          ctx.log.warn({ stage: 'emit', item: row.key }, 'synthesize output, measurements or pull request missing; item skipped');
          continue;
        }
        items.push({
          key: row.key,
          repo: validate.repo,
          at: validate.mergedAt,
          input: {
            validate,
            classify: classify.data,
            synthesize: synthesize.data,
            prContentHash,
            workloads: loadWorkloadVerdicts(ctx.db, row.key),
            validation,
            improved: improvedWorkloads(ctx.db, row.key),
            statementTemplate: loadPrompt('problem-statement').hash,
            config: emitResultSettings(ctx.config),
            buildMs: attempt?.steps.find((st) => st.step === 'build')?.durationMs ?? null,
            perfmineFiles,
          },
        });
      }
      return items;
    },

    async run(ctx, item) {
      const { validate, classify, synthesize, config } = item.input;
      const protocol = parseProtocol(item.input.validation.protocol);
      const measuringTool = measuringToolText({
        engine: item.input.validation.engine === 'asv' ? 'asv' : 'perfmine',
        workloads: item.input.workloads.length,
        compareMinutes: compareMinutesOf(protocol.measuredMs, item.input.buildMs),
      });
      const pr = loadPullRequest(ctx.db, validate.repo, validate.number);
      if (!pr) throw new ItemError('pull-request-missing', `${item.key}: its record is not in the store`);
      const statement = emittedStatement({
        classify,
        improved: item.input.improved,
        diff: pr.diff,
        files: pr.files,
        templateText: statementTemplateText(loadPrompt('problem-statement')),
        measuringTool,
      });
      if (!statement.ok) {
        if (statement.reason === 'no-measured-workloads') {
          throw new ItemError('no-measured-workloads', `${item.key}: validate kept it but ${statement.detail}`, {
            fix: `run \`perfmine stage validate --force --pr ${validate.number}\` for it`,
          });
        }
        ctx.log.info({ leaks: statement.leaks.slice(0, 10) }, 'problem statement names the solution: not emitted');
        return { status: 'dropped', reason: 'statement-leaks-solution', detail: statement.detail };
      }
      const row = assembleRow({
        repo: validate.repo,
        number: validate.number,
        baseSha: validate.baseSha,
        mergeSha: validate.mergeSha,
        createdAt: pr.createdAt,
        mergedAt: validate.mergedAt,
        problemStatement: statement.statement,
        patch: pr.diff,
        imageName: imageNameOf(config.imageName, validate.repo, validate.number),
        buildScript: synthesize.script,
        workloads: item.input.workloads,
        category: classify.category,
        difficulty: classify.difficulty,
        classifier: classify.classifier,
      });
      const history = await sealedSources(ctx).history(synthesize, ctx.signal);
      const blobs: Record<string, string> = {};
      for (const [path, data] of history) blobs[path] = saveBlob(ctx.db, data);
      const wheels = await carriedWheels(
        ctx.db,
        { key: item.key, repo: validate.repo, month: validate.mergedAt.slice(0, 7) },
        synthesize.lock ?? null,
        config.vendorWheels,
        lockedFilesIndex(ctx),
      );
      const perfmineFiles = sourceTierFiles({
        baseCommit: validate.baseSha,
        asvConfig: synthesize.asvConfigPath,
        python: synthesize.pythonVersion ? `python${synthesize.pythonVersion}` : null,
        protocol: { ...(item.input.validation.protocol ?? {}), paired: item.input.validation.pairedOptions },
      });
      const files = taskFiles({
        row,
        workloads: item.input.workloads,
        validation: item.input.validation,
        baseImage: synthesize.baseImage,
        verifiedImage: synthesize.imageTag,
        scriptSource: synthesize.scriptSource,
        pythonVersion: synthesize.pythonVersion,
        repoUrl: config.repoUrl.replaceAll('{repo}', validate.repo),
        perfmineFiles,
        sealedHistory: blobs,
        measuringTool,
        lock: synthesize.lock ?? null,
        wheels: wheels.files,
        packageTier: synthesize.packageTier ?? null,
        provenance: {
          categorySource: classify.categoryModel ?? null,
          categoryReason: classify.categoryReason ?? null,
          statementSource: classify.problemSource ?? null,
          leakCheckBasis: statement.vocabulary.basis,
        },
      });
      return { status: 'done', output: { row, files, blobs: { ...blobs, ...wheels.blobs } } };
    },

    async finish(ctx: PipelineContext, scope: Scope) {
      for (const month of monthsOf(scope.window)) ctx.metrics.add('emit.tasks', emitMonth(ctx, month).tasks);
    },
  });
}

export const emitStage = createEmitStage();

/** Where emit asks for a locked file the store did not keep: this run's package index (synthesize.index.upstream). */
function lockedFilesIndex(ctx: Pick<PipelineContext, 'config' | 'db'>): Upstream {
  const { upstream, timeoutSeconds, retries } = ctx.config.synthesize.index;
  return upstreamOf(upstream, { store: ctx.db, timeoutMs: timeoutSeconds * 1000, retries });
}

/** What the task's instructions need of validate's recorded protocol. */
function parseProtocol(protocol: Readonly<Record<string, unknown>> | null): { measuredMs: number | null } {
  const measured = protocol?.['measuredMs'];
  return { measuredMs: typeof measured === 'number' ? measured : null };
}

function textOf(entry: TarEntry): string {
  return typeof entry.content === 'string' || Buffer.isBuffer(entry.content) ? entry.content.toString() : entry.content.file;
}
