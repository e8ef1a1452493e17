import { ConfigError } from './errors.js';
import { STAGE_NAMES, isStageName, type AnyStage, type StageName } from './stage.js';
import { synthesizeStage } from '../stages/synthesize/index.js';

/**
 * The stages this version implements, in pipeline order. A stage of the design that is not
 * listed here is reported as not implemented, never faked.
 */
const STAGES: readonly AnyStage[] = [synthesizeStage];

export const registry: ReadonlyMap<StageName, AnyStage> = new Map(STAGES.map((s) => [s.name, s]));

export function isRegistered(name: StageName): boolean {
  return registry.has(name);
}

/** The stage of that name, or a ConfigError that says why there is none. */
export function getStage(name: string): AnyStage {
  if (!isStageName(name)) {
    throw new ConfigError(`stage: unknown stage "${name}"; the stages are ${STAGE_NAMES.join(', ')}`, { reason: 'unknown-stage' });
  }
  const stage = registry.get(name);
  if (!stage) {
    throw new ConfigError(`stage: "${name}" is not implemented in this version of perfmine (unknown to the registry)`, {
      reason: 'stage-not-implemented',
      fix: `implemented stages: ${[...registry.keys()].join(', ') || 'none yet'}`,
    });
  }
  return stage;
}

/** Stage names from the first up to and including `until`. */
export function stagesUpTo(until?: StageName): StageName[] {
  const end = until ? STAGE_NAMES.indexOf(until) : STAGE_NAMES.length - 1;
  return STAGE_NAMES.slice(0, end + 1);
}
