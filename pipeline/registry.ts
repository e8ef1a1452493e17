import { classifyStage } from '../stages/classify/index.js';
import { collectStage } from '../stages/collect/index.js';
import { discoverStage } from '../stages/discover/index.js';
import { emitStage } from '../stages/emit/index.js';
import { filterStage } from '../stages/filter/index.js';
import { synthesizeStage } from '../stages/synthesize/index.js';
import { validateStage } from '../stages/validate/index.js';
import type { AnyStage, StageName } from './stage.js';

/** Every stage of the design by name: this version implements them all, so none is ever missing. */
export type Registry = Readonly<Record<StageName, AnyStage>>;

export const registry: Registry = {
  discover: discoverStage,
  collect: collectStage,
  filter: filterStage,
  classify: classifyStage,
  synthesize: synthesizeStage,
  validate: validateStage,
  emit: emitStage,
};

/** The registry with some stages replaced by others of the same name (a test's doubles). */
export function withStages(replacements: readonly AnyStage[]): Registry {
  return { ...registry, ...Object.fromEntries(replacements.map((s) => [s.name, s])) };
}
