/**
 * Collect from a local clone with git, no API. The plan reads only the window's part of the
 * history, without diffs (`readWindow`), and starts reading the changes to asv configs between
 * the window's bases; the items' commits are then read by `collect.gitStreams` `git log -p`
 * processes, each every n-th commit, whose output is taken as git writes it (in plan order, at
 * most `collect.gitBatchSize` commits ahead of their items; line counts come from the patches),
 * and the asv configs of their base commits from those changes, the oldest base's tree and one
 * read of each config version.
 */
import { loadAsvConfig, loadAsvConfigs, saveAsvConfig, saveAsvConfigs, type AsvConfigFile } from '../../cache/asv-configs.js';
import type { Db } from '../../cache/store.js';
import type { Ledger } from '../../cache/ledger.js';
import { ItemError } from '../../pipeline/errors.js';
import type { Logger } from '../../pipeline/logging.js';
import type { LogCommit } from '../../pipeline/services/git-parse.js';
import {
  openLocalRepository,
  type AsvConfigChanges,
  type CommitStream,
  type GitService,
  type StreamedCommit,
} from '../../pipeline/services/git.js';
import type { Scope } from '../../pipeline/scope.js';
import type { PipelineContext, WorkItem } from '../../pipeline/stage.js';
import { buildGitPullRequest, pullRequestsInWindow, pullUrl, windowSpan, type GitPullRequests } from './git-pulls.js';
import type { Window } from '../../pipeline/window.js';
import type { CollectInput, GitItemInput } from './input.js';
import { prKey } from '../../pipeline/concepts/keys.js';
import type { PullRequest } from '../../pipeline/concepts/records/pull-request.js';

export async function planGit(ctx: PipelineContext, scope: Scope): Promise<WorkItem<CollectInput>[]> {
  if (scope.source.kind !== 'git') throw new RangeError('planGit needs a git source');
  const git = ctx.services.git;
  const path = scope.source.path;
  const { name: repo, remote, defaultBranch, tip } = await openLocalRepository(git, path, scope.repos);
  const started = Date.now();
  const found = await readWindow(git, path, tip, scope.window, ctx.config.collect.gitWindowSlackDays);
  const wanted = new Set(scope.prs);
  const candidates = found.pulls.filter((c) => wanted.size === 0 || wanted.has(c.number));
  ctx.log.info(
    {
      stage: 'collect',
      repo,
      path,
      branch: defaultBranch,
      mainline: found.line.length,
      sideCommits: found.sideCommits,
      pulls: candidates.length,
      ms: Date.now() - started,
    },
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
  const session = new GitSession({
    git,
    log: ctx.log,
    db: ctx.db,
    ledger: ctx.ledger,
    path,
    repo,
    line: found.line,
    items,
    batchSize: ctx.config.collect.gitBatchSize,
    streams: ctx.config.collect.gitStreams,
    asvChanges: found.asvChanges,
  });
  sessions.set(ctx.ledger, session);
  // Every item needs its base's asv config: they are read (not stored) while the runner plans, as
  // no item can end before; a dry run reads them for nothing.
  if (items.length > 0) void session.readAsvConfigs();
  return items;
}

/**
 * The window's part of a clone's history: the first-parent line from the tip down to `slackDays`
 * before the window's start (git's `--since` stops there), then, when the window has merges, the
 * commits between the window's newest PR commit and the first parent of its oldest (what its
 * merges brought in). The rest of the history is never read.
 */
export async function readWindow(
  git: GitService,
  path: string,
  tip: string,
  window: Window,
  slackDays: number,
): Promise<GitPullRequests & { line: string[]; sideCommits: number; asvChanges: Promise<AsvConfigChanges> | null }> {
  const since = new Date(Date.parse(window.start) - slackDays * 86_400_000).toISOString();
  const line = await git.graph(path, tip, { firstParent: true, since });
  const commits = new Map(line.map((c) => [c.sha, c]));
  const span = windowSpan(line, window);
  let base: string | undefined;
  let baseKnown = false;
  let sideCommits = 0;
  let asvChanges: Promise<AsvConfigChanges> | null = null;
  if (span) {
    base = span.oldest.parents[0];
    // The changes to asv configs between the window's bases, read while the rest of the plan is
    // (git's longest read for the items' asv configs: a tree diff per commit).
    if (base !== undefined && commits.has(base)) {
      asvChanges = git.asvConfigChanges(path, `${base}..${span.newest.sha}`);
      asvChanges.catch(() => undefined); // a failure is met where it is awaited
    }
    baseKnown = base !== undefined && (commits.has(base) || (await git.revParse(path, base)) !== null);
    // Only merges bring in commits off the line (a history of squash commits has none to read).
    const from = line.indexOf(span.newest);
    const to = line.indexOf(span.oldest);
    if (line.slice(from, to + 1).some((c) => c.parents.length > 1)) {
      const side = await git.graph(path, span.newest.sha, { exclude: baseKnown ? [base!] : [] });
      for (const c of side) {
        if (!commits.has(c.sha)) sideCommits += 1;
        commits.set(c.sha, c);
      }
    }
  }
  const found = pullRequestsInWindow({ line, commits, present: (sha) => commits.has(sha) || (baseKnown && sha === base) }, window);
  return { ...found, line: line.map((c) => c.sha), sideCommits, asvChanges };
}

export async function collectFromGit(ctx: PipelineContext, input: GitItemInput): Promise<PullRequest> {
  let session = sessions.get(ctx.ledger);
  if (!session || session.path !== input.path) {
    // Run without this process's plan (another caller): read just this commit.
    session = new GitSession({
      git: ctx.services.git,
      log: ctx.log,
      db: ctx.db,
      ledger: ctx.ledger,
      path: input.path,
      repo: input.repo,
      line: [],
      items: [],
      batchSize: 1,
      streams: 1,
      asvChanges: null,
    });
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
  // Not parsed again by pullRequestSchema: the record is built field by field from git's parsed
  // output, in the schema's order (test/collect/git-source.test.ts holds every stored record to
  // the schema's text), and zod's copy of each record cost 4% of a large collect's CPU.
  return record;
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
  /** git processes reading the commits at once (`collect.gitStreams`). */
  readonly streams: number;
  /** The asv config changes between the window's bases, when the plan started reading them. */
  readonly asvChanges: Promise<AsvConfigChanges> | null;
}

/** One git process of a session's read, and how it ended (undefined while it runs; null: every commit read). */
interface Reader {
  readonly stream: CommitStream;
  ended: { error: unknown } | null | undefined;
  /** Its commits read and not taken yet, at most `limit` before it is paused. */
  held: number;
  paused: boolean;
  readonly limit: number;
}

class GitSession {
  readonly path: string;
  readonly #o: SessionOptions;
  /** The commits the streams read, by SHA the stream reading it; null before the first request. */
  #wanted: Map<string, Reader> | null = null;
  /** Commits read and not taken yet (their items have not asked), with their errors. */
  readonly #arrived = new Map<string, StreamedCommit>();
  readonly #waiting = new Map<string, (result: StreamedCommit | null) => void>();
  #asv: Promise<{ found: Map<string, AsvConfigFile | null>; read: Map<string, AsvConfigFile | null> }> | null = null;
  #asvSaved = false;

  constructor(options: SessionOptions) {
    this.#o = options;
    this.path = options.path;
  }

  /** A commit with its files and patch against its first parent. */
  async commit(sha: string): Promise<LogCommit> {
    if (this.#wanted === null) this.#start(sha);
    const reader = this.#wanted!.get(sha);
    if (!reader) return this.#single(sha);
    const result = await this.#take(sha, reader);
    if (result === null) {
      // git stopped before this commit: it is read alone, so that only the commits at fault fail.
      if (reader.ended) return this.#single(sha);
      throw new ItemError('commit-not-read', `${this.#o.repo}@${sha}: git did not return the commit`);
    }
    if ('error' in result) throw result.error;
    return result.commit;
  }

  /**
   * The asv config at a base commit: for all bases of the plan at once, those the store has and
   * one batched git read for the others; a base outside the plan, the store then git.
   */
  async asvConfig(baseSha: string): Promise<AsvConfigFile | null> {
    const { found, read } = await this.readAsvConfigs();
    if (!this.#asvSaved) {
      this.#asvSaved = true;
      saveAsvConfigs(this.#o.db, this.#o.repo, read);
    }
    if (found.has(baseSha)) return found.get(baseSha)!;
    const stored = loadAsvConfig(this.#o.db, this.#o.repo, baseSha);
    if (stored !== undefined) return stored;
    const one = await this.#o.git.findAsvConfig(this.path, baseSha);
    saveAsvConfig(this.#o.db, this.#o.repo, baseSha, one);
    return one;
  }

  /**
   * The asv configs of every base of the plan, read once: those the store has, and the others
   * from git (`read`, stored when an item first asks). When git cannot read them at once, each
   * base is read alone.
   */
  readAsvConfigs(): Promise<{ found: Map<string, AsvConfigFile | null>; read: Map<string, AsvConfigFile | null> }> {
    this.#asv ??= this.#readAsvConfigs().catch((error: unknown) => {
      this.#o.log.warn(
        { stage: 'collect', repo: this.#o.repo, err: (error as Error).message },
        'the asv configs of the base commits could not be read at once; reading them one by one',
      );
      return { found: new Map<string, AsvConfigFile | null>(), read: new Map<string, AsvConfigFile | null>() };
    });
    return this.#asv;
  }

  async #readAsvConfigs(): Promise<{ found: Map<string, AsvConfigFile | null>; read: Map<string, AsvConfigFile | null> }> {
    const bases = new Set<string>(this.#o.items.map((item) => item.input.baseSha));
    const found = loadAsvConfigs(this.#o.db, this.#o.repo, bases);
    // read again here when the plan's read failed
    const changes = await this.#o.asvChanges?.catch(() => undefined);
    const read = await this.#o.git.findAsvConfigs(
      this.path,
      this.#o.line,
      [...bases].filter((sha) => !found.has(sha)),
      changes ? { changes } : {},
    );
    for (const [sha, config] of read) found.set(sha, config);
    return { found, read };
  }

  /**
   * Starts the git processes that read the commits of the items the runner will run, in plan
   * order. By the first run the runner has put every item whose input or version changed back to
   * pending, so those are the items not done or dropped. If the first request is for an item that
   * is done (a forced run), every item. With `collect.gitStreams` above 1 the commits are dealt
   * out in turn to that many processes (beside the git queue: see `streamCommitLists`), which run
   * on as many cores while this process takes the records in plan order. At most
   * `collect.gitBatchSize` commits are held read ahead of their items, that many over the
   * processes: beyond that git waits.
   */
  #start(firstSha: string): void {
    const { items, ledger } = this.#o;
    // one statement for every item's status, not one lookup per item
    const statuses = ledger.statuses(
      'collect',
      items.map((item) => item.key),
    );
    const pending = items.filter((item) => {
      const status = statuses.get(item.key);
      return status !== 'done' && status !== 'dropped';
    });
    const chosen = pending.some((i) => i.input.mergeSha === firstSha) ? pending : items;
    const shas = chosen.map((i) => i.input.mergeSha);
    this.#wanted = new Map();
    const count = Math.min(this.#o.streams, shas.length);
    const limit = Math.max(1, Math.ceil(this.#o.batchSize / count));
    const lists = Array.from({ length: count }, (_, r) => shas.filter((_, i) => i % count === r));
    // (git hands over no commit before this returns: the readers are known by then)
    const streams = this.#o.git.streamCommitLists(this.path, lists, (result) => this.#arrive(result));
    lists.forEach((list, r) => {
      const reader: Reader = { stream: streams[r]!, ended: undefined, held: 0, paused: false, limit };
      for (const sha of list) this.#wanted!.set(sha, reader);
      this.#follow(reader, list.length);
    });
  }

  #arrive(result: StreamedCommit): void {
    const waiting = this.#waiting.get(result.sha);
    if (waiting) {
      this.#waiting.delete(result.sha);
      waiting(result);
      return;
    }
    const reader = this.#wanted?.get(result.sha);
    if (!reader) return; // not a commit it asked for: git does not do that
    this.#arrived.set(result.sha, result);
    // Only a process ahead of the items is paused: the one holding the commit they wait for has
    // none of its own waiting (it delivers in plan order), so it always goes on.
    reader.held += 1;
    if (!reader.paused && reader.held >= reader.limit) {
      reader.paused = true;
      reader.stream.pause();
    }
  }

  #follow(reader: Reader, commits: number): void {
    reader.stream.done.then(
      () => this.#end(reader, null),
      (error: unknown) => {
        this.#o.log.warn(
          { stage: 'collect', repo: this.#o.repo, commits, err: (error as Error).message },
          'git stopped before reading every commit; reading the rest one by one',
        );
        this.#end(reader, { error });
      },
    );
  }

  #take(sha: string, reader: Reader): Promise<StreamedCommit | null> {
    const arrived = this.#arrived.get(sha);
    if (arrived) {
      this.#arrived.delete(sha);
      reader.held -= 1;
      if (reader.paused && reader.held <= reader.limit / 2) {
        reader.paused = false;
        reader.stream.resume();
      }
      return Promise.resolve(arrived);
    }
    if (reader.ended !== undefined) return Promise.resolve(null);
    return new Promise((resolve) => this.#waiting.set(sha, resolve));
  }

  #end(reader: Reader, how: { error: unknown } | null): void {
    reader.ended = how;
    for (const [sha, resolve] of this.#waiting) {
      if (this.#wanted?.get(sha) !== reader) continue;
      this.#waiting.delete(sha);
      resolve(null);
    }
  }

  async #single(sha: string): Promise<LogCommit> {
    const [commit] = await this.#o.git.commits(this.path, [sha], { patch: true });
    if (!commit) throw new ItemError('commit-not-read', `${this.#o.repo}@${sha}: git did not return the commit`);
    return commit;
  }
}
