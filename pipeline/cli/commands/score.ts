import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { checkDatabasePath } from '../../../cache/database-path.js';
import { Ledger } from '../../../cache/ledger.js';
import { ScoreStore } from '../../../cache/scores.js';
import { openStore } from '../../../cache/store.js';
import { aggregateByModel, rejectedResult, scorePredictions, type PredictionResult } from '../../../tasks/score/index.js';
import { formatAggregate, formatScoreRows } from '../../../tasks/score/format.js';
import {
  DEFAULT_MAX_PATCH_BYTES,
  parsePredictions,
  PredictionsFileError,
  type ParsedPredictions,
} from '../../../tasks/score/predictions.js';
import { emittedRows, loadScoreTask, resolveTaskArgument, type ScoreTask } from '../../../tasks/score/task-source.js';
import { measureSidesOnSlurm, verifierDeps } from '../../../tasks/score/remote.js';
import { ConfigError, EXIT } from '../../errors.js';
import { Metrics } from '../../metrics.js';
import { DockerService } from '../../services/docker.js';
import { noteDb } from '../db-label.js';
import { openSession, print, printJson, type GlobalFlags } from '../session.js';
import { startLocalIndex } from '../../services/package-index/local-index.js';
import { JUDGE_MODES, type JudgeMode } from '../../../tasks/score/judge.js';
import { createContext } from '../../context.js';
import type { LlmService } from '../../services/llm-port.js';

export interface ScoreFlags {
  readonly task?: string;
  readonly patch?: string;
  readonly model?: string;
  readonly predictions?: string;
  readonly results?: string;
  readonly force?: boolean;
  readonly maxPatchBytes?: string;
  /** PIP_INDEX_URL for the environments' builds: an index URL, or dir:PATH served on loopback (the demo's index). */
  readonly index?: string;
  /** The rubric judge: off (default), report, enforce. */
  readonly judge?: string;
}

export interface ScoreRun {
  readonly rows: readonly PredictionResult[];
  readonly models: ReturnType<typeof aggregateByModel>;
  readonly results: string;
  readonly summary: string;
}

/** The rows to score: one `--task`/`--patch` pair, or a predictions file. */
function readInput(flags: ScoreFlags, known: ReadonlySet<string>): { parsed: ParsedPredictions; name: string } {
  const max = flags.maxPatchBytes === undefined ? DEFAULT_MAX_PATCH_BYTES : Number(flags.maxPatchBytes);
  if (!Number.isInteger(max) || max <= 0)
    throw new ConfigError(`--max-patch-bytes ${flags.maxPatchBytes}: not a positive integer`, { reason: 'usage' });
  if (flags.predictions !== undefined) {
    if (flags.task !== undefined || flags.patch !== undefined)
      throw new ConfigError('score: --predictions goes alone, without --task or --patch', { reason: 'usage' });
    let text: string;
    try {
      text = readFileSync(flags.predictions, 'utf8');
    } catch (error) {
      throw new ConfigError(`--predictions ${flags.predictions}: ${(error as Error).message}`, { reason: 'usage' });
    }
    try {
      return {
        parsed: parsePredictions(text, known, { maxPatchBytes: max }),
        name: basename(flags.predictions).replace(/\.(jsonl|json)$/, ''),
      };
    } catch (error) {
      if (error instanceof PredictionsFileError)
        throw new ConfigError(`--predictions ${flags.predictions}: ${error.message}`, { reason: 'invalid-predictions' });
      throw error;
    }
  }
  if (flags.task === undefined || flags.patch === undefined) {
    throw new ConfigError('score: pass --task ID|DIR with --patch FILE, or --predictions FILE', {
      reason: 'usage',
      fix: 'perfmine score --task owner__name-N --patch agent.patch',
    });
  }
  const instanceId = resolveTaskArgument(flags.task);
  let size: number;
  try {
    size = statSync(flags.patch).size;
  } catch (error) {
    throw new ConfigError(`--patch ${flags.patch}: ${(error as Error).message}`, { reason: 'usage' });
  }
  const model = flags.model ?? 'patch';
  const row = {
    instance_id: instanceId,
    model_name_or_path: model,
    model_patch: size > max ? 'x'.repeat(max + 1) : readFileSync(flags.patch, 'utf8'),
  };
  return {
    parsed: parsePredictions(JSON.stringify(row), known, { maxPatchBytes: max }),
    name: `${instanceId}.${model.replace(/[^A-Za-z0-9._-]+/g, '_')}`,
  };
}

/** `--judge`: the mode, checked against the configuration (the judge needs an LLM). */
function judgeMode(flags: ScoreFlags, llmMode: 'openai' | 'none'): JudgeMode {
  const mode = flags.judge ?? 'off';
  if (!(JUDGE_MODES as readonly string[]).includes(mode))
    throw new ConfigError(`--judge ${mode}: expected one of ${JUDGE_MODES.join(', ')}`, { reason: 'usage' });
  if (mode !== 'off' && llmMode === 'none')
    throw new ConfigError(`--judge ${mode}: the rubric judge asks an LLM, and llm.mode is none`, {
      reason: 'usage',
      fix: 'configure an LLM (llm.mode openai, OPENAI_BASE_URL and OPENAI_API_KEY, or --llm openai), or leave --judge off',
    });
  return mode as JudgeMode;
}

/** `perfmine score`: the work, with the container engine given (tests pass theirs), and the LLM (tests point it at a loopback server). */
export async function runScore(flags: ScoreFlags, globals: GlobalFlags, docker?: DockerService, llm?: LlmService): Promise<ScoreRun> {
  const session = openSession(globals);
  const { config, log } = session;
  const judge = judgeMode(flags, config.llm.mode);
  // a task folder named by --task is read first: one that cannot be read is the error to report, before the store
  if (flags.task !== undefined) resolveTaskArgument(flags.task);
  if (checkDatabasePath(config.db, 'write') !== 'sqlite') {
    throw new ConfigError(`db: no database at ${config.db}: nothing was emitted to score against`, {
      reason: 'no-database',
      fix: 'pass --db the database of the runs that emitted the tasks',
    });
  }
  const db = openStore(config.db);
  if (!session.json) noteDb(config.db);
  try {
    const ledger = new Ledger(db);
    const emitted = emittedRows(ledger);
    const { parsed, name } = readInput(flags, new Set(emitted.keys()));
    const tasks = new Map<string, ScoreTask>();
    const broken = new Map<string, ConfigError>();
    for (const id of new Set(parsed.predictions.map((p) => p.instanceId))) {
      try {
        tasks.set(id, loadScoreTask(db, emitted.get(id)!));
      } catch (error) {
        if (!(error instanceof ConfigError)) throw error;
        broken.set(id, error);
      }
    }
    const metrics = new Metrics();
    const judgeLlm =
      judge === 'off' ? null : (llm ?? createContext({ config, credentials: session.credentials, db, log, metrics }).services.llm);
    const scorable = parsed.predictions.filter((p) => !broken.has(p.instanceId));
    // dir:PATH: a loopback index over the directory while the environments build (the demo's)
    const index = flags.index ?? null;
    if (index !== null && !/^(https?:\/\/.+|dir:.+)$/.test(index))
      throw new ConfigError(`--index ${index}: expected an index URL (http://…/simple/) or dir:PATH`, { reason: 'usage' });
    // a task whose files the store lacks: its rows are errors, the other tasks' rows are scored
    const unscorable = parsed.predictions
      .filter((p) => broken.has(p.instanceId))
      .map((p): PredictionResult => ({
        ...rejectedResult({ row: p.row, instanceId: p.instanceId, model: p.model, reason: 'unknown-instance', message: '' }),
        status: 'error',
        failure: broken.get(p.instanceId)!.reason,
        detail: broken.get(p.instanceId)!.message,
      }));
    const local = index?.startsWith('dir:') ? await startLocalIndex({ dir: resolve(index.slice(4)) }) : null;
    let scored: PredictionResult[];
    try {
      // executor slurm: the sides to verify run as Slurm jobs first; the rows below read them from the store
      const remote =
        config.executor.kind === 'slurm'
          ? await measureSidesOnSlurm({ db, config, log, tasks, predictions: scorable, force: flags.force ?? false })
          : {};
      scored = await scorePredictions(tasks, scorable, parsed.rejected, {
        ...remote,
        ...verifierDeps(config, docker ?? new DockerService({ runLabel: 'score', metrics }), local?.url ?? index),
        store: new ScoreStore(db),
        log,
        metrics,
        ...(flags.force ? { force: true } : {}),
        ...(judgeLlm ? { judge: { mode: judge, llm: judgeLlm } } : {}),
      });
    } finally {
      await local?.close();
    }
    const rows = [...scored, ...unscorable].sort((a, b) => a.row - b.row);
    const models = aggregateByModel(
      rows
        .filter((r) => r.status !== 'rejected' && r.model_name_or_path !== null)
        .map((r) => ({ model: r.model_name_or_path!, instanceId: r.instance_id ?? '', failure: r.failure, score: r.score })),
    );
    const results = resolve(flags.results ?? join(config.out, 'scores', `${name}.jsonl`));
    const summaryPath = results.replace(/\.jsonl$/, '') + '.summary.txt';
    const summary = `${formatScoreRows(rows)}\n\n${formatAggregate(models)}\n`;
    mkdirSync(dirname(results), { recursive: true });
    writeFileSync(results, rows.map((r) => JSON.stringify({ ...r, score: undefined })).join('\n') + (rows.length > 0 ? '\n' : ''));
    writeFileSync(summaryPath, summary);
    return { rows, models, results, summary };
  } finally {
    db.close();
  }
}

/** `perfmine score`'s action: score, print (or JSON), and set the exit code (1 when a row was rejected or broke). */
export async function scoreCommand(flags: ScoreFlags, globals: GlobalFlags): Promise<number> {
  const run = await runScore(flags, globals);
  if (globals.json) printJson({ results: run.results, rows: run.rows.map((r) => ({ ...r, score: undefined })), models: run.models });
  else print(`${run.summary}\nresults: ${run.results}`);
  return run.rows.some((r) => r.status === 'error' || r.status === 'rejected') ? EXIT.itemsFailed : EXIT.ok;
}
