import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { ItemError, OutsideServiceError } from '../../pipeline/errors.js';
import type { ContainerLimits, DockerService } from '../../pipeline/services/docker.js';

const run = promisify(execFile);

/** Read access to a repository's tree at any commit: the facts, and the agent's list_tree / read_file. */
export interface GitTree {
  /** Every tracked path at the commit. */
  listFiles(sha: string): Promise<string[]>;
  /** A file's text at the commit (at most `maxChars`), or null when there is no such file. */
  readFile(sha: string, path: string, maxChars?: number): Promise<string | null>;
  /** Committer date, ISO 8601 UTC. */
  commitDate(sha: string): Promise<string>;
}

const SAFE_PATH = /^(?!\/)(?!.*(?:^|\/)\.\.(?:\/|$))[^\0]*$/;

function checkPath(path: string): string {
  const clean = path.replace(/^\.\/+/, '').replace(/\/+$/, '');
  if (!SAFE_PATH.test(clean)) throw new ItemError('bad-path', `not a path inside the repository: ${path}`);
  return clean;
}

function checkSha(sha: string): string {
  if (!/^[0-9a-f]{7,64}$/.test(sha)) throw new ItemError('bad-sha', `not a commit sha: ${sha}`);
  return sha;
}

/** A local clone read with the git command line (the `git:PATH` source). */
export class LocalGitTree implements GitTree {
  readonly path: string;

  constructor(path: string) {
    this.path = path;
  }

  async #git(args: readonly string[]): Promise<string> {
    try {
      const { stdout } = await run('git', ['-C', this.path, ...args], { maxBuffer: 256 * 1024 * 1024, encoding: 'utf8' });
      return stdout;
    } catch (error) {
      const e = error as { code?: number | string; stderr?: string; message: string };
      if (typeof e.code === 'number')
        throw new ItemError('git-failed', `git ${args[0]} in ${this.path}: ${(e.stderr ?? e.message).trim()}`);
      throw new OutsideServiceError('git', 'git-unavailable', `git: ${e.message}`, { cause: error });
    }
  }

  async listFiles(sha: string): Promise<string[]> {
    const out = await this.#git(['ls-tree', '-r', '--name-only', '-z', checkSha(sha)]);
    return out.split('\0').filter(Boolean);
  }

  async readFile(sha: string, path: string, maxChars = 200_000): Promise<string | null> {
    const p = checkPath(path);
    try {
      const type = (await this.#git(['cat-file', '-t', `${checkSha(sha)}:${p}`])).trim();
      if (type !== 'blob') return null;
    } catch {
      return null;
    }
    return (await this.#git(['show', `${sha}:${p}`])).slice(0, maxChars);
  }

  async commitDate(sha: string): Promise<string> {
    const out = await this.#git(['show', '-s', '--format=%cI', checkSha(sha)]);
    return new Date(out.trim()).toISOString();
  }
}

/**
 * The clone inside a repository image, read by short containers (the GitHub source, where
 * perfmine keeps no clone of its own). A commit newer than the clone is fetched into the
 * throwaway container.
 */
export class ImageGitTree implements GitTree {
  readonly #docker: DockerService;
  readonly #image: string;
  readonly #limits: ContainerLimits;
  readonly #timeoutMs: number;
  readonly #network: 'none' | 'bridge';

  constructor(docker: DockerService, image: string, options: { limits: ContainerLimits; timeoutMs: number; network: 'none' | 'bridge' }) {
    this.#docker = docker;
    this.#image = image;
    this.#limits = options.limits;
    this.#timeoutMs = options.timeoutMs;
    this.#network = options.network;
  }

  async #git(sha: string, command: string, tailChars = 8_000_000): Promise<{ code: number | null; stdout: string; stderr: string }> {
    const fetch = `git cat-file -e "$SHA^{commit}" 2>/dev/null || git fetch -q --depth=1 origin "$SHA" >&2`;
    const result = await this.#docker.run({
      image: this.#image,
      cmd: ['bash', '-c', `cd /repo && { ${fetch}; } && ${command}`],
      env: { SHA: checkSha(sha) },
      network: this.#network,
      timeoutMs: this.#timeoutMs,
      limits: this.#limits,
      tailChars,
      labels: { 'org.perfmine.role': 'git-read' },
    });
    return { code: result.exitCode, stdout: result.stdout, stderr: result.stderr };
  }

  async listFiles(sha: string): Promise<string[]> {
    const r = await this.#git(sha, 'git ls-tree -r --name-only -z "$SHA"');
    if (r.code !== 0) throw new ItemError('git-failed', `git ls-tree ${sha}: ${r.stderr.trim()}`);
    return r.stdout.split('\0').filter(Boolean);
  }

  async readFile(sha: string, path: string, maxChars = 200_000): Promise<string | null> {
    const p = checkPath(path).replace(/'/g, `'\\''`);
    const r = await this.#git(
      sha,
      `[ "$(git cat-file -t "$SHA:${p}" 2>/dev/null)" = blob ] && git show "$SHA:${p}" | head -c ${maxChars}`,
      maxChars + 1000,
    );
    return r.code === 0 ? r.stdout : null;
  }

  async commitDate(sha: string): Promise<string> {
    const r = await this.#git(sha, 'git show -s --format=%cI "$SHA"');
    if (r.code !== 0) throw new ItemError('git-failed', `git show ${sha}: ${r.stderr.trim()}`);
    return new Date(r.stdout.trim()).toISOString();
  }
}
