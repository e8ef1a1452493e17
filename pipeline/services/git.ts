import { isUtf8 } from 'node:buffer';
import { spawn } from 'node:child_process';
import { basename } from 'node:path';
import type PQueue from 'p-queue';
import { ConfigError, OutsideServiceError } from '../errors.js';
import type { Logger } from '../logging.js';
import {
  ASV_CONFIG_RE,
  binarySection,
  GRAPH_FORMAT,
  logFormat,
  LogRecordSplitter,
  newLogMarker,
  parseCatFileBatch,
  parseCommitHeader,
  parseLog,
  parseLsTree,
  parsePatch,
  patchSectionRanges,
  pickAsvConfigPath,
  sectionBlobs,
  type CatFileObject,
  type CommitHeader,
  type LogCommit,
  type TreeEntry,
} from './git-parse.js';

export type { CommitHeader, LogCommit, TreeEntry } from './git-parse.js';

export interface GitServiceOptions {
  /** Every git process runs through this queue (`ctx.queues.git`). */
  readonly queue: PQueue;
  /** Per process; a process still running then is killed. */
  readonly timeoutMs: number;
  readonly log?: Logger;
  /** The git executable (default `git` on PATH). */
  readonly binary?: string;
}

export interface RunOptions {
  readonly input?: string;
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
  /** Exit codes that are not failures (e.g. 1 for `git show` of a missing path is still an error; `rev-parse --verify -q` uses 1). */
  readonly okCodes?: readonly number[];
  /** Output handed over as git writes it, instead of collected (the result's `stdout` is then empty). */
  readonly onStdout?: (chunk: Buffer) => void;
  /** Once git is started: a handle that pauses and resumes the reading of its output (git waits meanwhile). */
  readonly onStart?: (output: OutputFlow) => void;
}

/** Pauses and resumes the reading of a process's output. */
export interface OutputFlow {
  pause(): void;
  resume(): void;
}

/** One commit of `streamCommitLists`: read and parsed, or what went wrong with it. */
export type StreamedCommit = { readonly sha: string; readonly commit: LogCommit } | { readonly sha: string; readonly error: unknown };

/** One process of a `streamCommitLists` read: its reading paused and resumed at will, `done` settled once git has ended and every commit was handed over. */
export interface CommitStream extends OutputFlow {
  readonly done: Promise<void>;
}

export interface RunResult {
  readonly code: number;
  readonly stdout: Buffer;
  readonly stderr: string;
}

export interface LogOptions {
  /** Revisions and ranges (`main`, `a..b`); default HEAD. */
  readonly revs?: readonly string[];
  readonly firstParent?: boolean;
  /** Committer-date bounds passed to git (`--since`, `--until`); filter exactly afterwards. */
  readonly since?: string;
  readonly until?: string;
  /** Include each commit's patch against its first parent. */
  readonly patch?: boolean;
  /** Limit to these paths (pathspecs). */
  readonly paths?: readonly string[];
  readonly maxCount?: number;
}

/** What a commit did to an asv config path: its blob id after the commit, null when it deleted it. */
export interface AsvConfigChange {
  readonly path: string;
  readonly blob: string | null;
}

/** By commit SHA, what it did to asv config paths (`asvConfigChanges`). */
export type AsvConfigChanges = ReadonlyMap<string, readonly AsvConfigChange[]>;

export interface AsvConfigFile {
  readonly path: string;
  readonly text: string;
}

/** Options every command gets, so that a user's git configuration cannot change the output. */
const CONFIG_ARGS = [
  '-c',
  'core.quotePath=true',
  '-c',
  'color.ui=never',
  '-c',
  'diff.noprefix=false',
  '-c',
  'diff.mnemonicPrefix=false',
  '-c',
  'diff.external=',
  '-c',
  'log.showSignature=false',
  '-c',
  'log.mailmap=false',
  '-c',
  'i18n.logOutputEncoding=UTF-8',
];

/**
 * Diff options for patches: git's own format, renames detected, no textconv or external tools,
 * binary changes in full (`--binary`: a patch `git apply` can apply) and full blob ids.
 */
const DIFF_ARGS = ['--no-color', '--no-ext-diff', '--no-textconv', '--binary', '--full-index', '--src-prefix=a/', '--dst-prefix=b/', '-M'];

const STDERR_TAIL = 4000;

/**
 * The git adapter: every git process perfmine starts goes through here, each with a timeout, one
 * per slot of the `git` queue (but the commit reads of `streamCommitLists`, which run beside it).
 * Output parsing lives in git-parse.ts.
 */
export class GitService {
  readonly #queue: PQueue;
  readonly #timeoutMs: number;
  readonly #log: Logger | undefined;
  readonly #binary: string;

  constructor(options: GitServiceOptions) {
    this.#queue = options.queue;
    this.#timeoutMs = options.timeoutMs;
    this.#log = options.log;
    this.#binary = options.binary ?? 'git';
  }

  /** Runs `git -C repo args...` and returns its output; a non-zero exit is an OutsideServiceError. */
  async run(repo: string, args: readonly string[], options: RunOptions = {}): Promise<RunResult> {
    const result = await this.#queue.add(() => this.#spawn(repo, args, options));
    return result;
  }

  /** Like run, as UTF-8 text. */
  async text(repo: string, args: readonly string[], options: RunOptions = {}): Promise<string> {
    return (await this.run(repo, args, options)).stdout.toString('utf8');
  }

  #spawn(repo: string, args: readonly string[], options: RunOptions): Promise<RunResult> {
    const timeoutMs = options.timeoutMs ?? this.#timeoutMs;
    const started = Date.now();
    return new Promise<RunResult>((resolve, reject) => {
      const child = spawn(this.#binary, [...CONFIG_ARGS, '-C', repo, ...args], {
        stdio: ['pipe', 'pipe', 'pipe'],
        env: gitEnv(),
      });
      const out: Buffer[] = [];
      let err = '';
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        child.kill('SIGKILL');
      }, timeoutMs);
      const onAbort = () => child.kill('SIGKILL');
      options.signal?.addEventListener('abort', onAbort, { once: true });
      if (options.onStdout) child.stdout.on('data', options.onStdout);
      else child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
      options.onStart?.({ pause: () => child.stdout.pause(), resume: () => child.stdout.resume() });
      child.stderr.on('data', (chunk: Buffer) => {
        err = (err + chunk.toString('utf8')).slice(-STDERR_TAIL);
      });
      child.stdin.on('error', () => undefined); // git may exit before reading all of its input
      child.on('error', (error) => {
        clearTimeout(timer);
        options.signal?.removeEventListener('abort', onAbort);
        reject(
          new OutsideServiceError('git', 'git-unavailable', `git could not be started: ${error.message}`, {
            fix: 'install git',
            cause: error,
          }),
        );
      });
      child.on('close', (code, signal) => {
        clearTimeout(timer);
        options.signal?.removeEventListener('abort', onAbort);
        const what = `git ${args.slice(0, 3).join(' ')}${args.length > 3 ? ' …' : ''}`;
        this.#log?.debug({ repo, command: what, code, ms: Date.now() - started }, 'git');
        if (timedOut) {
          reject(
            new OutsideServiceError('git', 'git-timeout', `${what} in ${repo} did not finish within ${timeoutMs} ms`, { retryable: true }),
          );
          return;
        }
        if (options.signal?.aborted) {
          reject(new OutsideServiceError('git', 'git-aborted', `${what} in ${repo} was stopped`));
          return;
        }
        const exit = code ?? (signal ? 128 : 1);
        if (exit !== 0 && !(options.okCodes ?? []).includes(exit)) {
          reject(
            new OutsideServiceError(
              'git',
              'git-failed',
              `${what} in ${repo} exited with ${exit}: ${err.trim().split('\n').slice(-3).join(' | ')}`,
              { status: exit },
            ),
          );
          return;
        }
        resolve({ code: exit, stdout: Buffer.concat(out), stderr: err });
      });
      if (options.input !== undefined) child.stdin.end(options.input);
      else child.stdin.end();
    });
  }

  /** Whether the clone is shallow (history cut at some depth). */
  async isShallow(repo: string): Promise<boolean> {
    return (await this.text(repo, ['rev-parse', '--is-shallow-repository'])).trim() === 'true';
  }

  /** The full SHA of a revision, or null when it does not exist. */
  async revParse(repo: string, rev: string): Promise<string | null> {
    const r = await this.run(repo, ['rev-parse', '--verify', '-q', `${rev}^{commit}`], { okCodes: [1] });
    return r.code === 0 ? r.stdout.toString('utf8').trim() : null;
  }

  /**
   * The default branch of a clone: what `origin/HEAD` points at, else the checked-out branch,
   * else `main` or `master` when one exists.
   */
  async defaultBranch(repo: string): Promise<string> {
    const remoteHead = await this.run(repo, ['symbolic-ref', '-q', '--short', 'refs/remotes/origin/HEAD'], { okCodes: [1, 128] });
    if (remoteHead.code === 0) {
      const ref = remoteHead.stdout.toString('utf8').trim();
      const local = ref.replace(/^origin\//, '');
      if (await this.revParse(repo, `refs/heads/${local}`)) return local;
      return ref;
    }
    const head = await this.run(repo, ['symbolic-ref', '-q', '--short', 'HEAD'], { okCodes: [1, 128] });
    if (head.code === 0) return head.stdout.toString('utf8').trim();
    for (const name of ['main', 'master']) if (await this.revParse(repo, `refs/heads/${name}`)) return name;
    throw new OutsideServiceError(
      'git',
      'git-no-default-branch',
      `${repo}: cannot tell the default branch (detached HEAD, no origin/HEAD, no main or master)`,
    );
  }

  /**
   * What `defaultBranch` and `revParse` of it tell, in two git processes run at once instead of
   * up to four in turn: the default branch (origin/HEAD's branch, else the checked-out branch,
   * else `main` or `master`) and its tip (null when it has no commit). Null when `repo` is not a
   * git repository.
   */
  async openClone(repo: string): Promise<{ defaultBranch: string; tip: string | null } | null> {
    const [refs, head] = await Promise.all([
      this.run(repo, ['for-each-ref', '--format=%(refname)%00%(symref)%00%(objectname)', 'refs/remotes/origin/', 'refs/heads/'], {
        okCodes: [128],
      }),
      this.run(repo, ['symbolic-ref', '-q', 'HEAD'], { okCodes: [1, 128] }),
    ]);
    if (refs.code !== 0) return null;
    const sha = new Map<string, string>();
    let originHead: string | null = null;
    for (const line of refs.stdout.toString('utf8').split('\n')) {
      const [name, symref, objectname] = line.split('\0');
      if (!name || objectname === undefined) continue;
      if (name === 'refs/remotes/origin/HEAD') originHead = symref || null;
      sha.set(name, objectname);
    }
    if (originHead?.startsWith('refs/remotes/')) {
      const local = originHead.slice('refs/remotes/origin/'.length);
      if (sha.has(`refs/heads/${local}`)) return { defaultBranch: local, tip: sha.get(`refs/heads/${local}`)! };
      return { defaultBranch: originHead.slice('refs/remotes/'.length), tip: sha.get(originHead) ?? null };
    }
    const current = head.code === 0 ? head.stdout.toString('utf8').trim() : '';
    if (current.startsWith('refs/heads/')) return { defaultBranch: current.slice('refs/heads/'.length), tip: sha.get(current) ?? null };
    for (const name of ['main', 'master'])
      if (sha.has(`refs/heads/${name}`)) return { defaultBranch: name, tip: sha.get(`refs/heads/${name}`)! };
    throw new OutsideServiceError(
      'git',
      'git-no-default-branch',
      `${repo}: cannot tell the default branch (detached HEAD, no origin/HEAD, no main or master)`,
    );
  }

  /** The URL of a remote, or null. */
  async remoteUrl(repo: string, remote = 'origin'): Promise<string | null> {
    const r = await this.run(repo, ['config', '--get', `remote.${remote}.url`], { okCodes: [1] });
    const url = r.stdout.toString('utf8').trim();
    return r.code === 0 && url ? url : null;
  }

  /** Author and committer dates of a commit (ISO 8601 UTC). */
  async commitDates(repo: string, sha: string): Promise<{ authorDate: string; committerDate: string }> {
    const text = await this.text(repo, ['log', '-1', '--no-walk', `--format=${GRAPH_FORMAT}`, sha, '--']);
    const header = parseCommitHeader(text.split('\0')[1] ?? '');
    return { authorDate: header.authorDate, committerDate: header.committerDate };
  }

  /**
   * Commits with their file statistics (numstat) and, when asked, their patches (then the
   * statistics are counted from the patch, as numstat would); merges are diffed against their
   * first parent. One process for the whole range.
   */
  async log(repo: string, options: LogOptions = {}): Promise<LogCommit[]> {
    // With a patch, counts come from its hunks: adding --numstat would make git diff twice.
    const marker = newLogMarker();
    const args = ['log', `--format=${logFormat(marker)}`, options.patch ? '-p' : '--numstat', '--diff-merges=first-parent', ...DIFF_ARGS];
    if (options.firstParent) args.push('--first-parent');
    if (options.since) args.push(`--since=${options.since}`);
    if (options.until) args.push(`--until=${options.until}`);
    if (options.maxCount !== undefined) args.push(`--max-count=${options.maxCount}`);
    args.push(...(options.revs ?? ['HEAD']), '--', ...(options.paths ?? []));
    return this.#parseLogOutput(repo, (await this.run(repo, args)).stdout, marker);
  }

  /** Named commits (any order) with numstat and patches against their first parents, in one process. */
  async commits(repo: string, shas: readonly string[], options: { patch?: boolean } = {}): Promise<LogCommit[]> {
    if (shas.length === 0) return [];
    const marker = newLogMarker();
    const args = [
      'log',
      '--no-walk=unsorted',
      '--stdin',
      `--format=${logFormat(marker)}`,
      (options.patch ?? true) ? '-p' : '--numstat',
      '--diff-merges=first-parent',
      ...DIFF_ARGS,
    ];
    return this.#parseLogOutput(repo, (await this.run(repo, args, { input: `${shas.join('\n')}\n` })).stdout, marker);
  }

  /**
   * Named commits with their patches, as `commits` gives them, in lists: one git process per list,
   * whose output is read as git writes it (git's diff is single-threaded: several lists spread it
   * over cores). Each commit is handed to `onCommit` as soon as it is complete (a list's in the
   * order given), so that the work on the first ones overlaps git's on the next; each process is
   * paused and resumed alone. A commit git wrote but that cannot be parsed is handed over with its
   * error; a failure of git itself rejects that process's `done` (the commits handed over until
   * then stand). These processes run beside the git queue, not in its slots: a reader pauses a
   * process that is ahead of it, and a paused process holding a slot could keep what the reader
   * waits for (another list's commits, the blobs of a byte-exact patch, the other reads of its
   * items) from ever starting.
   */
  streamCommitLists(repo: string, lists: readonly (readonly string[])[], onCommit: (result: StreamedCommit) => void): CommitStream[] {
    return lists.map((shas) => this.#streamCommits(repo, shas, onCommit));
  }

  #streamCommits(repo: string, shas: readonly string[], onCommit: (result: StreamedCommit) => void): CommitStream {
    const marker = newLogMarker();
    const splitter = new LogRecordSplitter(marker);
    const headerAt = Buffer.byteLength(`\0${marker}H`);
    let flow: OutputFlow | null = null;
    let paused = false;
    // Records are parsed in order, those of a chunk together; one that needs its blobs (a
    // byte-exact patch) waits for them. Output that cannot be parsed is parsed again record by
    // record, so that only the commits at fault are handed over with an error.
    let chain = Promise.resolve();
    const separator = Buffer.from(`\0${marker}H`);
    const records = (out: Buffer) => {
      const starts: number[] = [];
      for (let at = out.indexOf(separator); at >= 0; at = out.indexOf(separator, at + 1)) starts.push(at);
      return starts.map((start, i) => out.subarray(start, starts[i + 1] ?? out.length));
    };
    const deliver = (out: Buffer) => {
      chain = chain.then(async () => {
        try {
          for (const commit of await this.#parseLogOutput(repo, out, marker)) onCommit({ sha: commit.sha, commit });
          return;
        } catch {
          // one record at a time below
        }
        for (const record of records(out)) {
          const sha = record
            .subarray(headerAt, headerAt + 64)
            .toString('latin1')
            .split('\x1f')[0]!;
          try {
            const [commit] = await this.#parseLogOutput(repo, record, marker);
            onCommit(commit ? { sha: commit.sha, commit } : { sha, error: new SyntaxError(`git: an empty record for ${sha}`) });
          } catch (error) {
            onCommit({ sha, error });
          }
        }
      });
    };
    const args = [
      'log',
      '--no-walk=unsorted',
      '--stdin',
      `--format=${logFormat(marker)}`,
      '-p',
      '--diff-merges=first-parent',
      ...DIFF_ARGS,
    ];
    const done = this.#spawn(repo, args, {
      input: `${shas.join('\n')}\n`,
      onStdout: (chunk) => {
        const complete = splitter.push(chunk);
        if (complete) deliver(complete);
      },
      onStart: (f) => {
        flow = f;
        if (paused) f.pause();
      },
    }).then(async () => {
      const last = splitter.end();
      if (last) deliver(last);
      await chain;
    });
    return {
      done,
      pause: () => {
        paused = true;
        flow?.pause();
      },
      resume: () => {
        paused = false;
        flow?.resume();
      },
    };
  }

  /**
   * Parses `git log` output. A patch is text, but the text of a file need not be UTF-8 (Latin-1
   * sources, fixtures) and may hold NUL bytes (git diffs a file as text when its first 8,000
   * bytes have none): decoding it would replace its bytes, and the stored patch would no longer
   * apply. Such a file's section is rewritten as a git binary patch of its blobs (byte-exact),
   * and named in the commit's `bytePatches`; its statistics still come from its text.
   */
  async #parseLogOutput(repo: string, out: Buffer, marker: string): Promise<LogCommit[]> {
    const commits = parseLog(out.toString('utf8'), marker);
    // Each record has two NULs of its own (its markers); any other is in a message or a patch.
    if (isUtf8(out) && countByte(out, 0) === 2 * commits.length) return commits;
    const bad = patchSectionRanges(out, marker)
      .filter((r) => {
        const section = out.subarray(r.start, r.end);
        return section.includes(0) || !isUtf8(section);
      })
      .map((r) => ({ ...r, header: out.subarray(r.start, r.end).toString('latin1') }))
      .map((r) => ({ ...r, blobs: sectionBlobs(r.header) }));
    if (bad.length === 0) return commits; // only commit messages are not UTF-8 (or hold a NUL): decoded as they are
    const wanted = [...new Set(bad.flatMap((r) => [r.blobs?.old, r.blobs?.new]).filter((sha): sha is string => typeof sha === 'string'))];
    const objects = await this.catFile(repo, wanted);
    const blobs = new Map(wanted.map((sha, i) => [sha, objects[i]?.content ?? null]));
    const parts: Buffer[] = [];
    const byCommit = new Map<number, string[]>();
    let at = 0;
    for (const r of bad) {
      const oldContent = r.blobs?.old ? blobs.get(r.blobs.old) : Buffer.alloc(0);
      const newContent = r.blobs?.new ? blobs.get(r.blobs.new) : Buffer.alloc(0);
      if (!r.blobs || !oldContent || !newContent) continue; // no full index: left as decoded
      parts.push(out.subarray(at, r.start), Buffer.from(binarySection(r.header, oldContent, newContent), 'latin1'));
      at = r.end;
      const path = parsePatch(out.subarray(r.start, r.end).toString('utf8'))[0]?.path;
      if (path !== undefined) byCommit.set(r.record, [...(byCommit.get(r.record) ?? []), path]);
    }
    parts.push(out.subarray(at));
    const rewritten = parseLog(Buffer.concat(parts).toString('utf8'), marker);
    return commits.map((c, i) => {
      const paths = byCommit.get(i);
      return paths ? { ...c, patch: rewritten[i]!.patch, bytePatches: paths } : c;
    });
  }

  /**
   * The commit graph reachable from `rev` without diffs (sha, parents, dates, subject): cheap
   * even for long histories. `since` stops the walk at the first commit older than it (git's
   * `--since`: along a first-parent line, the line's part from that date on); `exclude` leaves
   * out every commit reachable from those (`rev ^x`).
   */
  async graph(
    repo: string,
    rev: string,
    options: { firstParent?: boolean; since?: string; exclude?: readonly string[] } = {},
  ): Promise<CommitHeader[]> {
    const args = ['log', `--format=${GRAPH_FORMAT}`];
    if (options.firstParent) args.push('--first-parent');
    if (options.since) args.push(`--since=${options.since}`);
    args.push(rev, ...(options.exclude ?? []).map((sha) => `^${sha}`), '--');
    const pieces = (await this.text(repo, args)).split('\0');
    const out: CommitHeader[] = [];
    for (let i = 1; i < pieces.length; i += 2) out.push(parseCommitHeader(pieces[i]!));
    return out;
  }

  /** `git diff base head` in git's own format (binary files as `Binary files ... differ`). */
  async diff(repo: string, base: string, head: string): Promise<string> {
    return this.text(repo, ['diff', ...DIFF_ARGS, base, head, '--']);
  }

  /** The entries of a tree (recursively, when asked), optionally limited to paths. */
  async lsTree(
    repo: string,
    sha: string,
    options: { recursive?: boolean; long?: boolean; paths?: readonly string[] } = {},
  ): Promise<TreeEntry[]> {
    const args = ['ls-tree', '-z'];
    if (options.recursive) args.push('-r');
    if (options.long) args.push('-l');
    args.push(sha, '--', ...(options.paths ?? []));
    return parseLsTree(await this.text(repo, args));
  }

  /** The content of `sha:path`, or null when the path does not exist at that commit. */
  async show(repo: string, sha: string, path: string): Promise<Buffer | null> {
    const [object] = await this.catFile(repo, [`${sha}:${path}`]);
    return object?.content ?? null;
  }

  /** Many objects in one `git cat-file --batch` process (`sha:path` or object ids). */
  async catFile(repo: string, requests: readonly string[]): Promise<CatFileObject[]> {
    if (requests.length === 0) return [];
    for (const r of requests) if (r.includes('\n')) throw new RangeError('git cat-file: a request must be one line');
    const r = await this.run(repo, ['cat-file', '--batch'], { input: `${requests.join('\n')}\n` });
    return parseCatFileBatch(r.stdout, requests);
  }

  /** The asv config (asv.conf.json or .jsonc, anywhere in the tree) at a commit, or null. */
  async findAsvConfig(repo: string, sha: string): Promise<AsvConfigFile | null> {
    const entries = await this.lsTree(repo, sha, { recursive: true });
    const path = pickAsvConfigPath(entries.filter((e) => e.type === 'blob').map((e) => e.path));
    if (path === null) return null;
    const content = await this.show(repo, sha, path);
    return content === null ? null : { path, text: content.toString('utf8') };
  }

  /**
   * The asv config at many commits of one first-parent line (`line`: its SHAs, newest first), in
   * three processes whatever their number, reading only the line's part between the oldest and
   * the newest of them: the tree of the oldest (its asv config paths) and, at the same time, the
   * changes to asv config paths from there to the newest with their blob ids (replayed to know
   * which exist at each commit, and in which version), then one cat-file for the contents of each
   * version. Commits that are not on the line are looked up one by one.
   * `changes`, when given, are `asvConfigChanges` of a range that holds the line's part between
   * the oldest and the newest of them (read before: only the tree and the contents are read here).
   */
  async findAsvConfigs(
    repo: string,
    line: readonly string[],
    shas: readonly string[],
    options: { readonly changes?: AsvConfigChanges } = {},
  ): Promise<Map<string, AsvConfigFile | null>> {
    const result = new Map<string, AsvConfigFile | null>();
    const wanted = new Set(shas);
    if (wanted.size === 0) return result;
    let newest = Infinity;
    let oldest = -1;
    line.forEach((sha, i) => {
      if (!wanted.has(sha)) return;
      newest = Math.min(newest, i);
      oldest = Math.max(oldest, i);
    });
    if (oldest >= 0) {
      const segment = line.slice(newest, oldest + 1).reverse(); // oldest first
      const first = segment[0]!;
      // A change of `first` itself, when the given changes hold one, is already in its tree: applied
      // again below, it changes nothing.
      const reading: AsvConfigChanges | Promise<AsvConfigChanges> =
        options.changes ?? (segment.length > 1 ? this.asvConfigChanges(repo, `${first}..${segment.at(-1)!}`) : new Map());
      const [tree, changes] = await Promise.all([this.lsTree(repo, first, { recursive: true }), reading]);
      // asv config paths present at each commit, with their blob ids
      const present = new Map(tree.filter((e) => e.type === 'blob' && ASV_CONFIG_RE.test(e.path)).map((e) => [e.path, e.oid]));
      const found = new Map<string, { path: string; blob: string }>();
      for (const sha of segment) {
        for (const change of changes.get(sha) ?? []) {
          if (change.blob === null) present.delete(change.path);
          else present.set(change.path, change.blob);
        }
        if (wanted.has(sha)) {
          const path = pickAsvConfigPath(present.keys());
          if (path === null) result.set(sha, null);
          else found.set(sha, { path, blob: present.get(path)! });
        }
      }
      // each version of a config once, however many commits have it
      const blobs = [...new Set([...found.values()].map((f) => f.blob))];
      const objects = await this.catFile(repo, blobs);
      const texts = new Map(blobs.map((blob, i) => [blob, objects[i]?.content?.toString('utf8') ?? null]));
      for (const [sha, { path, blob }] of found) {
        const text = texts.get(blob) ?? null;
        result.set(sha, text === null ? null : { path, text });
      }
    }
    for (const sha of wanted) if (!result.has(sha)) result.set(sha, await this.findAsvConfig(repo, sha));
    return result;
  }

  /** First-parent commits of `range` that add, change or delete an asv config, with what they did. */
  async asvConfigChanges(repo: string, range: string): Promise<AsvConfigChanges> {
    const text = await this.text(repo, [
      'log',
      '--first-parent',
      '--diff-merges=first-parent',
      '--no-renames',
      '--raw',
      '--no-abbrev',
      '-z',
      '--format=%x00%H',
      range,
      '--',
      // Plain wildcards match across directories and let git stop early far more than
      // ':(glob)**/' would (0.09 s against 0.22 s on 2,800 mainline commits); the regular
      // expression below keeps exact names only.
      '*asv.conf.json',
      '*asv.conf.jsonc',
    ]);
    // With -z: "\0<sha>\0\n:<mode> <mode> <blob> <blob> <status>\0<path>\0:..." (fields NUL-separated).
    const out = new Map<string, AsvConfigChange[]>();
    const fields = text.split('\0');
    let current: AsvConfigChange[] | null = null;
    for (let i = 0; i < fields.length; i++) {
      const f = fields[i]!.replace(/^\n+/, '');
      if (f === '') continue;
      if (/^[0-9a-f]{40,64}$/.test(f)) {
        current = [];
        out.set(f, current);
        continue;
      }
      const raw = /^:\d+ (\d+) [0-9a-f]+ ([0-9a-f]+) ([AMDTCRUX])\d*$/.exec(f);
      if (raw && current) {
        const path = fields[++i] ?? '';
        if (!ASV_CONFIG_RE.test(path)) continue;
        // deleted, or no longer a file (a submodule of that name): gone
        const gone = raw[3] === 'D' || raw[1] === '160000';
        current.push({ path, blob: gone ? null : raw[2]! });
      }
    }
    return out;
  }
}

/** How many times a byte occurs in a buffer. */
function countByte(buffer: Buffer, byte: number): number {
  let n = 0;
  for (let at = buffer.indexOf(byte); at >= 0; at = buffer.indexOf(byte, at + 1)) n += 1;
  return n;
}

/** The environment of every git process: no prompts, no pager, default pathspec semantics. */
function gitEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, LC_ALL: 'C', GIT_TERMINAL_PROMPT: '0', GIT_PAGER: 'cat', GIT_OPTIONAL_LOCKS: '0' };
  for (const name of [
    'GIT_LITERAL_PATHSPECS',
    'GIT_GLOB_PATHSPECS',
    'GIT_NOGLOB_PATHSPECS',
    'GIT_ICASE_PATHSPECS',
    'GIT_DIR',
    'GIT_WORK_TREE',
  ])
    delete env[name];
  return env;
}

/**
 * The `owner/name` of a clone: from a GitHub-style remote URL, else `local/<directory name>`.
 * Pure.
 */
export function repoNameFromRemote(url: string | null, directory: string): string {
  if (url) {
    const m = /(?:[:/])([A-Za-z0-9_.-]+)\/([A-Za-z0-9_.-]+?)(?:\.git)?\/?$/.exec(url.trim());
    if (m) return `${m[1]}/${m[2]}`;
  }
  const dir = basename(directory.replace(/\/+$/, '')).replace(/\.git$/, '') || 'repo';
  return `local/${dir.replace(/[^A-Za-z0-9_.-]/g, '-')}`;
}

function checkOneRepository(repos: readonly string[]): void {
  if (repos.length > 1) {
    throw new ConfigError(`--repo: --source git:PATH reads one clone; got ${repos.length} repositories (${repos.join(', ')})`, {
      reason: 'invalid-flags',
      fix: 'pass at most one --repo with --source git:PATH (it names the clone)',
    });
  }
}

/**
 * The clone behind `--source git:PATH`: its name (`--repo`, else from its origin remote), that
 * remote's URL, its default branch and that branch's tip (a clear error when there is none).
 * PATH must be a clone's top level: git would otherwise silently read the repository that
 * contains it. The branches, the remote and the top level are asked for at once.
 */
export async function openLocalRepository(
  git: GitService,
  path: string,
  repos: readonly string[],
): Promise<{ name: string; remote: string | null; defaultBranch: string; tip: string }> {
  checkOneRepository(repos);
  const [opened, remote, where] = await Promise.allSettled([
    git.openClone(path),
    git.remoteUrl(path),
    git.run(path, ['rev-parse', '--show-prefix', '--show-toplevel'], { okCodes: [128] }),
  ]);
  if (opened.status === 'rejected') throw opened.reason;
  if (opened.value === null)
    throw new ConfigError(`--source: ${path} is not a git repository`, {
      reason: 'invalid-flags',
      fix: 'point --source git:PATH at a clone',
    });
  if (remote.status === 'rejected') throw remote.reason;
  if (where.status === 'fulfilled' && where.value.code === 0) {
    const [prefix = '', top = ''] = where.value.stdout.toString('utf8').split('\n');
    if (prefix.trim() !== '') {
      throw new ConfigError(
        `--source: ${path} is the subdirectory ${prefix.trim()} of the repository at ${top.trim()}, not a clone's top level`,
        {
          reason: 'invalid-flags',
          fix: `pass --source git:${top.trim()} (perfmine reads the whole repository's history)`,
        },
      );
    }
  }
  const { defaultBranch, tip } = opened.value;
  if (tip === null) throw new ConfigError(`--source: ${path} has no commit on ${defaultBranch}`, { reason: 'invalid-flags' });
  return { name: repos.length === 1 ? repos[0]! : repoNameFromRemote(remote.value, path), remote: remote.value, defaultBranch, tip };
}
