/**
 * Collect from a local clone with git, no API. The plan reads only the window's part of the
 * history, without diffs (`readWindow`); the items' commits are then read in a few `git log -p`
 * processes (batches of `collect.gitBatchSize`, in plan order, the next batch read ahead; line
 * counts come from the patches), and the asv configs of their base commits in three processes
 * whatever their number.
 */
import { loadAsvConfig, saveAsvConfig, saveAsvConfigs, type AsvConfigFile } from '../../cache/asv-configs.js';
import type { Db } from '../../cache/store.js';
import type { Ledger } from '../../cache/ledger.js';
import { ItemError } from '../../pipeline/errors.js';
import type { Logger } from '../../pipeline/logging.js';
import type { LogCommit } from '../../pipeline/services/git-parse.js';
import { openLocalRepository, type GitService } from '../../pipeline/services/git.js';
import type { Scope } from '../../pipeline/scope.js';
import type { ItemContext, PipelineContext, WorkItem } from '../../pipeline/stage.js';
import { buildGitPullRequest, pullRequestsInWindow, pullUrl, windowSpan, type GitPullRequests } from './git-pulls.js';
import type { Window } from '../../pipeline/window.js';
import type { CollectInput, GitItemInput } from './input.js';
import { prKey, pullRequestSchema, type PullRequest } from './pull-request.js';

export async function planGit(ctx: PipelineContext, scope: Scope): Promise<WorkItem<CollectInput>[]> {
  if (scope.source.kind !== 'git') throw new RangeError('planGit needs a git source');
  const git = ctx.services.git;
  const path = scope.source.path;
  const { name: repo, defaultBranch, tip } = await openLocalRepository(git, path, scope.repos);
  const remote = await git.remoteUrl(path);
  const started = Date.now();
  const found = await readWindow(git, path, tip, scope.window, ctx.config.collect.gitWindowSlackDays);
  const wanted = new Set(scope.prs);
  const candidates = found.pulls.filter((c) => wanted.size === 0 || wanted.has(c.number));
  ctx.log.info(
    { stage: 'collect', repo, path, branch: defaultBranch, mainline: found.line.length, sideCommits: found.sideCommits, pulls: candidates.length, ms: Date.now() - started },
    "read the window's part of the clone's history",
  );
  if (found.withoutBase.length > 0) {
    ctx.log.warn(
      { stage: 'collect', repo, path, pulls: found.withoutBase, shallow: await git.isShallow(path) },
      'pull requests whose base commit is not in the clone are left out (a shallow clone? git fetch --unshallow)',
    );
  }
  const items = candidates.map((c): WorkItem<GitItemInput> => {
    const input: GitItemInput = { source: 'git', path, repo, defaultBranch, remote, ...c };
    return { key: prKey(repo, c.number), repo, at: c.mergedAt, input };
  });
  sessions.set(ctx.ledger, new GitSession({ git, log: ctx.log, db: ctx.db, ledger: ctx.ledger, path, repo, line: found.line, items, batchSize: ctx.config.collect.gitBatchSize }));
  return items;
}

/**
 * The window's part of a clone's history: the first-parent line from the tip down to `slackDays`
 * before the window's start (git's `--since` stops there), then the commits between the window's
 * newest PR commit and the first parent of its oldest (what its merges brought in). The rest of
 * the history is never read.
 */
export async function readWindow(
  git: GitService,
  path: string,
  tip: string,
  window: Window,
  slackDays: number,
): Promise<GitPullRequests & { line: string[]; sideCommits: number }> {
  const since = new Date(Date.parse(window.start) - slackDays * 86_400_000).toISOString();
  const line = await git.graph(path, tip, { firstParent: true, since });
  const commits = new Map(line.map((c) => [c.sha, c]));
  const span = windowSpan(line, window);
  let base: string | undefined;
  let baseKnown = false;
  let sideCommits = 0;
  if (span) {
    base = span.oldest.parents[0];
    baseKnown = base !== undefined && (commits.has(base) || (await git.revParse(path, base)) !== null);
    const side = await git.graph(path, span.newest.sha, { exclude: baseKnown ? [base!] : [] });
    for (const c of side) {
      if (!commits.has(c.sha)) sideCommits += 1;
      commits.set(c.sha, c);
    }
  }
  const found = pullRequestsInWindow({ line, commits, present: (sha) => commits.has(sha) || (baseKnown && sha === base) }, window);
  return { ...found, line: line.map((c) => c.sha), sideCommits };
}

export async function collectFromGit(ctx: ItemContext, input: GitItemInput): Promise<PullRequest> {
  let session = sessions.get(ctx.ledger);
  if (!session || session.path !== input.path) {
    // Run without this process's plan (another caller): read just this commit.
    session = new GitSession({ git: ctx.services.git, log: ctx.log, db: ctx.db, ledger: ctx.ledger, path: input.path, repo: input.repo, line: [], items: [], batchSize: 1 });
  }
  const [commit, asvConfig] = await Promise.all([session.commit(input.mergeSha), session.asvConfig(input.baseSha)]);
  const record = buildGitPullRequest({
    repo: input.repo,
    defaultBranch: input.defaultBranch,
    candidate: input,
    commit,
    asvConfig,
    url: pullUrl(input.remote, input.repo, input.number),
  });
  return pullRequestSchema.parse(record);
}

/** The git reads of one plan, shared by its items (keyed by the run's ledger). */
const sessions = new WeakMap<Ledger, GitSession>();

interface SessionOptions {
  readonly git: GitService;
  readonly log: Logger;
  readonly db: Db;
  readonly ledger: Ledger;
  readonly path: string;
  readonly repo: string;
  /** The default branch's first-parent line as the plan read it (SHAs, newest first). */
  readonly line: readonly string[];
  readonly items: readonly WorkItem<GitItemInput>[];
  readonly batchSize: number;
}

class GitSession {
  readonly path: string;
  readonly #o: SessionOptions;
  /** Commits to read, in plan order, cut into batches; decided at the first request. */
  #batches: string[][] | null = null;
  readonly #batchOf = new Map<string, number>();
  readonly #loading = new Map<number, Promise<Map<string, LogCommit>>>();
  /** Batches whose read failed: their commits are read one by one. */
  readonly #failed = new Set<number>();
  #asv: Promise<Map<string, AsvConfigFile | null>> | null = null;

  constructor(options: SessionOptions) {
    this.#o = options;
    this.path = options.path;
  }

  /** A commit with its files and patch against its first parent. */
  async commit(sha: string): Promise<LogCommit> {
    this.#batches ??= this.#plan(sha);
    const index = this.#batchOf.get(sha);
    if (index === undefined || this.#failed.has(index)) return this.#single(sha);
    let batch: Map<string, LogCommit>;
    try {
      batch = await this.#load(index);
    } catch (error) {
      // One commit that git cannot read (a blob missing from a partial clone) or whose output
      // cannot be parsed fails its whole batch: its commits are read one by one instead, so
      // that only the commits at fault fail.
      if (!this.#failed.has(index)) {
        this.#failed.add(index);
        this.#loading.delete(index);
        this.#o.log.warn({ stage: 'collect', repo: this.#o.repo, batch: index, commits: this.#batches[index]!.length, err: (error as Error).message }, 'a batch of commits could not be read at once; reading its commits one by one');
      }
      return this.#single(sha);
    }
    if (index + 1 < this.#batches.length) void this.#load(index + 1).catch(() => undefined);
    const commit = batch.get(sha);
    if (!commit) throw new ItemError('commit-not-read', `${this.#o.repo}@${sha}: git did not return the commit`);
    batch.delete(sha);
    if (batch.size === 0) this.#loading.delete(index);
    return commit;
  }

  /** The asv config at a base commit: the store first, then one batched git read for all bases of the plan. */
  async asvConfig(baseSha: string): Promise<AsvConfigFile | null> {
    const stored = loadAsvConfig(this.#o.db, this.#o.repo, baseSha);
    if (stored !== undefined) return stored;
    this.#asv ??= this.#readAsvConfigs(baseSha);
    const found = await this.#asv;
    if (found.has(baseSha)) return found.get(baseSha)!;
    const one = await this.#o.git.findAsvConfig(this.path, baseSha);
    saveAsvConfig(this.#o.db, this.#o.repo, baseSha, one);
    return one;
  }

  async #readAsvConfigs(first: string): Promise<Map<string, AsvConfigFile | null>> {
    const bases = new Set<string>([first]);
    for (const item of this.#o.items) {
      if (loadAsvConfig(this.#o.db, this.#o.repo, item.input.baseSha) === undefined) bases.add(item.input.baseSha);
    }
    const found = await this.#o.git.findAsvConfigs(this.path, this.#o.line, [...bases]);
    saveAsvConfigs(this.#o.db, this.#o.repo, found);
    return found;
  }

  /**
   * Which commits to read: the items the runner will run. By the first run the runner has put
   * every item whose input or version changed back to pending, so those are the items not done
   * or dropped. If the first request is for an item that is done (a forced run), every item.
   */
  #plan(firstSha: string): string[][] {
    const { items, ledger } = this.#o;
    const pending = items.filter((item) => {
      const status = ledger.get('collect', item.key)?.status;
      return status !== 'done' && status !== 'dropped';
    });
    const chosen = pending.some((i) => i.input.mergeSha === firstSha) ? pending : items;
    const shas = chosen.map((i) => i.input.mergeSha);
    const batches: string[][] = [];
    for (let i = 0; i < shas.length; i += this.#o.batchSize) batches.push(shas.slice(i, i + this.#o.batchSize));
    batches.forEach((batch, index) => batch.forEach((sha) => this.#batchOf.set(sha, index)));
    return batches;
  }

  #load(index: number): Promise<Map<string, LogCommit>> {
    let loading = this.#loading.get(index);
    if (!loading) {
      const shas = this.#batches![index]!;
      loading = this.#o.git.commits(this.path, shas, { patch: true }).then((list) => new Map(list.map((c) => [c.sha, c])));
      this.#loading.set(index, loading);
    }
    return loading;
  }

  async #single(sha: string): Promise<LogCommit> {
    const [commit] = await this.#o.git.commits(this.path, [sha], { patch: true });
    if (!commit) throw new ItemError('commit-not-read', `${this.#o.repo}@${sha}: git did not return the commit`);
    return commit;
  }
}
