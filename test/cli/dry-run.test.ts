import { execFileSync } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hostname } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { snapshotTree, treeChanges } from '../helpers/fs-snapshot.js';
import { looksLikeABug, runCli, tempDir } from '../helpers/index.js';

// Several CLI processes per test on a shared 2-core machine: room to finish, not a speed claim.
vi.setConfig({ testTimeout: 300_000, hookTimeout: 300_000 });

/**
 * Issue 13: `run --dry-run` makes every check the real run makes, stops with exit 2 where the run
 * would, and writes nothing at all: the directory is byte for byte what it was.
 */
const MONTH = '2025-04';
let github: Server;
let githubUrl: string;
let githubRequests = 0;

beforeAll(async () => {
  // A loopback GitHub that counts what reaches it (it answers nothing useful: nothing should ask).
  github = createServer((_req, res) => {
    githubRequests += 1;
    res.writeHead(500, { 'content-type': 'application/json' }).end('{"message":"not here"}');
  });
  await new Promise<void>((resolve) => github.listen(0, '127.0.0.1', resolve));
  githubUrl = `http://127.0.0.1:${(github.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => github.close(resolve));
});

function gitClone(): string {
  const dir = tempDir('perfmine-clone-');
  const git = (...args: string[]) => execFileSync('git', ['-C', dir, '-c', 'user.name=t', '-c', 'user.email=t@example.invalid', ...args]);
  git('init', '-q', '-b', 'main');
  git('commit', '-q', '--allow-empty', '-m', 'init');
  return dir;
}

describe('run --dry-run', () => {
  it('without GITHUB_TOKEN: exit 2 naming the variable, as the real run, with no request made and no file written', async () => {
    const dir = tempDir();
    const env = { GITHUB_API_URL: githubUrl };
    const before = snapshotTree(dir);
    const dry = await runCli(['run', '--dry-run', '--month', MONTH], { cwd: dir, env });
    expect(dry.code).toBe(2);
    expect(dry.stderr).toMatch(/^GITHUB_TOKEN: not set; discover .* needs it$/m);
    expect(dry.stdout).toMatch(/a real run would stop at discover/);
    expect(githubRequests).toBe(0);
    expect(treeChanges(before, snapshotTree(dir))).toEqual([]);

    const real = await runCli(['run', '--month', MONTH], { cwd: dir, env });
    expect(real.code).toBe(2);
    expect(real.stderr).toMatch(/^GITHUB_TOKEN: not set; discover .* needs it$/m);
    expect(githubRequests).toBe(0);
  });

  it('without OPENAI_API_KEY: stops at classify with exit 2, as the real run, and leaves an existing database byte for byte', async () => {
    const dir = tempDir();
    const clone = gitClone();
    const db = join(dir, 'perfmine.db');
    const scope = ['--month', MONTH, '--source', `git:${clone}`, '--repo', 'acme/lib'];
    // A database with rows, as a month half done leaves it.
    const seeded = await runCli(['--db', db, 'run', ...scope, '--llm', 'none', '--until-stage', 'filter'], { cwd: dir });
    expect(seeded.code, seeded.stderr).toBe(0);
    const before = snapshotTree(dir);

    const dry = await runCli(['--db', db, 'run', '--dry-run', ...scope], { cwd: dir });
    expect(dry.code).toBe(2);
    expect(dry.stderr).toMatch(/OPENAI_API_KEY/);
    expect(dry.stdout).toMatch(/a real run would stop at classify/);
    expect(dry.stdout).toMatch(/^discover +1 +1 +0 +1/m);
    expect(looksLikeABug(dry.stderr)).toBe(false);
    expect(treeChanges(before, snapshotTree(dir))).toEqual([]);

    const real = await runCli(['--db', db, 'run', ...scope], { cwd: dir });
    expect(real.code).toBe(2);
    expect(real.stderr).toMatch(/OPENAI_API_KEY/);
    expect(real.stdout).toMatch(/stopped at classify/);
  });

  it('in a fresh directory: plans, exits 0, and creates no database', async () => {
    const dir = tempDir();
    const before = snapshotTree(dir);
    const dry = await runCli(
      [
        'run',
        '--dry-run',
        '--llm',
        'none',
        '--month',
        MONTH,
        '--source',
        `git:${gitClone()}`,
        '--repo',
        'acme/lib',
        '--until-stage',
        'filter',
      ],
      { cwd: dir },
    );
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toMatch(/\[dry run: checked and planned; nothing was run, built or written\]/);
    expect(treeChanges(before, snapshotTree(dir))).toEqual([]);
  });

  it('refuses, as the real run, while another live run holds the database', async () => {
    const dir = tempDir();
    const db = join(dir, 'perfmine.db');
    const clone = gitClone();
    const seeded = await runCli(
      ['--db', db, 'run', '--llm', 'none', '--month', MONTH, '--source', `git:${clone}`, '--repo', 'acme/lib', '--until-stage', 'discover'],
      { cwd: dir },
    );
    expect(seeded.code, seeded.stderr).toBe(0);
    // This test process stands for the live run.
    const raw = new Database(db);
    raw
      .prepare("INSERT INTO runs (command, args, window_label, pid, host, started_at, status) VALUES ('run', '{}', ?, ?, ?, ?, 'running')")
      .run(MONTH, process.pid, hostname(), new Date().toISOString());
    raw.close();
    const before = snapshotTree(dir);
    const dry = await runCli(
      ['--db', db, 'run', '--dry-run', '--llm', 'none', '--month', MONTH, '--source', `git:${clone}`, '--repo', 'acme/lib'],
      { cwd: dir },
    );
    expect(dry.code).toBe(2);
    expect(dry.stderr).toMatch(new RegExp(`another perfmine \\(run, pid ${process.pid} on .*\\) is using this database`));
    expect(treeChanges(before, snapshotTree(dir))).toEqual([]);
  });
});
