import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it, vi } from 'vitest';
import { migrations, openStore } from '../../cache/store.js';
import { snapshotTree, treeChanges } from '../helpers/fs-snapshot.js';
import { looksLikeABug, REPO_ROOT, runCli, runCliUnprivileged, tempDir, UNPRIVILEGED } from '../helpers/index.js';

// Several CLI processes per test on a shared 2-core machine: room to finish, not a speed claim.
vi.setConfig({ testTimeout: 300_000, hookTimeout: 300_000 });

/**
 * Issue 13: each user error of the issue, through the real CLI in a child process: the exit code,
 * the key words of the message, no stack trace, and no file changed or removed but the tool's own.
 */

/** A directory anyone may read (the unprivileged user runs some of these). */
function openDir(prefix?: string): string {
  const dir = tempDir(prefix);
  chmodSync(dir, 0o755);
  return dir;
}

function gitClone(): string {
  const dir = openDir('perfmine-clone-');
  const git = (...args: string[]) => execFileSync('git', ['-C', dir, '-c', 'user.name=t', '-c', 'user.email=t@example.invalid', ...args]);
  git('init', '-q', '-b', 'main');
  mkdirSync(join(dir, 'src'));
  writeFileSync(join(dir, 'src', 'lib.py'), 'X = 1\n');
  git('add', '-A');
  git('commit', '-q', '-m', 'init');
  return dir;
}

/** The rows of a small real run, as a database to read. */
async function seededDb(dir: string, name = 'p.db'): Promise<string> {
  const db = join(dir, name);
  const clone = gitClone();
  const result = await runCli([
    '--db',
    db,
    'run',
    '--month',
    '2025-04',
    '--source',
    `git:${clone}`,
    '--repo',
    'acme/lib',
    '--llm',
    'none',
    '--until-stage',
    'discover',
  ]);
  expect(result.code, result.stderr).toBe(0);
  return db;
}

const unprivileged = describe.skipIf(!UNPRIVILEGED.available);

describe('the database path', () => {
  it('a file that is not SQLite: exit 2, says so, leaves it as it is', async () => {
    const dir = openDir();
    const db = join(dir, 'notes.db');
    writeFileSync(db, 'my notes\n');
    const before = snapshotTree(dir);
    for (const args of [['status'], ['run', '--llm', 'none', '--source', `git:${gitClone()}`, '--repo', 'a/b']]) {
      const result = await runCli(['--db', db, ...args], { cwd: dir });
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(/notes\.db is not a SQLite database/);
      expect(result.stderr).toMatch(/^fix: pass --db the perfmine database/m);
      expect(looksLikeABug(result.stderr)).toBe(false);
    }
    expect(treeChanges(before, snapshotTree(dir))).toEqual([]);
  });

  it('a 0-byte file (what a run interrupted before it began leaves): status says nothing has run, exit 0', async () => {
    const dir = openDir();
    const db = join(dir, 'p.db');
    writeFileSync(db, '');
    const result = await runCli(['--db', db, 'status'], { cwd: dir });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/p\.db is an empty file .*: nothing has run/);
    for (const args of [['tasks'], ['cache', 'scripts'], ['--json', 'status']]) {
      const r = await runCli(['--db', db, ...args], { cwd: dir });
      expect(r.code, r.stderr).toBe(0);
      expect(looksLikeABug(r.stderr)).toBe(false);
    }
    expect(readFileSync(db).length).toBe(0);
  });

  it('a directory: exit 2, says it is a directory and which file to pass', async () => {
    const dir = openDir();
    mkdirSync(join(dir, 'data'));
    const before = snapshotTree(dir);
    for (const args of [['status'], ['tasks'], ['run', '--dry-run', '--llm', 'none', '--source', `git:${gitClone()}`, '--repo', 'a/b']]) {
      const result = await runCli(['--db', join(dir, 'data'), ...args], { cwd: dir });
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(/data is a directory, not a database file/);
      expect(result.stderr).toContain(`fix: pass --db a file, e.g. --db ${join(dir, 'data', 'perfmine.db')}`);
    }
    expect(treeChanges(before, snapshotTree(dir))).toEqual([]);
  });

  it("another program's SQLite database: refused, not a table added", async () => {
    const dir = openDir();
    const db = join(dir, 'app.db');
    const raw = new Database(db);
    raw.exec("CREATE TABLE contacts (name TEXT); INSERT INTO contacts VALUES ('ada')");
    raw.close();
    const before = snapshotTree(dir);
    const result = await runCli(['--db', db, 'run', '--llm', 'none', '--source', `git:${gitClone()}`, '--repo', 'a/b'], { cwd: dir });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/app\.db is a SQLite database of another program \(tables contacts\), not perfmine's/);
    expect(treeChanges(before, snapshotTree(dir))).toEqual([]);
  });

  it('PRAGMA user_version of a newer perfmine is refused, not overwritten', async () => {
    const dir = openDir();
    const db = join(dir, 'p.db');
    openStore(db).close();
    const raw = new Database(db);
    raw.pragma('user_version = 999');
    raw.close();
    for (const args of [
      ['status'],
      ['run', '--llm', 'none', '--source', `git:${gitClone()}`, '--repo', 'a/b', '--until-stage', 'discover'],
    ]) {
      const result = await runCli(['--db', db, ...args], { cwd: dir });
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(/written by a newer perfmine \(schema 999; this version knows up to \d+\)/);
      expect(result.stderr).toMatch(/fix: upgrade perfmine/);
    }
    const after = new Database(db, { readonly: true });
    expect(after.pragma('user_version', { simple: true })).toBe(999);
    after.close();
  });

  it('a path under a file: exit 2, names the part that is a file', async () => {
    const dir = openDir();
    writeFileSync(join(dir, 'plain'), 'x');
    const result = await runCli(
      ['--db', join(dir, 'plain', 'p.db'), 'run', '--llm', 'none', '--source', `git:${gitClone()}`, '--repo', 'a/b'],
      { cwd: dir },
    );
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/plain\/p\.db: a part of the path is a file, not a directory/);
    expect(readFileSync(join(dir, 'plain'), 'utf8')).toBe('x');
  });

  it('an older schema: status reads it (migrations pending) and leaves the file as it was', async () => {
    const dir = openDir();
    const db = join(dir, 'old.db');
    const raw = new Database(db);
    raw.exec('CREATE TABLE schema_migrations (id INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)');
    const older = migrations().slice(0, -1);
    for (const m of older) {
      raw.exec(m.sql);
      raw.prepare('INSERT INTO schema_migrations VALUES (?, ?, ?)').run(m.id, m.name, '2025-01-01');
    }
    raw.close();
    const before = snapshotTree(dir);
    const result = await runCli(['--db', db, 'status'], { cwd: dir });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(new RegExp(`schema ${older.at(-1)!.id}, 1 migration\\(s\\) pending`));
    expect(treeChanges(before, snapshotTree(dir))).toEqual([]);
  });

  unprivileged('as a user without write permission', () => {
    it('a read-only database: run exits 2 naming it (status still reads it)', async () => {
      const dir = openDir();
      chmodSync(dir, 0o777);
      const db = await seededDb(dir);
      chmodSync(db, 0o444);
      const before = snapshotTree(dir);
      const run2 = await runCliUnprivileged([
        '--db',
        db,
        'stage',
        'discover',
        '--llm',
        'none',
        '--repo',
        'a/b',
        '--source',
        `git:${REPO_ROOT}`,
      ]);
      expect(run2.code).toBe(2);
      expect(run2.stderr).toMatch(/p\.db is read-only for this user/);
      expect(run2.stderr).toMatch(/fix: make it writable \(chmod u\+w\), run as its owner, or pass --db another file/);
      const status = await runCliUnprivileged(['--db', db, 'status']);
      expect(status.code, status.stderr).toBe(0);
      expect(status.stdout).toMatch(/discover\s+1\s+0\s+0\s+0/);
      expect(looksLikeABug(run2.stderr + status.stderr)).toBe(false);
      // A reader of a WAL database makes its index files beside it when it may (the database's own
      // files, which SQLite cannot remove without the right to write the database): nothing else.
      expect(treeChanges(before, snapshotTree(dir)).filter((c) => c !== '+p.db-shm' && c !== '+p.db-wal')).toEqual([]);
    });

    it('a database in a directory this user cannot write: status and tasks read it; run says the directory is not writable', async () => {
      const dir = openDir();
      const db = await seededDb(dir);
      chmodSync(db, 0o644);
      chmodSync(dir, 0o555);
      const before = snapshotTree(dir);
      const status = await runCliUnprivileged(['--db', db, 'status']);
      expect(status.code, status.stderr).toBe(0);
      expect(status.stdout).toMatch(/discover\s+1\s+0\s+0\s+0/);
      expect((await runCliUnprivileged(['--db', db, 'tasks'])).code).toBe(0);
      const run = await runCliUnprivileged([
        '--db',
        db,
        'stage',
        'discover',
        '--llm',
        'none',
        '--repo',
        'a/b',
        '--source',
        `git:${REPO_ROOT}`,
      ]);
      expect(run.code).toBe(2);
      expect(run.stderr).toMatch(/p\.db is read-only for this user|is not writable by this user/);
      const fresh = await runCliUnprivileged([
        '--db',
        join(dir, 'new.db'),
        'stage',
        'discover',
        '--llm',
        'none',
        '--repo',
        'a/b',
        '--source',
        `git:${REPO_ROOT}`,
      ]);
      expect(fresh.code).toBe(2);
      expect(fresh.stderr).toContain(`db: cannot create ${join(dir, 'new.db')}: the directory ${dir} is not writable by this user`);
      expect(looksLikeABug(status.stderr + run.stderr + fresh.stderr)).toBe(false);
      chmodSync(dir, 0o755);
      expect(treeChanges(before, snapshotTree(dir)).filter((c) => c !== `~.`)).toEqual([]);
    });
  });
});

describe('report --out', () => {
  it('at a directory, or under a file: exit 2, names --out, writes nothing', async () => {
    const dir = openDir();
    const db = await seededDb(dir);
    mkdirSync(join(dir, 'pages'));
    writeFileSync(join(dir, 'plain'), 'x');
    const before = snapshotTree(dir);
    const atDir = await runCli(['--db', db, 'report', '--month', '2025-04', '--out', join(dir, 'pages')]);
    expect(atDir.code).toBe(2);
    expect(atDir.stderr).toMatch(/--out: .*pages is a directory; --out names the file to write/);
    expect(atDir.stderr).toContain(`e.g. --out ${join(dir, 'pages', 'report-2025-04.html')}`);
    const underFile = await runCli(['--db', db, 'report', '--month', '2025-04', '--out', join(dir, 'plain', 'r.html')]);
    expect(underFile.code).toBe(2);
    expect(underFile.stderr).toMatch(/--out: .*plain\/r\.html: a part of the path is a file/);
    expect(looksLikeABug(atDir.stderr + underFile.stderr)).toBe(false);
    expect(treeChanges(before, snapshotTree(dir))).toEqual([]);
  });

  unprivileged('as a user without write permission', () => {
    it('in a directory this user cannot write: exit 2 before reading the database', async () => {
      const dir = openDir();
      const db = await seededDb(dir);
      chmodSync(db, 0o644);
      const before = snapshotTree(dir);
      const result = await runCliUnprivileged(['--db', db, 'report', '--month', '2025-04', '--out', join(dir, 'r.html')]);
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(`--out: cannot create ${join(dir, 'r.html')}: the directory ${dir} is not writable by this user`);
      expect(treeChanges(before, snapshotTree(dir))).toEqual([]);
    });
  });
});

describe('flags and config', () => {
  it('validates cache scripts --limit and --repo, status --clear-run, and shows what a cache key looks like', async () => {
    const dir = openDir();
    const cases: [string[], RegExp][] = [
      [['cache', 'scripts', '--limit', 'abc'], /--limit: expected a positive whole number, got "abc"/],
      [['cache', 'scripts', '--repo', 'bad'], /--repo: expected owner\/name, e\.g\. demo\/fastmath, got "bad"/],
      [['cache', 'stats', '--repo', 'bad'], /--repo: expected owner\/name/],
      [['status', '--clear-run', 'abc'], /--clear-run: expected a run id \(a positive whole number/],
      [
        ['cache', 'show', 'nonsense'],
        /cache show: "nonsense" is not a commit key; a key is owner\/name@sha: .*e\.g\. demo\/fastmath@3f2a9c1/,
      ],
    ];
    for (const [args, message] of cases) {
      const result = await runCli(['--db', join(dir, 'p.db'), ...args], { cwd: dir });
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr).toMatch(message);
    }
    expect(existsSync(join(dir, 'p.db'))).toBe(false);
  });

  it('--source git: at a subdirectory of a repository is refused, naming the top level', async () => {
    const clone = gitClone();
    const dir = openDir();
    const result = await runCli(
      ['--db', join(dir, 'p.db'), 'run', '--llm', 'none', '--source', `git:${join(clone, 'src')}`, '--repo', 'a/b'],
      { cwd: dir },
    );
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      `--source: ${join(clone, 'src')} is the subdirectory src/ of the repository at ${clone}, not a clone's top level`,
    );
    expect(result.stderr).toContain(`fix: pass --source git:${clone}`);
    // Checked before the run starts: no database was made.
    expect(existsSync(join(dir, 'p.db'))).toBe(false);
  });

  it('a top-level unknown config key is blamed on the config file', async () => {
    const dir = openDir();
    writeFileSync(join(dir, 'c.json'), '{ "bogus": 1, "github": { "typo": 2 } }');
    const result = await runCli(['--config', join(dir, 'c.json'), 'status'], { cwd: dir });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`bogus: unknown key (from ${join(dir, 'c.json')})`);
    expect(result.stderr).toContain(`github.typo: unknown key (from ${join(dir, 'c.json')})`);
    expect(result.stderr).not.toContain('(from --)');
  });

  it('a --config that is missing or a directory: exit 2 with what --config takes', async () => {
    const dir = openDir();
    mkdirSync(join(dir, 'conf'));
    const missing = await runCli(['--config', join(dir, 'nope.json'), 'status'], { cwd: dir });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(`config: no file at ${join(dir, 'nope.json')}`);
    const atDir = await runCli(['--config', join(dir, 'conf'), 'status'], { cwd: dir });
    expect(atDir.code).toBe(2);
    expect(atDir.stderr).toContain(`config: ${join(dir, 'conf')} is a directory; --config names a JSON file`);
    expect(atDir.stderr).toMatch(/^fix: pass --config a JSON file/m);
  });

  it('--version prints the package version', async () => {
    const result = await runCli(['--version']);
    expect(result.code).toBe(0);
    expect(result.stdout.trim()).toBe((JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version);
  });

  it('commands that read another database than ./perfmine.db say which', async () => {
    const dir = openDir();
    const db = await seededDb(dir);
    const tasks = await runCli(['--db', db, 'tasks'], { cwd: dir });
    expect(tasks.stderr).toContain(`perfmine: reading the database ${db}`);
    const status = await runCli(['--db', db, 'status'], { cwd: dir });
    expect(status.stdout).toContain(`database: ${db}`);
    const run = await runCli(
      [
        '--db',
        db,
        'run',
        '--dry-run',
        '--llm',
        'none',
        '--month',
        '2025-04',
        '--source',
        `git:${gitClone()}`,
        '--repo',
        'acme/lib',
        '--until-stage',
        'discover',
      ],
      { cwd: dir },
    );
    expect(run.stdout).toContain(`(database ${db})`);
    // The default database is not announced.
    const plain = await runCli(['tasks'], { cwd: dir });
    expect(plain.stderr).not.toContain('reading the database');
  });
});
