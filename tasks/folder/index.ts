/**
 * The task folder as a layer of its own: one versioned schema (schema.ts) and one reader (read.ts)
 * that emit's checks, replay, score, publish (Hugging Face and Harbor), the report and `perfmine
 * tasks` all use. It imports nothing of the stages, so every layer can.
 */
export * from './schema.js';
export * from './read.js';
