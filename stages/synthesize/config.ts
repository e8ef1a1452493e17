import { z } from 'zod';

const positiveInt = z.number().int().positive();

/** `YYYY-MM-DD` names a day of the calendar (not 2023-02-30). */
function isCalendarDay(day: string): boolean {
  const ms = Date.parse(`${day}T00:00:00Z`);
  return !Number.isNaN(ms) && new Date(ms).toISOString().slice(0, 10) === day;
}

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
    /**
     * Network of the build step: `index` (the default) reaches nothing but the package index time
     * machine (`index`: the upstream as of the commit's date; its lock records what it served);
     * `bridge` is Docker's network (pip reaches whatever the index serves today; nothing locked
     * to a date); `none` reaches nothing. Verification and measurement always run with none.
     */
    buildNetwork: z.enum(['index', 'bridge', 'none']).default('index'),
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
    /**
     * The package index of builds: perfmine's index time machine, a loopback proxy in front of
     * `upstream` that lists only the files uploaded before the cutoff and is the only address a
     * build container can reach (pipeline/services/package-index/).
     */
    index: z
      .object({
        /**
         * What the time machine reads: any PEP 503/691 simple index or mirror (`http(s)://.../simple/`),
         * or `dir:PATH`, a directory of wheels and sdists (upload times from its `index.json`, else the
         * files' modification times).
         */
        upstream: z
          .string()
          .refine((s) => /^https?:\/\/[^\s]+$/.test(s) || /^dir:.+/.test(s), 'expected an http(s):// index URL or dir:PATH')
          .default('https://pypi.org/simple/'),
        /**
         * Files uploaded at or after this instant are not served: `commit-date` (the base commit's
         * committer date), `none` (no cutoff), or a day `YYYY-MM-DD` (its start, UTC).
         */
        cutoff: z
          .string()
          .refine(
            (s) => s === 'commit-date' || s === 'none' || (/^\d{4}-\d{2}-\d{2}$/.test(s) && isCalendarDay(s)),
            'expected commit-date, none or YYYY-MM-DD',
          )
          .default('commit-date'),
        /**
         * Days added to the cutoff. 0: what the commit's author could have installed that day; a
         * few days let in fixes released just after it (and whatever broke just after it, too).
         */
        slackDays: z.number().int().min(0).max(3650).default(0),
        /**
         * Files the upstream gives no upload time (HTML-only indexes give none): `exclude` (they
         * cannot be shown to predate the cutoff) or `include`. Without a cutoff every file is served.
         */
        missingUploadTime: z.enum(['exclude', 'include']).default('exclude'),
        /** Per upstream request (a page whole; a file's headers, then each gap between its chunks). */
        timeoutSeconds: positiveInt.max(3600).default(30),
        /** Further attempts after a failure that may pass (unreachable, timeout, 429, 5xx). */
        retries: z.number().int().min(0).max(10).default(2),
      })
      .strict()
      .prefault({}),
  })
  .strict();

export type SynthesizeConfig = z.infer<typeof synthesizeConfig>;
