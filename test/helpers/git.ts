import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { FileChange } from '../../pipeline/concepts/records/pull-request.js';

const ENV = {
  ...process.env,
  GIT_AUTHOR_NAME: 'Test Author',
  GIT_AUTHOR_EMAIL: 'author@example.com',
  GIT_COMMITTER_NAME: 'Test Author',
  GIT_COMMITTER_EMAIL: 'author@example.com',
  GIT_CONFIG_NOSYSTEM: '1',
  HOME: tmpdir(),
};

/** A real git repository in a temporary directory. */
export class GitRepo {
  readonly dir: string;

  constructor() {
    this.dir = mkdtempSync(join(tmpdir(), 'perfmine-git-'));
    this.git('init', '-q', '-b', 'main');
  }

  git(...args: string[]): string {
    return execFileSync('git', args, { cwd: this.dir, env: ENV, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  }

  /** Writes (or, with null, deletes) files and commits them; returns the commit sha. */
  commit(message: string, files: Record<string, string | null>): string {
    for (const [path, text] of Object.entries(files)) {
      const full = join(this.dir, path);
      if (text === null) rmSync(full);
      else {
        mkdirSync(dirname(full), { recursive: true });
        writeFileSync(full, text);
      }
    }
    this.git('add', '-A');
    this.git('commit', '-q', '-m', message);
    return this.git('rev-parse', 'HEAD').trim();
  }

  /**
   * The asv config in the tree at a commit, as collect finds it: `git ls-tree -r` for files
   * named asv.conf.json or asv.conf.jsonc anywhere (the shallowest wins), then `git show`.
   */
  asvConfigAt(sha: string): { path: string; text: string } | null {
    const paths = this.git('ls-tree', '-r', '--name-only', sha)
      .split('\n')
      .filter((p) => /(^|\/)asv\.conf\.jsonc?$/.test(p))
      .sort((a, b) => a.split('/').length - b.split('/').length || a.localeCompare(b));
    const path = paths[0];
    if (!path) return null;
    return { path, text: this.git('show', `${sha}:${path}`) };
  }

  /** Changed files with line counts between two commits (`git diff --numstat`). */
  filesBetween(base: string, head: string): FileChange[] {
    return this.git('diff', '--numstat', base, head)
      .split('\n')
      .filter(Boolean)
      .map((line) => {
        const [add, del, path] = line.split('\t') as [string, string, string];
        const binary = add === '-';
        return {
          path,
          previousPath: null,
          status: 'modified' as const,
          additions: binary ? 0 : Number(add),
          deletions: binary ? 0 : Number(del),
          binary,
        };
      });
  }

  diff(base: string, head: string): string {
    return this.git('diff', base, head);
  }

  remove(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}
