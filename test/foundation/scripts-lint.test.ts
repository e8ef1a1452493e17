import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/index.js';

/**
 * The code that is not TypeScript, held to a checker of its own: every shell script the repository
 * tracks (`*.sh`, and the files under .ci/ that start with a bash line) passes shellcheck, and
 * every Python file (python/: the in-image harness, bench tool, verifier, lock, snapshot, probe;
 * the scripts and test drivers) passes pyflakes and pycodestyle (python/README.md says why not
 * pylint). All are Debian's packages, installed by scripts/setup-test-env.sh.
 */

function tracked(...patterns: string[]): string[] {
  return execFileSync('git', ['ls-files', '--', ...patterns], { cwd: REPO_ROOT, encoding: 'utf8' })
    .split('\n')
    .filter(Boolean);
}

function checker(command: string, args: string[]): { code: number; out: string } {
  const r = spawnSync(command, args, { cwd: REPO_ROOT, encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 });
  if (r.error)
    throw new Error(
      `${command} is not installed: run scripts/setup-test-env.sh (it installs Debian's shellcheck, pyflakes3 and pycodestyle)`,
    );
  return { code: r.status ?? 1, out: `${r.stdout}${r.stderr}` };
}

describe('shell and Python, checked', () => {
  it('every shell script passes shellcheck', () => {
    const ci = tracked('.ci/*').filter((f) => /^#!.*\bbash\b/.test(readFileSync(join(REPO_ROOT, f), 'utf8').split('\n')[0] ?? ''));
    const scripts = [...tracked('*.sh'), ...ci];
    expect(scripts.length).toBeGreaterThan(10);
    expect(scripts).toContain('.ci/run');
    const r = checker('shellcheck', ['--external-sources', ...scripts]);
    expect(r.out).toBe('');
    expect(r.code).toBe(0);
  });

  it('every Python file passes pyflakes', () => {
    const files = tracked('*.py');
    expect(files).toContain('python/perfmine_verify.py');
    const r = checker('pyflakes3', files);
    expect(r.out).toBe('');
    expect(r.code).toBe(0);
  });

  it("every Python file passes pycodestyle (PEP 8's layout; lines up to 160 characters)", () => {
    const files = tracked('*.py');
    expect(files).toContain('python/perfmine_harness.py');
    const r = checker('pycodestyle', ['--max-line-length=160', ...files]);
    expect(r.out).toBe('');
    expect(r.code).toBe(0);
  });
});
