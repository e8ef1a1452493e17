import { ConfigError } from './errors.js';
import type { Registry } from './registry.js';
import { STAGE_NAMES, isStageName, type AnyStage, type StageName } from './stage.js';

/**
 * Each stage of this version, imported when it is first asked for: `perfmine stage collect`
 * loads collect's code and what it uses, not the other stages' clients, schemas and prompts (the
 * compiled CLI starts about 25 ms sooner; `npm run bench -- git-collect`). `registry.ts` imports
 * them all, for the commands that chain them.
 */
const LOADERS: { readonly [N in StageName]: () => Promise<AnyStage> } = {
  discover: async () => (await import('../stages/discover/index.js')).discoverStage,
  collect: async () => (await import('../stages/collect/index.js')).collectStage,
  filter: async () => (await import('../stages/filter/index.js')).filterStage,
  classify: async () => (await import('../stages/classify/index.js')).classifyStage,
  synthesize: async () => (await import('../stages/synthesize/index.js')).synthesizeStage,
  validate: async () => (await import('../stages/validate/index.js')).validateStage,
  emit: async () => (await import('../stages/emit/index.js')).emitStage,
};

/** The name as a stage's, or a ConfigError that lists the stages. */
export function stageNameOf(name: string): StageName {
  if (!isStageName(name)) {
    throw new ConfigError(`stage: unknown stage "${name}"; the stages are ${STAGE_NAMES.join(', ')}`, { reason: 'unknown-stage' });
  }
  return name;
}

/**
 * The stage of that name: from `stages` when given (a test's doubles), else this version's, its
 * module loaded now; a ConfigError for a name that is none.
 */
export async function loadStage(name: string, stages?: Registry): Promise<AnyStage> {
  const checked = stageNameOf(name);
  return stages ? stages[checked] : LOADERS[checked]();
}
