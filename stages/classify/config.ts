import { z } from 'zod';

/** Configuration of the classify stage (the `classify` key of perfmine.config.json). */
export const classifyConfig = z
  .object({
    /**
     * An extracted sentence is kept when its LCS ratio against the source text is at least this
     * (see stages/classify/verbatim.ts for the exact definition).
     */
    verbatimThreshold: z.number().min(0).max(1).default(0.85),
    /** The source window a sentence is matched in is this many times the sentence's length (in words). */
    verbatimWindowFactor: z.number().min(1).max(4).default(1.5),
    /** Longest problem description / discussion text sent to the LLM, in characters (the rest is cut with a marker). */
    maxDescriptionChars: z.number().int().positive().default(40_000),
    /** Ask the optimization-category classifier (category and difficulty stay null when false). */
    categorize: z.boolean().default(true),
  })
  .strict();

export type ClassifyConfig = z.infer<typeof classifyConfig>;
