import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { packagePath } from '../../pipeline/package-root.js';
import { REPO_ROOT } from '../helpers/index.js';

/**
 * The in-image Python against its oldest supported version, 3.8 (python/README.md), with the
 * host's newer python3: no 3.8 interpreter is at hand. test/python/oldest_python.py checks 3.8's
 * grammar and scans for what 3.8's interpreter and standard library lack; the entry points refuse
 * an older interpreter with a message that names it.
 */

const OLDEST = '3.8';
const PYTHON_DIR = packagePath('python');
const SCAN = join(REPO_ROOT, 'test', 'python', 'oldest_python.py');
const dir = mkdtempSync(join(tmpdir(), 'perfmine-oldest-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Scan {
  checked: string[];
  problems: string[];
}

function scan(target: string, files: readonly string[]): Scan {
  return JSON.parse(execFileSync('python3', [SCAN, target, ...files], { cwd: REPO_ROOT, encoding: 'utf8' })) as Scan;
}

const inImage = (): string[] =>
  execFileSync('git', ['ls-files', '--', 'python/*.py'], { cwd: REPO_ROOT, encoding: 'utf8' }).split('\n').filter(Boolean);

describe(`the in-image Python runs on Python ${OLDEST}`, () => {
  it(`every file of python/ is Python ${OLDEST} and uses nothing newer outside a guard`, () => {
    const files = inImage();
    expect(files.length).toBeGreaterThanOrEqual(16);
    const r = scan(OLDEST, files);
    expect(r.checked).toEqual(files);
    expect(r.problems).toEqual([]);
  });

  it('the scan finds what a newer Python brought, and leaves what is guarded', () => {
    const bad = join(dir, 'newer.py');
    writeFileSync(
      bad,
      [
        'import re, subprocess, sys',
        'import tomllib',
        'from functools import cache',
        'x: list[int] = []',
        'def f(a: int | None) -> dict[str, int]:',
        '    return {}',
        'subprocess.Popen(["x"], user="nobody")',
        'for a, b in zip([1], [2], strict=True):',
        '    pass',
        '"abc".removeprefix("a")',
        'isinstance(1, int | str)',
        're.compile(r"a++")',
        'sys.monitoring.use_tool_id',
        'if hasattr(sys, "monitoring"):',
        '    sys.monitoring.use_tool_id',
        'try:',
        '    "x".removesuffix("x")',
        'except AttributeError:',
        '    pass',
        '',
      ].join('\n'),
    );
    const found = scan(OLDEST, [bad]).problems.map((p) => p.replace(`${bad}:`, ''));
    expect(found).toEqual([
      '2: module tomllib (Python 3.11; this code supports 3.8)',
      '3: from functools import cache (Python 3.9; this code supports 3.8)',
      '4: list[...] (a subscripted builtin at run time) (Python 3.9; this code supports 3.8)',
      '5: X | Y in an annotation evaluated at run time (Python 3.10; this code supports 3.8)',
      '5: dict[...] (a subscripted builtin at run time) (Python 3.9; this code supports 3.8)',
      '7: Popen(user=...) (Python 3.9; this code supports 3.8)',
      '8: zip(strict=...) (Python 3.10; this code supports 3.8)',
      '10: .removeprefix (Python 3.9; this code supports 3.8)',
      '11: isinstance(x, A | B) (Python 3.10; this code supports 3.8)',
      "12: regular expression 'a++' (atomic group or possessive quantifier) (Python 3.11; this code supports 3.8)",
      '13: .monitoring (Python 3.12; this code supports 3.8)',
    ]);
    // the grammar: an assignment expression is 3.8's, parenthesized context managers are not
    const walrus = join(dir, 'walrus.py');
    writeFileSync(walrus, 'if (n := 3):\n    pass\n');
    expect(scan('3.8', [walrus]).problems).toEqual([]);
    expect(scan('3.7', [walrus]).problems.join()).toMatch(/not Python 3\.7 syntax/);
    const managers = join(dir, 'managers.py');
    writeFileSync(managers, 'with (open("a") as a, open("b") as b):\n    pass\n');
    expect(scan('3.8', [managers]).problems.join()).toMatch(/not Python 3\.8 syntax/);
  });

  it('every entry point refuses Python 3.7, naming the program and the interpreter', () => {
    // a 3.7 as the guards see it: sys.version_info replaced before the program runs
    for (const program of [
      'perfmine_harness.py',
      'perfmine_bench.py',
      'perfmine_verify.py',
      'perfmine_probe.py',
      'perfmine_snapshot.py',
      'perfmine_detect.py',
      'index_forward.py',
    ]) {
      const run = spawnSync(
        'python3',
        [
          '-c',
          'import os, runpy, sys; sys.version_info = (3, 7, 17, "final", 0); sys.argv = [sys.argv[1], "--help"]; ' +
            'sys.path.insert(0, os.path.dirname(sys.argv[0])); runpy.run_path(sys.argv[0], run_name="__main__")',
          join(PYTHON_DIR, program),
        ],
        { encoding: 'utf8', env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' } },
      );
      const guard = program === 'perfmine_detect.py' || program === 'index_forward.py' ? program : 'perfmine_harness.py';
      expect(run.status, program).toBe(1);
      expect(run.stderr.trim(), program).toMatch(
        new RegExp(`^perfmine: ${guard.replace('.', '\\.')} needs Python 3\\.8 or newer; \\S+ is 3\\.7$`),
      );
    }
  });

  it(`python/README.md states the oldest Python, ${OLDEST}, and the guards hold it`, () => {
    expect(readFileSync(join(PYTHON_DIR, 'README.md'), 'utf8')).toContain(`## The oldest Python: ${OLDEST}`);
    for (const program of ['perfmine_harness.py', 'perfmine_detect.py', 'index_forward.py'])
      expect(readFileSync(join(PYTHON_DIR, program), 'utf8')).toContain(`if sys.version_info < (${OLDEST.replace('.', ', ')}):`);
  });
});
