import { z } from 'zod';
import { collectOutputSchema } from './pull-request.js';

const cueMatchSchema = z.object({
  cue: z.string(),
  where: z.enum(['title', 'body', 'branch', 'label', 'files']),
  text: z.string(),
});

/**
 * What filter records for every pull request it decides (done items are handed on to classify;
 * dropped ones keep it for tracing). Classify reads it from the ledger.
 */
export const filterOutputSchema = collectOutputSchema.extend({
  // contentHash: the hash of the collected record the decision was made on.
  /** `positive` / `mixed` / `ambiguous` / `negative` (see stages/filter/message.ts). */
  messageVerdict: z.enum(['positive', 'mixed', 'ambiguous', 'negative']),
  /**
   * Positive performance cues found (title, body, branch name, labels, and `files`: asv benchmarks
   * changed beside core files); `--llm none` relies on all but the labels.
   */
  positiveCues: z.array(cueMatchSchema),
  negativeCues: z.array(cueMatchSchema),
  /** Changed files outside the non-functional paths. */
  coreFiles: z.array(z.string()),
  changedFiles: z.number().int().nonnegative(),
  changedLines: z.number().int().nonnegative(),
  /**
   * Tokens of the diff: counted only when its UTF-8 size exceeds the token budget (a token covers
   * at least one byte, so a smaller diff is within the budget); null when not counted.
   */
  diffTokens: z.number().int().nonnegative().nullable(),
  /** UTF-8 bytes of the diff (null when a cheaper rule decided first). */
  diffBytes: z.number().int().nonnegative().nullable(),
  tokenizer: z.string(),
  /** Path of the asv config at the base commit, when there is one. */
  asvConfigPath: z.string().nullable(),
  /** The asv config's benchmark_dir, relative to the repository root (null when unknown). */
  benchmarkDir: z.string().nullable(),
});
export type FilterOutput = z.infer<typeof filterOutputSchema>;
export type CueMatchOutput = z.infer<typeof cueMatchSchema>;

/** One performance cue filter found (stages/filter/message.ts). */
export type RecordedCue = z.infer<typeof cueMatchSchema>;

/**
 * Positive cues found in the title, the body, the branch name or the changed benchmarks (labels
 * do not count): what `--llm none` relies on.
 */
export function textCues(decision: { readonly positive: readonly RecordedCue[] }): readonly RecordedCue[] {
  return decision.positive.filter((c) => c.where !== 'label');
}

/** The changed-benchmarks cue, when filter found one (stages/filter/decide.ts). */
export function benchmarkCue(decision: { readonly positive: readonly RecordedCue[] }): RecordedCue | null {
  return decision.positive.find((c) => c.where === 'files' && c.cue === 'benchmarks') ?? null;
}
