import { ConfigError } from './errors.js';
import type { Emitter } from './events.js';
import type { Registry } from './registry.js';
import { runStage, type RunnerEvents, type StageReport } from './runner.js';
import type { Scope } from './scope.js';
import { STAGE_NAMES, type PipelineContext, type StageName } from './stage.js';
import { loadStage } from './stage-loaders.js';

export interface PipelineOptions {
  readonly untilStage?: StageName;
  readonly dryRun?: boolean;
  readonly force?: boolean;
  readonly drain?: AbortSignal;
  readonly events?: Emitter<RunnerEvents>;
  /** The stages to chain (default: this version's, each loaded when the chain reaches it). */
  readonly registry?: Registry;
}

export interface PipelineResult {
  readonly reports: readonly StageReport[];
  readonly interrupted: boolean;
  /**
   * A stage that could not start or go on for a reason the operator must fix (no asv in the base
   * image, a missing credential): the chain stops there; the reports of the stages before it stand.
   */
  readonly stopped: { readonly stage: StageName; readonly error: ConfigError } | null;
}

/**
 * Runs the registered stages in order for one scope. A configuration problem met by a stage stops
 * the chain there and is returned with what the earlier stages did; any other error propagates.
 */
export async function runPipeline(ctx: PipelineContext, scope: Scope, options: PipelineOptions = {}): Promise<PipelineResult> {
  const end = options.untilStage ? STAGE_NAMES.indexOf(options.untilStage) : STAGE_NAMES.length - 1;
  const chain = STAGE_NAMES.slice(0, end + 1);
  const reports: StageReport[] = [];
  for (const name of chain) {
    const stage = await loadStage(name, options.registry);
    if (options.drain?.aborted) return { reports, interrupted: true, stopped: null };
    let report: StageReport;
    try {
      report = await runStage(ctx, stage, scope, {
        ...(options.force === undefined ? {} : { force: options.force }),
        ...(options.dryRun === undefined ? {} : { dryRun: options.dryRun }),
        ...(options.drain === undefined ? {} : { drain: options.drain }),
        ...(options.events === undefined ? {} : { events: options.events }),
      });
    } catch (error) {
      if (error instanceof ConfigError) return { reports, interrupted: false, stopped: { stage: name, error } };
      throw error;
    }
    reports.push(report);
    if (report.notStarted > 0) return { reports, interrupted: true, stopped: null };
  }
  return { reports, interrupted: options.drain?.aborted ?? false, stopped: null };
}
