import type { Config } from '../../pipeline/config/schema.js';
import type { ClassifyConfig } from './config.js';

/** What of the configuration a classify item's result depends on (spread into its input). */
export type ClassifySettings =
  | { readonly llm: { readonly mode: 'none' } }
  | {
      readonly llm: { readonly mode: 'openai'; readonly model: string; readonly fallbackModel: string | null };
      readonly config: ClassifyConfig;
    };

/**
 * The settings that change a classify result; spread into every item's input, whose hash
 * decides whether a done item runs again.
 *
 * With an LLM: which models answer, and every key of the `classify` section (the verbatim
 * check, the description budget, whether a category is asked for).
 *
 * Under `--llm none` rules decide and read none of the `classify` section (the heuristic keeps
 * no extracted sentence and asks for no category): only the mode is in.
 *
 * Left out, deliberately: `llm.temperature` and `llm.maxOutputTokens`. Answers are cached by
 * prompt, inputs, model and schema (pipeline/services/llm.ts), so a run after changing them
 * gets the cached answers and the same result; re-running would only cost time. `llm.baseUrl`,
 * time limits, retries, concurrency and prices decide how requests are made and counted. The
 * prompts' hashes are part of the input beside these (index.ts). Pure (test/run/input-hashes.test.ts).
 */
export function classifyResultSettings(config: Config): ClassifySettings {
  const { llm } = config;
  if (llm.mode === 'none') return { llm: { mode: 'none' } };
  const c = config.classify;
  return {
    llm: { mode: 'openai', model: llm.model, fallbackModel: llm.fallbackModel ?? null },
    config: {
      verbatimThreshold: c.verbatimThreshold,
      verbatimWindowFactor: c.verbatimWindowFactor,
      maxDescriptionChars: c.maxDescriptionChars,
      categorize: c.categorize,
    },
  };
}
