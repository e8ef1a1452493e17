import { classifyStage } from '../stages/classify/index.js';
import { collectStage } from '../stages/collect/index.js';
import { discoverStage } from '../stages/discover/index.js';
import { emitStage } from '../stages/emit/index.js';
import { filterStage } from '../stages/filter/index.js';
import { synthesizeStage } from '../stages/synthesize/index.js';
import { validateStage } from '../stages/validate/index.js';
import { ConfigError } from './errors.js';
import { STAGE_NAMES, isStageName, type AnyStage, type StageName } from './stage.js';

export type Registry = ReadonlyMap<StageName, AnyStage>;

/**
 * The stages this version implements, in pipeline order. A stage of the design that is not
 * listed here is reported as not implemented, never faked.
 */
const STAGES: readonly AnyStage[] = [discoverStage, collectStage, filterStage, classifyStage, synthesizeStage, validateStage, emitStage];

export const registry: Registry = makeRegistry(STAGES);

export function makeRegistry(stages: readonly AnyStage[]): Registry {
  return new Map(stages.map((s) => [s.name, s]));
}

/** The stage of that name, or a ConfigError that says why there is none. */
export function getStage(name: string, stages: Registry = registry): AnyStage {
  if (!isStageName(name)) {
    throw new ConfigError(`stage: unknown stage "${name}"; the stages are ${STAGE_NAMES.join(', ')}`, { reason: 'unknown-stage' });
  }
  const stage = stages.get(name);
  if (!stage) {
    throw new ConfigError(`stage: "${name}" is not implemented in this version of perfmine (unknown to the registry)`, {
      reason: 'stage-not-implemented',
      fix: `implemented stages: ${[...stages.keys()].join(', ') || 'none yet'}`,
    });
  }
  return stage;
}
