import { z } from 'zod';
import { environmentLockSchema, type EnvironmentLock } from '../pipeline/concepts/records/environment-lock.js';
import type { Db } from './store.js';
import { nowIso } from './store.js';

export const SCRIPT_SOURCES = ['cache', 'neighbour', 'template', 'agent'] as const;
export type ScriptSource = (typeof SCRIPT_SOURCES)[number];
export type AttemptOutcome = 'verified' | 'failed' | 'rejected';

/** A build script that verified on a commit of the repository (what synthesize offers as a neighbour). */
export interface VerifiedScript {
  readonly attemptId: number;
  readonly sha: string;
  /** Commit date of the commit the script was verified on (ISO 8601). */
  readonly commitDate: string;
  readonly script: string;
  /** Hash of the normalized script: equal scripts are tried once. */
  readonly scriptHash: string;
}

/** A step of an attempt as stored (logs are kept only for the failing step). */
export const storedStepSchema = z.object({
  step: z.string(),
  ok: z.boolean(),
  exitCode: z.number().nullable(),
  timedOut: z.boolean(),
  durationMs: z.number(),
  detail: z.string().optional(),
});
export type StoredStep = z.infer<typeof storedStepSchema>;

/** The outside scan of an attempt's image, as stored (migration 0012; pipeline/services/environments/image-scan.ts). */
export const storedScanSchema = z.object({
  verdict: z.enum(['accepted', 'tampered']),
  /** The first findings (each names a file, or `ENV NAME`). */
  findings: z.array(z.object({ rule: z.string(), path: z.string(), detail: z.string() })),
  /** How many findings there were (more than are kept). */
  findingCount: z.number().optional(),
  durationMs: z.number(),
  filesRead: z.number().optional(),
  bytesRead: z.number().optional(),
});
export type StoredScan = z.infer<typeof storedScanSchema>;

/** What is needed to rebuild a commit's environment, as stored with each attempt. */
export interface RebuildSpec {
  readonly repo: string;
  readonly sha: string;
  readonly script: string;
  readonly baseImage: string;
  readonly toolchainImage: string;
  readonly repoImage: string;
  readonly cloneSource: string;
  readonly asvConfigPath: string | null;
  readonly importName: string | null;
  readonly pythonVersion: string | null;
}

export interface NewAttempt extends RebuildSpec {
  readonly commitDate: string;
  readonly scriptHash: string;
  readonly source: ScriptSource;
  readonly sourceDetail: string | null;
  readonly outcome: AttemptOutcome;
  readonly failingStep: string | null;
  readonly failureKind: string | null;
  readonly failure: string | null;
  readonly stdoutTail: string;
  readonly stderrTail: string;
  readonly steps: readonly StoredStep[];
  readonly durationMs: number;
  readonly llmCalls: number;
  readonly promptTokens: number;
  readonly completionTokens: number;
  readonly costUsd: number;
  readonly model: string | null;
  readonly imageTag: string | null;
  readonly runId: number | null;
  /** The outside scan of the built image; null or absent when it was not scanned. */
  readonly scan?: StoredScan | null;
  /** What the verified image holds (migration 0015); null or absent when it did not verify. */
  readonly lock?: EnvironmentLock | null;
}

export interface Attempt extends NewAttempt {
  readonly id: number;
  readonly createdAt: string;
}

interface Row {
  id: number;
  repo: string;
  sha: string;
  commit_date: string;
  script: string;
  script_hash: string;
  source: ScriptSource;
  source_detail: string | null;
  outcome: AttemptOutcome;
  failing_step: string | null;
  failure_kind: string | null;
  failure: string | null;
  stdout_tail: string;
  stderr_tail: string;
  steps: string;
  duration_ms: number;
  llm_calls: number;
  prompt_tokens: number;
  completion_tokens: number;
  cost_usd: number;
  model: string | null;
  base_image: string;
  toolchain_image: string;
  repo_image: string;
  clone_source: string;
  asv_config_path: string | null;
  import_name: string | null;
  python_version: string | null;
  image_tag: string | null;
  run_id: number | null;
  created_at: string;
  scan: string | null;
  lock: string | null;
}

function fromRow(r: Row): Attempt {
  return {
    id: r.id,
    repo: r.repo,
    sha: r.sha,
    commitDate: r.commit_date,
    script: r.script,
    scriptHash: r.script_hash,
    source: r.source,
    sourceDetail: r.source_detail,
    outcome: r.outcome,
    failingStep: r.failing_step,
    failureKind: r.failure_kind,
    failure: r.failure,
    stdoutTail: r.stdout_tail,
    stderrTail: r.stderr_tail,
    steps: z.array(storedStepSchema).parse(JSON.parse(r.steps)),
    durationMs: r.duration_ms,
    llmCalls: r.llm_calls,
    promptTokens: r.prompt_tokens,
    completionTokens: r.completion_tokens,
    costUsd: r.cost_usd,
    model: r.model,
    baseImage: r.base_image,
    toolchainImage: r.toolchain_image,
    repoImage: r.repo_image,
    cloneSource: r.clone_source,
    asvConfigPath: r.asv_config_path,
    importName: r.import_name,
    pythonVersion: r.python_version,
    imageTag: r.image_tag,
    runId: r.run_id,
    createdAt: r.created_at,
    scan: r.scan === null ? null : storedScanSchema.parse(JSON.parse(r.scan)),
    lock: r.lock === null ? null : environmentLockSchema.parse(JSON.parse(r.lock)),
  };
}

export interface RepoStats {
  readonly repo: string;
  /** Commits with at least one attempt. */
  readonly commits: number;
  /** Commits with a verified environment. */
  readonly verifiedCommits: number;
  /** verifiedCommits / commits. */
  readonly successRate: number;
  /** Share of verified commits whose script came from the cache or a neighbour (no new script). */
  readonly reuseRate: number;
  readonly verifiedBySource: Readonly<Record<ScriptSource, number>>;
  readonly attempts: number;
  readonly llmCalls: number;
  readonly promptTokens: number;
  readonly completionTokens: number;
  readonly costUsd: number;
  readonly buildMs: number;
}

/**
 * The build-script store (table `build_attempts`, migration 0005). Attempts are written as they
 * happen, each in its own short transaction, so that a long synthesis can be watched with
 * `perfmine cache scripts` and a crash loses none of them.
 */
export class BuildScripts {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  record(a: NewAttempt): number {
    const info = this.#db
      .prepare(
        `INSERT INTO build_attempts (repo, sha, commit_date, script, script_hash, source, source_detail, outcome,
           failing_step, failure_kind, failure, stdout_tail, stderr_tail, steps, duration_ms, llm_calls,
           prompt_tokens, completion_tokens, cost_usd, model, base_image, toolchain_image, repo_image,
           clone_source, asv_config_path, import_name, python_version, image_tag, run_id, created_at, scan, lock)
         VALUES (@repo, @sha, @commitDate, @script, @scriptHash, @source, @sourceDetail, @outcome,
           @failingStep, @failureKind, @failure, @stdoutTail, @stderrTail, @steps, @durationMs, @llmCalls,
           @promptTokens, @completionTokens, @costUsd, @model, @baseImage, @toolchainImage, @repoImage,
           @cloneSource, @asvConfigPath, @importName, @pythonVersion, @imageTag, @runId, @createdAt, @scan, @lock)`,
      )
      .run({
        ...a,
        steps: JSON.stringify(a.steps),
        durationMs: Math.round(a.durationMs),
        createdAt: nowIso(),
        scan: a.scan ? JSON.stringify(a.scan) : null,
        lock: a.lock ? JSON.stringify(a.lock) : null,
      });
    return Number(info.lastInsertRowid);
  }

  get(id: number): Attempt | undefined {
    const row = this.#db.prepare<[number], Row>('SELECT * FROM build_attempts WHERE id = ?').get(id);
    return row ? fromRow(row) : undefined;
  }

  /** Every attempt for a commit, oldest first. */
  forCommit(repo: string, sha: string): Attempt[] {
    return this.#db
      .prepare<[string, string], Row>('SELECT * FROM build_attempts WHERE repo = ? AND sha = ? ORDER BY id')
      .all(repo, sha)
      .map(fromRow);
  }

  /** The latest verified attempt of a commit (its cached script). */
  latestVerified(repo: string, sha: string): Attempt | undefined {
    const row = this.#db
      .prepare<[string, string], Row>(
        "SELECT * FROM build_attempts WHERE repo = ? AND sha = ? AND outcome = 'verified' ORDER BY id DESC LIMIT 1",
      )
      .get(repo, sha);
    return row ? fromRow(row) : undefined;
  }

  /** The verified scripts of a repository (one row per commit and script), for neighbour reuse. */
  verifiedScripts(repo: string): VerifiedScript[] {
    return this.#db
      .prepare<[string], { id: number; sha: string; commit_date: string; script: string; script_hash: string }>(
        `SELECT MAX(id) AS id, sha, commit_date, script, script_hash FROM build_attempts
         WHERE repo = ? AND outcome = 'verified' GROUP BY sha, script_hash ORDER BY id`,
      )
      .all(repo)
      .map((r) => ({ attemptId: r.id, sha: r.sha, commitDate: r.commit_date, script: r.script, scriptHash: r.script_hash }));
  }

  /** Attempts, newest first. */
  list(filter: { readonly repo?: string; readonly sha?: string; readonly limit?: number } = {}): Attempt[] {
    const where: string[] = [];
    const params: unknown[] = [];
    if (filter.repo) {
      where.push('repo = ?');
      params.push(filter.repo);
    }
    if (filter.sha) {
      where.push('sha LIKE ?');
      params.push(`${filter.sha}%`);
    }
    const sql = `SELECT * FROM build_attempts${where.length ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY id DESC${filter.limit ? ` LIMIT ${Math.floor(filter.limit)}` : ''}`;
    return this.#db
      .prepare<unknown[], Row>(sql)
      .all(...params)
      .map(fromRow);
  }

  stats(filter: { readonly repo?: string } = {}): RepoStats[] {
    const rows = this.#db
      .prepare<
        unknown[],
        Pick<
          Row,
          'repo' | 'sha' | 'source' | 'outcome' | 'llm_calls' | 'prompt_tokens' | 'completion_tokens' | 'cost_usd' | 'duration_ms' | 'id'
        >
      >(
        `SELECT id, repo, sha, source, outcome, llm_calls, prompt_tokens, completion_tokens, cost_usd, duration_ms
         FROM build_attempts${filter.repo ? ' WHERE repo = ?' : ''} ORDER BY id`,
      )
      .all(...(filter.repo ? [filter.repo] : []));
    return summarizeAttempts(rows);
  }
}

/** Per-repository success rate, reuse rate and LLM use, from attempt rows in id order. Pure. */
export function summarizeAttempts(
  rows: readonly {
    repo: string;
    sha: string;
    source: ScriptSource;
    outcome: AttemptOutcome;
    llm_calls: number;
    prompt_tokens: number;
    completion_tokens: number;
    cost_usd: number;
    duration_ms: number;
  }[],
): RepoStats[] {
  const byRepo = new Map<string, typeof rows>();
  for (const r of rows) byRepo.set(r.repo, [...(byRepo.get(r.repo) ?? []), r]);
  return [...byRepo.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([repo, list]) => {
      const commits = new Set(list.map((r) => r.sha));
      // The source of a commit's environment: its latest verified attempt.
      const verifiedSource = new Map<string, ScriptSource>();
      for (const r of list) if (r.outcome === 'verified') verifiedSource.set(r.sha, r.source);
      const bySource: Record<ScriptSource, number> = { cache: 0, neighbour: 0, template: 0, agent: 0 };
      for (const s of verifiedSource.values()) bySource[s] += 1;
      const verified = verifiedSource.size;
      const sum = (f: (r: (typeof list)[number]) => number) => list.reduce((a, r) => a + f(r), 0);
      return {
        repo,
        commits: commits.size,
        verifiedCommits: verified,
        successRate: commits.size === 0 ? 0 : verified / commits.size,
        reuseRate: verified === 0 ? 0 : (bySource.cache + bySource.neighbour) / verified,
        verifiedBySource: bySource,
        attempts: list.length,
        llmCalls: sum((r) => r.llm_calls),
        promptTokens: sum((r) => r.prompt_tokens),
        completionTokens: sum((r) => r.completion_tokens),
        costUsd: sum((r) => r.cost_usd),
        buildMs: sum((r) => r.duration_ms),
      };
    });
}
