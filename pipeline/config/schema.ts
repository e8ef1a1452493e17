import { z } from 'zod';
import { discoverConfig } from '../../stages/discover/config.js';
import { collectConfig } from '../../stages/collect/config.js';
import { filterConfig } from '../../stages/filter/config.js';
import { classifyConfig } from '../../stages/classify/config.js';
import { synthesizeConfig } from '../../stages/synthesize/config.js';
import { validateConfig } from '../../stages/validate/config.js';
import { emitConfig } from '../../stages/emit/config.js';

/**
 * The whole configuration. Layers, lowest first: these defaults, `perfmine.config.json`, the
 * environment, command-line flags (see load.ts). Every object is strict: an unknown key is an
 * error, so that a typo never silently falls back to a default.
 */
export const positiveInt = z.number().int().positive();
export const nonNegative = z.number().nonnegative();
export const repoName = z.string().regex(/^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/, 'expected owner/name');

/** `github` (the REST API) or `git:PATH` (a local clone; no API). */
export const sourceSpec = z.string().regex(/^(github|git:.+)$/, 'expected "github" or "git:PATH"');

export const logLevel = z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']);

const githubSection = z
  .object({
    /** REST API root; GitHub Enterprise or a loopback stand-in in tests. */
    baseUrl: z.url().default('https://api.github.com'),
    /** Requests in flight at once (the `github` queue). */
    concurrency: positiveInt.default(4),
    /** Per-request timeout. */
    timeoutMs: positiveInt.default(30_000),
    /** Retries of a failed request (5xx, 429, connection reset, truncated body), with growing waits (a 429's retry-after when it gives one). */
    retries: z.number().int().nonnegative().default(3),
    /**
     * Milliseconds per second of every retry wait (`retry-after`, rate-limit resets, backoff
     * steps 1, 4, 9 ...). Tests set 1 so that a `retry-after: 1` costs a millisecond.
     */
    retryUnitMs: positiveInt.default(1000),
    /** Longest wait for a spent primary rate limit (every token) to reset, or for a 429's retry-after, before the item fails. */
    maxRateLimitWaitSeconds: nonNegative.default(900),
    /** Retries after a secondary rate limit (each waits `retry-after`). */
    secondaryRateLimitRetries: z.number().int().nonnegative().default(3),
    /** Responses larger than this are not kept in the ETag cache. */
    maxCachedBodyBytes: positiveInt.default(8 * 1024 * 1024),
  })
  .strict();

const modelPrice = z
  .object({
    /** USD per million prompt tokens. */
    inputPerMTok: nonNegative,
    /** USD per million completion tokens. */
    outputPerMTok: nonNegative,
  })
  .strict();

const llmSection = z
  .object({
    /** `openai`: any OpenAI-compatible server; `none`: rules only, no LLM call is ever made. */
    mode: z.enum(['openai', 'none']).default('openai'),
    /** Server root (`OPENAI_BASE_URL`); unset means the OpenAI API. */
    baseUrl: z.url().optional(),
    model: z.string().min(1).default('gpt-4.1-mini'),
    fallbackModel: z.string().min(1).optional(),
    /** Requests in flight at once (the `llm` queue). */
    concurrency: positiveInt.default(4),
    /** Per-request timeout; a request that times out is retried like a 5xx. */
    timeoutMs: positiveInt.default(120_000),
    /** Retries of one request on the same model after a timeout, 429, 5xx, connection error or empty answer. */
    maxRetries: z.number().int().nonnegative().default(2),
    /** First backoff between retries when the server gives no `retry-after` (doubles each time). */
    retryBaseMs: positiveInt.default(1_000),
    /** A `retry-after` up to this long is honoured; a longer one gives up on that model (then the fallback). */
    maxRetryAfterSeconds: z.number().positive().default(60),
    /** Sampling temperature (0: as repeatable as the server allows). */
    temperature: z.number().min(0).max(2).default(0),
    /** Completion tokens per request (`max_tokens`); unset: the server's default. */
    maxOutputTokens: positiveInt.optional(),
    /** Price per model, for cost accounting; models not listed cost 0 (and say so in the summary). */
    prices: z.record(z.string(), modelPrice).default({}),
  })
  .strict();

const dockerSection = z
  .object({
    /** The image every environment starts from (`--base-image`, `PERFMINE_BASE_IMAGE`). */
    baseImage: z.string().min(1).default('perfmine/base:bookworm'),
    /** Containers at once (the `docker` queue). */
    concurrency: positiveInt.default(1),
    /** CPU limit per container. */
    cpus: z.number().positive().default(2),
    memoryMb: positiveInt.default(4096),
    pidsLimit: positiveInt.default(1024),
    /**
     * What a container may write, in MiB: no single file may grow past it (RLIMIT_FSIZE), and a
     * container whose writable layer outgrows it is killed (checked every diskCheckSeconds).
     */
    diskMb: positiveInt.default(20_480),
    diskCheckSeconds: positiveInt.default(10),
  })
  .strict();

const slurmSection = z
  .object({
    /** A directory every compute node sees at the same path (a shared filesystem): job inputs, results and logs. */
    spool: z.string().min(1).default('perfmine-spool'),
    partition: z.string().min(1).optional(),
    account: z.string().min(1).optional(),
    /** sbatch --time (minutes, or [D-]HH:MM:SS). */
    timeLimit: z.string().min(1).default('04:00:00'),
    /** sbatch --cpus-per-task. */
    cpus: positiveInt.default(2),
    /** sbatch --mem in MiB; unset: the partition's default. */
    memoryMb: positiveInt.optional(),
    /** Measurement jobs hold their node alone (sbatch --exclusive). */
    exclusive: z.boolean().default(true),
    /** More sbatch arguments, as given (e.g. ["--qos=long", "--constraint=docker"]). */
    extraArgs: z.array(z.string()).default([]),
    /** Submissions of one item (the first included) before it fails as lost (time limit, node failure, preemption, cancel). */
    maxAttempts: positiveInt.default(3),
    /** Milliseconds between polls of squeue/sacct. */
    pollIntervalMs: positiveInt.default(10_000),
    /** Jobs of this coordinator queued or running at once. */
    maxJobs: positiveInt.default(500),
    /** sbatch calls in flight at once. */
    submitConcurrency: positiveInt.default(8),
    /**
     * Items submitted together go as one job array of at most this many tasks (one `sbatch` call
     * instead of one per item); 1: one job per item. Keep it within the cluster's MaxArraySize.
     */
    arraySize: positiveInt.default(100),
    /**
     * The command a job runs, before `--spool DIR --job ID` (default: this node binary and this
     * perfmine's compiled CLI, dist/pipeline/cli/entry.js, `worker`); the installation must be at the same path on the nodes.
     */
    workerCommand: z.array(z.string()).min(1).optional(),
  })
  .strict();

const executorSection = z
  .object({
    /** `local`: every container on this machine's Docker engine; `slurm`: the items of stages that declare a Slurm worker (synthesize, validate) and the measurements of `perfmine score` as Slurm jobs (`--executor`). */
    kind: z.enum(['local', 'slurm']).default('local'),
    /** A Docker distribution registry (`host:port`) that carries verified images between nodes; unset: rebuilt from the cached script. */
    registry: z.string().min(1).optional(),
    slurm: slurmSection.prefault({}),
  })
  .strict();

/**
 * One repository's own environment: a base image of its own, and Debian packages added to the
 * base image in a tier of their own (pipeline/services/environments/package-tier.ts).
 */
const repositorySection = z
  .object({
    /** The image this repository's environments start from, instead of `docker.baseImage`. */
    baseImage: z.string().min(1).optional(),
    /** The `X.Y` Pythons its base image offers, instead of `synthesize.pythonVersions` (a trixie image: ["3.13"]). */
    pythonVersions: z
      .array(z.string().regex(/^\d+\.\d+$/, 'expected X.Y'))
      .min(1)
      .optional(),
    /** Debian packages installed on the base image for this repository (e.g. libgeos-dev, libhdf5-dev, gfortran). */
    debianPackages: z.array(z.string().regex(/^[a-z0-9][a-z0-9+.-]+$/, 'expected a Debian package name')).default([]),
    /**
     * pytest arguments this repository's tests need here (e.g. `["-o", "addopts="]` when its
     * configuration names a plugin's options that no environment has): verification's collection
     * takes them, and validate's test runs add them after `validate.pytestArgs`.
     */
    pytestArgs: z.array(z.string()).default([]),
    /**
     * `require` (default): a commit none of whose asv config `pythons` the image offers is dropped
     * as python-unavailable; `prefer`: one of them is taken when offered, else the newest Python
     * requires-python allows (the harness, like asv's `--python=same`, runs on the environment's own).
     */
    asvPythons: z.enum(['require', 'prefer']).default('require'),
  })
  .strict();

export const configSchema = z
  .object({
    /** SQLite store. */
    db: z.string().min(1).default('perfmine.db'),
    /** Where datasets are written. */
    out: z.string().min(1).default('out'),
    logLevel: logLevel.default('info'),
    /** `auto`: readable lines on a terminal, JSON otherwise. */
    logFormat: z.enum(['auto', 'json', 'pretty']).default('auto'),
    /** Seconds between progress lines when stderr is not a terminal. */
    progressIntervalSeconds: positiveInt.default(10),
    /** Repositories to process when neither discover nor --repo says otherwise. */
    repos: z.array(repoName).default([]),
    /** Where pull requests come from. */
    source: sourceSpec.default('github'),
    github: githubSection.prefault({}),
    llm: llmSection.prefault({}),
    docker: dockerSection.prefault({}),
    discover: discoverConfig.prefault({}),
    collect: collectConfig.prefault({}),
    filter: filterConfig.prefault({}),
    classify: classifyConfig.prefault({}),
    synthesize: synthesizeConfig.prefault({}),
    validate: validateConfig.prefault({}),
    emit: emitConfig.prefault({}),
    executor: executorSection.prefault({}),
    /** Per repository (`"owner/name"`): its own base image and Debian packages. */
    repositories: z.record(repoName, repositorySection).default({}),
  })
  .strict();

export type Config = z.infer<typeof configSchema>;
export type LlmConfig = Config['llm'];
export type ExecutorConfig = Config['executor'];
export type SlurmConfig = Config['executor']['slurm'];
export type ConfigInput = z.input<typeof configSchema>;
