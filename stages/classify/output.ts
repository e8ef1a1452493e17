import { z } from 'zod';

/**
 * What classify hands on for a pull request judged performance-motivated (a `done` item; a NO is
 * `dropped` with a reason). Synthesize, validate and emit read it from the ledger.
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
});
export type ClassifyOutput = z.infer<typeof classifyOutputSchema>;
