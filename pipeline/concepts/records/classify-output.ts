import { z } from 'zod';

/** The extracted problem fields that passed the near-verbatim check (see verbatim.ts). */
export const extractedProblemSchema = z.object({
  initialObservations: z.array(z.string()),
  triageAttempts: z.array(z.string()),
  solutionOverview: z.array(z.string()),
  solutionObservations: z.array(z.string()),
  /** Sentences the LLM returned that failed the check and were dropped. */
  droppedSentences: z.number().int().nonnegative(),
});
export type ExtractedProblem = z.infer<typeof extractedProblemSchema>;

/**
 * What the expert patch brings that the base did not have, for the leak check of problem
 * statements (pipeline/concepts/leak-check.ts defines it). The quotes of added code are not stored:
 * they are computed again from the diff and `coreFiles`.
 */
export const patchVocabularySchema = z.object({
  /** `diff`: "present at the base" judged from the diff alone; `base-tree`: from the base commit's tree. */
  basis: z.enum(['diff', 'base-tree']),
  /** The changed files that count (filter's core files): tests, benchmarks and docs do not. */
  coreFiles: z.array(z.string()),
  /** Identifiers of added core code not present at the base, sorted. */
  identifiers: z.array(z.string()),
  /** Paths and file names of core files the patch adds, sorted. */
  fileNames: z.array(z.string()),
});
export type PatchVocabulary = z.infer<typeof patchVocabularySchema>;

/**
 * Under `--llm none` classify renders the statement with this line where the observations go;
 * emit puts the measured workloads there (only validate knows them). An HTML comment: issue texts
 * have theirs removed, so the line cannot come from them.
 */
export const MEASURED_WORKLOADS_SLOT = '<!-- perfmine:measured-workloads -->';

/**
 * Where emit says how to measure in the task's environment (the in-image `perfmine-bench`, and
 * asv where the engine is asv and asv is in the image): classify cannot know the environment.
 */
export const MEASURING_TOOL_SLOT = '<!-- perfmine:measuring-tool -->';

/**
 * What classify hands on for a pull request judged performance-motivated (a `done` item; a NO is
 * `dropped` with a reason). Synthesize, validate and emit read it from the ledger.
 *
 * Fields after `problemStatement` were added by issues 5 and 18; they are optional in the schema
 * so that records written by other code still parse, but classify always fills them.
 */
export const classifyOutputSchema = z.object({
  repo: z.string(),
  number: z.number().int().positive(),
  baseSha: z.string(),
  mergeSha: z.string(),
  mergedAt: z.string(),
  /** Hash of the collected record this decision was made on. */
  contentHash: z.string(),
  /** The model that judged it, or `heuristic` under `--llm none`. */
  classifier: z.string(),
  reasoning: z.string(),
  /** One of FormulaCode's 13 optimization categories; null when not classified. */
  category: z.string().nullable(),
  difficulty: z.enum(['easy', 'medium', 'hard']).nullable(),
  /**
   * The agent-facing problem statement (markdown), rendered from prompts/problem-statement.md.
   * With `problemSource: 'measured'` it holds MEASURED_WORKLOADS_SLOT, which emit fills.
   */
  problemStatement: z.string(),
  /**
   * `extracted`: observations extracted by the LLM and checked; `measured`: no observation text,
   * emit puts the measured workloads in their place (`--llm none`); `pr-text`: the pull
   * request's own text (`--llm none` before issue 18; no longer written).
   */
  problemSource: z.enum(['extracted', 'measured', 'pr-text']).optional(),
  /** The extracted fields (null under `--llm none`). */
  problem: extractedProblemSchema.nullable().optional(),
  /** Positive performance cues the filter found (cue names). */
  positiveCues: z.array(z.string()).optional(),
  /** What chose the category and difficulty: the model, `heuristic` (rules on the diff), or null when not asked. */
  categoryModel: z.string().nullable().optional(),
  /** Why the heuristic chose this category and difficulty, or why it left them null (`--llm none`). */
  categoryReason: z.string().nullable().optional(),
  /** The statement's repository section: it describes the base, so its words are never leaks. */
  repositoryDescription: z.string().optional(),
  /** The patch's vocabulary for the leak check. */
  leakCheck: patchVocabularySchema.optional(),
  /** Parts of linked issues left out of the statement because they named the solution. */
  leakingIssueParts: z.number().int().nonnegative().optional(),
});
export type ClassifyOutput = z.infer<typeof classifyOutputSchema>;
