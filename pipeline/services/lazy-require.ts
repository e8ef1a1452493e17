import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/**
 * Loads a CommonJS package the first time it is needed, so that the heavy client libraries
 * (openai, dockerode, BigQuery) stay out of the start-up of commands that never use them.
 */
export function lazyRequire<T>(name: string): () => T {
  let loaded: T | undefined;
  return () => (loaded ??= require(name) as T);
}
