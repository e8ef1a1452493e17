import { checkDatabasePath } from '../../../cache/database-path.js';
import { finishRun, refuseIfBusy, startRun } from '../../../cache/runs.js';
import { openStore, openStoreSnapshot } from '../../../cache/store.js';
import { checkOutputDirectory, checkSourceClone } from '../../paths.js';
import { STAGE_NAMES, type StageName } from '../../stage.js';
import { describeDb } from '../db-label.js';
import { createContext } from '../../context.js';
import { ConfigError, EXIT } from '../../errors.js';
import { reportError } from '../report-error.js';
import { Emitter } from '../../events.js';
import { runPipeline, type PipelineResult } from '../../orchestrate.js';
import { attachProgress } from '../../progress.js';
import type { Registry } from '../../registry.js';
import { loadStage } from '../../stage-loaders.js';
import type { ServiceOverrides } from '../../services/index.js';
import { anyFailed, runStage, type RunnerEvents } from '../../runner.js';
import { formatSource } from '../../scope.js';
import { installShutdown } from '../../shutdown.js';
import { cancelRemoteJobsSync } from '../../executor/run-remote.js';
import { formatMetrics, formatReports } from '../../summary.js';
import { resolveScope, resolveStageFlag, type ScopeFlags } from '../scope-options.js';
import { openSession, print, printJson, type GlobalFlags } from '../session.js';
import { calibrationSummaryLine } from '../../../stages/validate/run-summary.js';

export interface RunFlags extends ScopeFlags {
  readonly untilStage?: string;
  readonly dryRun?: boolean;
  readonly force?: boolean;
}

/** `perfmine run` and `perfmine stage <name>`: returns the exit code. */
export async function runCommand(
  kind: 'run' | 'stage',
  stageName: string | undefined,
  flags: RunFlags,
  globals: GlobalFlags,
  /** The stages (a test's doubles); undefined: this version's, each loaded when it is needed. */
  registry: Registry | undefined,
  services?: ServiceOverrides,
): Promise<number> {
  const session = openSession(globals);
  const { config, log } = session;
  const scope = resolveScope(flags, config);
  const untilStage = resolveStageFlag('--until-stage', flags.untilStage);
  const stage = stageName === undefined ? undefined : await loadStage(stageName, registry);
  const dryRun = flags.dryRun ?? false;

  // Every path the run will use, before any work and before anything is written; a dry run
  // makes the same checks.
  checkDatabasePath(config.db, 'write');
  const chain: readonly StageName[] = stage
    ? [stage.name]
    : STAGE_NAMES.slice(0, untilStage ? STAGE_NAMES.indexOf(untilStage) + 1 : STAGE_NAMES.length);
  if (chain.includes('emit')) checkOutputDirectory(config.out, '--out');
  if (scope.source.kind === 'git' && (chain.includes('discover') || chain.includes('collect'))) checkSourceClone(scope.source.path);

  // A dry run plans over a copy of the store in memory: it reads what is there and writes nothing.
  const db = dryRun ? openStoreSnapshot(config.db) : openStore(config.db);
  const command = kind === 'run' ? 'run' : `stage ${stageName}`;
  const args = {
    window: scope.window,
    repos: scope.repos,
    prs: scope.prs,
    source: formatSource(scope.source),
    untilStage,
    dryRun,
    force: flags.force ?? false,
  };
  let runId: number | null = null;
  try {
    if (dryRun) refuseIfBusy(db);
    else runId = startRun(db, { command, args, windowLabel: scope.window.label });
  } catch (error) {
    db.close();
    throw error;
  }
  const shutdown = installShutdown(log, () => {
    cancelRemoteJobsSync();
    if (runId !== null) finishRun(db, runId, 'interrupted', EXIT.interrupted, { interrupted: 'hard stop' });
  });
  const ctx = createContext({
    config,
    credentials: session.credentials,
    db,
    log,
    runId,
    signal: shutdown.hard,
    ...(services ? { services } : {}),
  });
  const events = new Emitter<RunnerEvents>();
  const detach = attachProgress(events, { statusLine: session.statusLine, log, intervalMs: config.progressIntervalSeconds * 1000 });

  log.info({ command, window: scope.window.label, source: formatSource(scope.source), repos: scope.repos, runId, dryRun }, 'starting');
  const started = Date.now();
  let result: PipelineResult;
  try {
    if (stage) {
      try {
        const report = await runStage(ctx, stage, scope, { force: flags.force ?? false, dryRun, drain: shutdown.drain, events });
        result = { reports: [report], interrupted: shutdown.drain.aborted, stopped: null };
      } catch (error) {
        if (!(error instanceof ConfigError)) throw error;
        result = { reports: [], interrupted: false, stopped: { stage: stage.name, error } };
      }
    } else {
      result = await runPipeline(ctx, scope, {
        ...(untilStage ? { untilStage } : {}),
        dryRun,
        force: flags.force ?? false,
        drain: shutdown.drain,
        events,
        ...(registry ? { registry } : {}),
      });
    }
  } catch (error) {
    if (runId !== null) finishRun(db, runId, 'failed', EXIT.config, { error: (error as Error).message, metrics: ctx.metrics.snapshot() });
    throw error;
  } finally {
    detach();
    shutdown.dispose();
  }

  const failed = anyFailed(result.reports);
  const exitCode = result.stopped ? EXIT.config : result.interrupted ? EXIT.interrupted : failed ? EXIT.itemsFailed : EXIT.ok;
  const stopped = result.stopped && {
    stage: result.stopped.stage,
    reason: result.stopped.error.reason,
    issues: result.stopped.error.issues,
    fix: result.stopped.error.fix ?? null,
  };
  const summary = {
    command,
    window: scope.window.label,
    dryRun,
    durationMs: Date.now() - started,
    stages: result.reports,
    interrupted: result.interrupted,
    stopped,
    metrics: ctx.metrics.snapshot(),
  };
  if (runId !== null)
    finishRun(db, runId, result.interrupted ? 'interrupted' : failed || stopped ? 'failed' : 'succeeded', exitCode, summary);
  db.close();

  if (session.json) printJson({ runId, exitCode, db: config.db, ...summary });
  else {
    const head = `perfmine ${command} ${scope.window.label} (${formatSource(scope.source)})${describeDb(config.db, ' (database %s)')}${dryRun ? ' [dry run: checked and planned; nothing was run, built or written]' : ''}`;
    const lines = [head, formatReports(result.reports)];
    const costs = formatMetrics(summary.metrics);
    if (costs) lines.push(costs);
    const calibration = calibrationSummaryLine(summary.metrics);
    if (calibration !== null) lines.push(calibration);
    if (dryRun && result.reports.length > 1)
      lines.push('(a dry run runs nothing, so each stage counts what the stages before it had already produced)');
    if (result.interrupted) lines.push('interrupted: the items not started stay pending; run the same command again to resume');
    if (stopped)
      lines.push(
        dryRun
          ? `a real run would stop at ${stopped.stage} (the reason follows)`
          : `stopped at ${stopped.stage} (the reason follows; the stages before it are recorded)`,
      );
    print(lines.join('\n'));
  }
  // What stopped the chain is a configuration problem: on stderr, as every such error, with its fix.
  if (result.stopped) reportError(result.stopped.error);
  return exitCode;
}
