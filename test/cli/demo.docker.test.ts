import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import Database from 'better-sqlite3';
import { beforeAll, describe, expect, it } from 'vitest';
import { DEMO_MARKER } from '../../pipeline/cli/demo-dir.js';
import { looksLikeABug, runCli, tempDir, type CliResult } from '../helpers/index.js';
import { measurementSlot } from '../helpers/measure-slot.js';

/**
 * Issue 13: the demo, through the real CLI with the real Docker engine and the local base image.
 * Its exit code is the one its run recorded; the follow-up commands it prints name its own
 * database, and run as printed they show the demo's data; the task folders it prints exist;
 * --fresh removes what the demo made and nothing else.
 *
 * With the local base image (Debian's Python, no asv: PyPI is out of reach here) the run goes to
 * the end, measuring with perfmine's own harness, and emits tasks: at least #101 (fib made linear,
 * a speedup no noise can hide), and of the others only #107 (about 2x) and #108 (about 1.3x),
 * which a run alone usually emits too. The demo runs here with a short protocol (`--config`: 4
 * harness rounds, workers not pinned to a core, so that suites measuring beside it do not all
 * take turns on the last one): test/e2e/month.docker.test.ts measures the same month alone with a
 * longer one, and this suite is about the command.
 */
measurementSlot('shared');
let root: string;
let dir: string;
let first: CliResult;
/** The short protocol's config file. */
let config: string;

/** The exit code of the demo's last recorded run. */
function recordedExit(db: string): number | null {
  const raw = new Database(db, { readonly: true });
  try {
    return (raw.prepare('SELECT exit_code FROM runs ORDER BY id DESC LIMIT 1').get() as { exit_code: number | null }).exit_code;
  } finally {
    raw.close();
  }
}

/** The command lines the demo printed after "next:" (or with the funnel): argv without `perfmine`, and the environment they set. */
function printedCommands(stdout: string): { argv: string[]; env: Record<string, string> }[] {
  return [
    ...stdout.matchAll(/(?:^ {2}(?:PERFMINE_OUT=(\S+) )?|\()perfmine ((?:status|tasks|report|doctor) [^)\n]*?)(?: {3}.*|\):)?$/gm),
  ].map((m) => ({
    argv: m[2]!.trim().split(/\s+/),
    env: m[1] ? { PERFMINE_OUT: m[1] } : {},
  }));
}

beforeAll(async () => {
  root = tempDir();
  dir = join(root, 'demo');
  config = join(root, 'short-protocol.json');
  writeFileSync(config, JSON.stringify({ validate: { harness: { rounds: 4, cpus: 'none' } } }));
  first = await runCli(['--config', config, 'demo', '--dir', dir], { cwd: root });
}, 1_800_000);

describe('perfmine demo', () => {
  it('exits with the exit code its run recorded', () => {
    expect(looksLikeABug(first.stderr), first.stderr).toBe(false);
    expect(first.code).toBe(recordedExit(join(dir, 'perfmine.db')));
    expect(existsSync(join(dir, DEMO_MARKER))).toBe(true);
    expect(first.stdout).toMatch(new RegExp(`\\(exit ${first.code}: `));
  });

  it("prints follow-up commands with its own --db, which show the demo's data", async () => {
    const db = join(dir, 'perfmine.db');
    const commands = printedCommands(first.stdout);
    expect(commands.length).toBeGreaterThanOrEqual(3);
    for (const { argv } of commands)
      expect(argv.slice(argv.indexOf('--db'), argv.indexOf('--db') + 2), argv.join(' ')).toEqual(['--db', db]);
    const status = commands.find((c) => c.argv[0] === 'status' && !c.argv.includes('--items'))!;
    // Run from another directory: the command must not depend on where the demo ran.
    const result = await runCli(status.argv, { cwd: tempDir(), env: status.env });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`database: ${db}`);
    expect(result.stdout).not.toMatch(/nothing has run/);
    expect(result.stdout).toMatch(/^collect +[1-9]\d* /m);
    const report = commands.find((c) => c.argv[0] === 'report')!;
    expect(report.env).toEqual({ PERFMINE_OUT: join(dir, 'out') });
    const page = await runCli(report.argv, { cwd: tempDir(), env: report.env });
    expect(page.code, page.stderr).toBe(0);
    expect(existsSync(report.argv[report.argv.indexOf('--out') + 1]!)).toBe(true);
  });

  it('emits tasks on this machine, without asv (the far faster fib at least, no slowdown or placebo), and lists the absolute folder of each', () => {
    expect(first.code, first.stdout.slice(-3000)).toBe(0);
    const folders = [...first.stdout.matchAll(/^ {2}(\/\S+__\S+)$/gm)].map((m) => m[1]!);
    for (const folder of folders) {
      expect(isAbsolute(folder)).toBe(true);
      expect(existsSync(join(folder, 'Dockerfile'))).toBe(true);
    }
    const ids = folders.map((f) => f.split('/').at(-1));
    expect(ids).toContain('demo__fastmath-101');
    for (const id of ids) expect(['demo__fastmath-101', 'demo__fastmath-107', 'demo__fastmath-108']).toContain(id);
  });

  it('--fresh removes what the demo made and keeps what it did not', async () => {
    writeFileSync(join(dir, 'my-notes.txt'), 'keep me');
    // What --fresh removes and makes anew is the point here, not a second measurement of the month:
    // a base image the engine lacks stops this run at synthesize (exit 2, recorded) within seconds.
    const again = await runCli(['--config', config, 'demo', '--fresh', '--dir', dir], {
      cwd: root,
      env: { PERFMINE_BASE_IMAGE: 'perfmine-test/absent:none' },
    });
    expect(looksLikeABug(again.stderr)).toBe(false);
    expect(again.stdout).toMatch(/--fresh: removed the demo's own fastmath, perfmine\.db.* from /);
    expect(again.stdout).toMatch(/created the sample repository/);
    expect(readFileSync(join(dir, 'my-notes.txt'), 'utf8')).toBe('keep me');
    expect(again.code).toBe(recordedExit(join(dir, 'perfmine.db')));
    expect(again.code).toBe(2);
    expect(again.stdout).toMatch(/no image perfmine-test\/absent:none in the Docker engine/);
    // One run: the database was made anew.
    const raw = new Database(join(dir, 'perfmine.db'), { readonly: true });
    expect((raw.prepare('SELECT COUNT(*) AS n FROM runs').get() as { n: number }).n).toBe(1);
    raw.close();
  }, 600_000);
});
