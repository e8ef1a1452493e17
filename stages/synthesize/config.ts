import { z } from 'zod';

const positiveInt = z.number().int().positive();

/** Configuration of the synthesize stage (the `synthesize` key of perfmine.config.json). */
export const synthesizeConfig = z
  .object({
    /** Successful scripts of the same repository tried, nearest in commit date first. */
    neighbours: positiveInt.max(50).default(10),
    /**
     * Reuse build scripts: this commit's cached script, then its neighbours'. Off, every commit
     * goes from the template to the agent (only to measure what the cache saves).
     */
    reuse: z.boolean().default(true),
    /**
     * Templates for hosts without PyPI: `pip install --no-build-isolation --no-deps -e .`
     * (what Debian's setuptools can build). Otherwise templates install build requirements and
     * dependencies from PyPI.
     */
    offline: z.boolean().default(false),
    /** Network of the build step (`bridge` lets pip reach PyPI); verification always runs with none. */
    buildNetwork: z.enum(['bridge', 'none']).default('bridge'),
    /** `X.Y` versions the base image offers as `pythonX.Y` (Debian bookworm: 3.11 only). */
    pythonVersions: z
      .array(z.string().regex(/^\d+\.\d+$/, 'expected X.Y'))
      .min(1)
      .default(['3.11']),
    asv: z
      .object({
        /**
         * A directory of wheels (asv, asv_runner and their dependencies) installed into the base
         * image with `pip install --no-index --find-links` (air-gapped hosts). Null: the base
         * image already has asv (scripts/base-pypi.Dockerfile).
         */
        wheelhouse: z.string().min(1).nullable().default(null),
        /** How verification asks asv to discover the benchmarks. */
        discover: z.enum(['check', 'just-discover']).default('check'),
      })
      .strict()
      .prefault({}),
    agent: z
      .object({
        /** Build-and-verify rounds per model (primary, then fallback). */
        roundsPerModel: positiveInt.max(20).default(3),
        /** Tool-calling turns before the model must write the script. */
        maxTurns: positiveInt.max(30).default(10),
        /** Prompt + completion tokens per commit, over every agent call. */
        tokenBudget: positiveInt.default(200_000),
        /** Use the fallback model (llm.fallbackModel) after the primary's rounds. */
        fallback: z.boolean().default(true),
      })
      .strict()
      .prefault({}),
    /** Time limits, in seconds. */
    timeouts: z
      .object({
        repoImage: positiveInt.default(1800),
        build: positiveInt.default(1800),
        import: positiveInt.default(120),
        asv: positiveInt.default(600),
        pytest: positiveInt.default(600),
        tamper: positiveInt.default(120),
        tool: positiveInt.default(120),
      })
      .strict()
      .prefault({}),
    /** Characters of stdout and stderr kept per step. */
    tailChars: positiveInt.default(8000),
  })
  .strict();

export type SynthesizeConfig = z.infer<typeof synthesizeConfig>;
