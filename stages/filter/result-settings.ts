import type { Config } from '../../pipeline/config/schema.js';
import type { FilterConfig } from './config.js';

/**
 * The settings that change a filter decision: every rule of the `filter` section (size limits,
 * the tokenizer and its budget, the non-functional paths). Their hash is the `rules` of every
 * filter item's input, so a change of any rule decides every item again. Pure
 * (test/run/input-hashes.test.ts); a new key of the section must be classified there.
 */
export function filterResultSettings(config: Config): FilterConfig {
  const f = config.filter;
  return {
    maxFiles: f.maxFiles,
    maxChangedLines: f.maxChangedLines,
    maxDiffTokens: f.maxDiffTokens,
    tokenizer: f.tokenizer,
    nonFunctionalPaths: f.nonFunctionalPaths,
    extraNonFunctionalPaths: f.extraNonFunctionalPaths,
  };
}
