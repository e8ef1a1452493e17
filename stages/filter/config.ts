import { z } from 'zod';
import { DEFAULT_NON_FUNCTIONAL_PATHS } from '../../pipeline/concepts/path-matcher.js';

/** Configuration of the filter stage (the `filter` key of perfmine.config.json). */
export const filterConfig = z
  .object({
    /** More changed files than this: dropped (`too-many-files`). */
    maxFiles: z.number().int().positive().default(500),
    /** More added + deleted lines than this: dropped (`too-many-lines`). */
    maxChangedLines: z.number().int().positive().default(80_000),
    /** A diff longer than this many tokens cannot be shown to the LLM: dropped (`diff-too-large`). */
    maxDiffTokens: z.number().int().positive().default(64_000),
    /** The tokenizer that counts the diff (js-tiktoken). */
    tokenizer: z.enum(['o200k_base', 'cl100k_base']).default('o200k_base'),
    /** Non-functional path globs; replaces the default list. */
    nonFunctionalPaths: z.array(z.string().min(1)).default([...DEFAULT_NON_FUNCTIONAL_PATHS]),
    /** Globs added to `nonFunctionalPaths` (the usual way to extend the list). */
    extraNonFunctionalPaths: z.array(z.string().min(1)).default([]),
  })
  .strict();

export type FilterConfig = z.infer<typeof filterConfig>;
