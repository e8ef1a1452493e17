/** The pipeline's seeded PRNG, for deterministic tests and benchmarks. */
export { mulberry32 } from '../../pipeline/random.js';
