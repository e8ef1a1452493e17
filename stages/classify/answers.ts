import { z } from 'zod';
import { CATEGORY_CHOICES, DIFFICULTIES } from './categories.js';

/** The answers of the three classify prompts (prompts/*.md), as the LLM must give them. */

export const perfIntentAnswer = z.object({
  reasoning: z.string().describe('the evidence, 2 to 5 sentences'),
  label: z.enum(['YES', 'NO']),
});
export type PerfIntentAnswer = z.infer<typeof perfIntentAnswer>;

export const problemExtractAnswer = z.object({
  initial_observations: z.array(z.string()),
  triage_attempts: z.array(z.string()),
  solution_overview: z.array(z.string()),
  solution_observations: z.array(z.string()),
});
export type ProblemExtractAnswer = z.infer<typeof problemExtractAnswer>;

export const categoryAnswer = z.object({
  reasoning: z.string(),
  category: z.enum(CATEGORY_CHOICES),
  difficulty: z.enum(DIFFICULTIES),
});
export type CategoryAnswer = z.infer<typeof categoryAnswer>;
