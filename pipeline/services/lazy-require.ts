import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/**
 * Loads a CommonJS package the first time it is needed, so that the heavy client libraries
 * (dockerode, BigQuery) stay out of the start-up of commands that never use them.
 * Only for packages whose classes are not also imported as ES modules elsewhere (the two copies
 * would not be `instanceof` each other).
 */
export function lazyRequire<T>(name: string): () => T {
  let loaded: T | undefined;
  return () => (loaded ??= require(name) as T);
}
