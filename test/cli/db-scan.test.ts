import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../cache/store.js';
import { snapshotTree, treeChanges } from '../helpers/fs-snapshot.js';
import { looksLikeABug, runCli, runCliUnprivileged, tempDir, UNPRIVILEGED, type CliResult } from '../helpers/index.js';

/**
 * Issue 13's scan of the CLI's error paths: every command, through the real executable in a child
 * process, with a --db that does not exist, is not SQLite, cannot be read, or is read-only (file
 * and directory). None may print a stack trace or exit 3; an exit 2 names the database; and no
 * file but the database a run creates appears, changes or goes.
 *
 * The unreadable and read-only cases need file permissions to apply: as root (CI) the child runs
 * as `nobody` through setpriv; as any other user, as that user. Without either they are skipped,
 * and say so, rather than pass without checking.
 */
const MONTH = '2025-04';
let root: string;
let clone: string;

beforeAll(() => {
  clone = tempDir('perfmine-scan-clone-');
  const git = (...args: string[]) => execFileSync('git', ['-C', clone, '-c', 'user.name=t', '-c', 'user.email=t@example.invalid', ...args]);
  git('init', '-q', '-b', 'main');
  git('commit', '-q', '--allow-empty', '-m', 'init');
  root = tempDir('perfmine-scan-');
  chmodSync(root, 0o755);
});

afterAll(() => {
  // Give the owner its permissions back so that the temporary files can be removed.
  try {
    execFileSync('chmod', ['-R', 'u+rwX', root]);
  } catch {
    /* nothing to restore */
  }
});

/**
 * Every command, with what it needs besides --db. `writes`: it creates the database when there is
 * none; `output`: the file it is asked to write when it succeeds.
 */
const COMMANDS: ReadonlyArray<{
  readonly name: string;
  readonly args: (out: string) => string[];
  readonly writes?: boolean;
  readonly output?: string;
}> = [
  {
    name: 'run',
    args: () => ['run', '--month', MONTH, '--source', `git:${clone}`, '--repo', 'acme/lib', '--llm', 'none', '--until-stage', 'filter'],
    writes: true,
  },
  {
    name: 'run --dry-run',
    args: () => [
      'run',
      '--dry-run',
      '--month',
      MONTH,
      '--source',
      `git:${clone}`,
      '--repo',
      'acme/lib',
      '--llm',
      'none',
      '--until-stage',
      'filter',
    ],
  },
  {
    name: 'stage collect',
    args: () => ['stage', 'collect', '--month', MONTH, '--source', `git:${clone}`, '--repo', 'acme/lib'],
    writes: true,
  },
  { name: 'status', args: () => ['status'] },
  { name: 'status --items', args: () => ['status', '--stage', 'collect', '--items', '--month', MONTH] },
  { name: 'status --json', args: () => ['--json', 'status'] },
  { name: 'status --clear-run', args: () => ['status', '--clear-run', '1'] },
  { name: 'tasks', args: () => ['tasks', '--month', MONTH] },
  { name: 'report', args: (out) => ['report', '--month', MONTH, '--out', join(out, 'report.html')], output: '+out/report.html' },
  { name: 'cache scripts', args: () => ['cache', 'scripts'] },
  { name: 'cache stats', args: () => ['cache', 'stats'] },
  { name: 'cache show', args: () => ['cache', 'show', 'acme/lib@abcdef1'] },
  { name: 'cache rebuild', args: () => ['cache', 'rebuild', 'acme/lib@abcdef1'] },
  { name: 'doctor', args: () => ['doctor', '--llm', 'none'] },
];

/**
 * The kinds of --db. `make` prepares the case's directory and returns the --db path; `as`: who
 * runs the CLI.
 */
const CASES: ReadonlyArray<{ readonly kind: string; readonly as: 'me' | 'unprivileged'; readonly make: (dir: string) => string }> = [
  { kind: 'non-existent', as: 'me', make: (dir) => join(dir, 'none.db') },
  {
    kind: 'not SQLite',
    as: 'me',
    make: (dir) => {
      writeFileSync(join(dir, 'notes.db'), 'these are my notes, not a database\n');
      return join(dir, 'notes.db');
    },
  },
  {
    kind: 'unreadable',
    as: 'unprivileged',
    make: (dir) => {
      const path = join(dir, 'p.db');
      openStore(path).close();
      chmodSync(path, 0o000);
      return path;
    },
  },
  {
    kind: 'read-only (file and directory)',
    as: 'unprivileged',
    make: (dir) => {
      const sub = join(dir, 'ro');
      mkdirSync(sub);
      const path = join(sub, 'p.db');
      openStore(path).close();
      chmodSync(path, 0o444);
      chmodSync(sub, 0o555);
      return path;
    },
  },
];

describe('every command with a bad --db: no stack trace, exit 2 naming it, nothing else touched', () => {
  for (const c of CASES) {
    const skip = c.as === 'unprivileged' && !UNPRIVILEGED.available;
    describe.skipIf(skip)(`--db ${c.kind}${skip ? ' (skipped: root without setpriv cannot drop privileges)' : ''}`, () => {
      // One at a time: the machine has two cores, shared with the other test files.
      it.each(COMMANDS.map((command) => [command.name, command] as const))(
        '%s',
        async (_name, command) => {
          const dir = join(root, `${c.kind}-${command.name}`.replace(/[^A-Za-z0-9-]+/g, '_'));
          mkdirSync(dir);
          chmodSync(dir, 0o755);
          // The report page goes to a directory anyone may write: --out is not what this scan checks.
          const out = join(dir, 'out');
          mkdirSync(out);
          chmodSync(out, 0o1777);
          const db = c.make(dir);
          const before = snapshotTree(dir);
          const args = ['--db', db, ...command.args(out)];
          // doctor asks the package index; here it names a directory, so that nothing reaches out to PyPI
          const env = { PERFMINE_INDEX_UPSTREAM: `dir:${join(dir, 'no-index')}` };
          const result: CliResult =
            c.as === 'me' ? await runCli(args, { cwd: dir, env }) : await runCliUnprivileged(args, { cwd: dir, env });
          const said = `exit ${result.code}\nstdout:\n${result.stdout}\nstderr:\n${result.stderr}`;

          expect(looksLikeABug(result.stderr), said).toBe(false);
          expect([0, 1, 2], said).toContain(result.code);
          if (result.code === 2) expect(result.stderr, said).toContain(db);

          const changes = treeChanges(before, snapshotTree(dir));
          // A run over a database that is not there yet creates it (with its WAL files), and a
          // report that succeeds writes its page: the tool's own files.
          const allowed = [
            ...(c.kind === 'non-existent' && command.writes ? ['+none.db', '+none.db-shm', '+none.db-wal'] : []),
            ...(result.code === 0 && command.output ? [command.output] : []),
          ];
          expect(
            changes.filter((x) => !allowed.includes(x)),
            said,
          ).toEqual([]);
        },
        180_000,
      );
    });
  }
});
