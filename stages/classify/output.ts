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
 * What classify hands on for a pull request judged performance-motivated (a `done` item; a NO is
 * `dropped` with a reason). Synthesize, validate and emit read it from the ledger.
 *
 * Fields after `problemStatement` were added by issue 5; they are optional in the schema so that
 * records written by other code still parse, but classify always fills them.
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
  /** The agent-facing problem statement (markdown), rendered from prompts/problem-statement.md. */
  problemStatement: z.string(),
  /** `extracted`: observations extracted by the LLM and checked; `pr-text`: the pull request's own text (`--llm none`). */
  problemSource: z.enum(['extracted', 'pr-text']).optional(),
  /** The extracted fields (null under `--llm none`). */
  problem: extractedProblemSchema.nullable().optional(),
  /** Positive performance cues the filter found (cue names). */
  positiveCues: z.array(z.string()).optional(),
  /** The model that chose the category and difficulty (null when not asked). */
  categoryModel: z.string().nullable().optional(),
});
export type ClassifyOutput = z.infer<typeof classifyOutputSchema>;
