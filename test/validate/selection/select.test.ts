import { describe, expect, it } from 'vitest';
import { selectWorkloads, type Fingerprint, type OutlineSpan, type SelectionInput } from '../../../stages/validate/selection.js';

/**
 * Workload selection by coverage, on fingerprints and outlines as the harness reports them: a
 * library of two modules (pkg/core.py with helper, add, Ops.mul, mul; pkg/consts.py with a
 * constant), four workloads.
 */
const CORE: OutlineSpan[] = [
  ['def', 'helper', 3, 4],
  ['def', 'add', 6, 7],
  ['class', 'Ops', 9, 12],
  ['def', 'Ops.mul', 10, 12],
  ['def', 'mul', 14, 15],
];
const code = (file: string, first: number, last: number) => [`/repo/${file}`, first, last] as const;
const FINGERPRINTS: Fingerprint[] = [
  {
    workload: 'bench.time_add',
    code: [code('benchmarks/bench.py', 2, 3), code('pkg/core.py', 3, 4), code('pkg/core.py', 6, 7)],
    opaque: false,
  },
  {
    workload: 'bench.time_mul',
    code: [code('benchmarks/bench.py', 4, 5), code('pkg/core.py', 10, 12), code('pkg/core.py', 14, 15)],
    opaque: false,
  },
  { workload: 'bench.time_helper', code: [code('benchmarks/bench.py', 6, 7), code('pkg/core.py', 3, 4)], opaque: false },
  { workload: 'bench.time_noop', code: [code('benchmarks/bench.py', 8, 9)], opaque: false },
];

function input(diff: string, extra: Partial<SelectionInput> = {}): SelectionInput {
  return {
    diff,
    repoDir: '/repo',
    benchmarkDir: 'benchmarks',
    outlines: new Map([
      ['pkg/core.py', CORE],
      ['pkg/consts.py', []],
      ['tests/test_core.py', [['def', 'test_add', 1, 2]]],
    ]),
    imported: new Set(['/repo/pkg/__init__.py', '/repo/pkg/core.py', '/repo/pkg/consts.py', '/repo/benchmarks/bench.py']),
    fingerprints: FINGERPRINTS,
    controls: 1,
    ...extra,
  };
}

const patch = (file: string, hunks: string) => `diff --git a/${file} b/${file}\n--- a/${file}\n+++ b/${file}\n${hunks}`;

describe('selecting workloads by coverage', () => {
  it('selects exactly the workloads that ran a changed function, plus a fixed control', () => {
    // add's body changed (line 7)
    const s = selectWorkloads(
      input(patch('pkg/core.py', '@@ -6,2 +6,2 @@\n def add(a, b):\n-    return helper(a) + b\n+    return b + helper(a)\n')),
    );
    expect(s.mode).toBe('coverage');
    expect(s.selected).toEqual(['bench.time_add']);
    expect(s.touched).toEqual([{ file: '/repo/pkg/core.py', name: 'add', first: 6, last: 7 }]);
    expect(s.controls).toHaveLength(1);
    expect(new Set([...s.selected, ...s.controls, ...s.skipped])).toEqual(new Set(FINGERPRINTS.map((f) => f.workload)));
    // the control choice does not depend on the order the workloads come in
    expect(
      selectWorkloads(
        input(patch('pkg/core.py', '@@ -6,2 +6,2 @@\n def add(a, b):\n-    return helper(a) + b\n+    return b + helper(a)\n'), {
          fingerprints: [...FINGERPRINTS].reverse(),
        }),
      ).controls,
    ).toEqual(s.controls);
  });

  it('chooses controls no slower than the slowest selected workload, then those of unknown time, then the fastest of the rest', () => {
    const addChanged = patch('pkg/core.py', '@@ -6,2 +6,2 @@\n def add(a, b):\n-    return helper(a) + b\n+    return b + helper(a)\n');
    const timed = (ms: Record<string, number | null>) => FINGERPRINTS.map((f) => ({ ...f, ms: ms[f.workload] ?? null }));
    const controls = (ms: Record<string, number | null>, n: number) =>
      selectWorkloads(input(addChanged, { fingerprints: timed(ms), controls: n })).controls;
    // time_add (selected) took 40 ms: time_noop (30 ms) comes first, however the hash orders it
    const slowMul = { 'bench.time_add': 40, 'bench.time_mul': 9000, 'bench.time_helper': null, 'bench.time_noop': 30 };
    expect(controls(slowMul, 1)).toEqual(['bench.time_noop']);
    expect(controls(slowMul, 2)).toEqual(['bench.time_noop', 'bench.time_helper']);
    expect(controls(slowMul, 3)).toEqual(['bench.time_noop', 'bench.time_helper', 'bench.time_mul']);
    // all slower than the selected one: the fastest first
    expect(controls({ 'bench.time_add': 1, 'bench.time_mul': 9000, 'bench.time_helper': 50, 'bench.time_noop': 700 }, 2)).toEqual([
      'bench.time_helper',
      'bench.time_noop',
    ]);
    // the same, but the cheap one is slow: it is not chosen before the other cheap one
    const cheap = controls({ 'bench.time_add': 40, 'bench.time_mul': 30, 'bench.time_helper': 9000, 'bench.time_noop': 20 }, 2);
    expect([...cheap].sort()).toEqual(['bench.time_mul', 'bench.time_noop']);
    // no time known for the selected workload: the hash alone, as before times were recorded
    const untimed = selectWorkloads(input(addChanged, { controls: 3 })).controls;
    expect(controls({ 'bench.time_add': null, 'bench.time_mul': 9000, 'bench.time_helper': 1, 'bench.time_noop': 2 }, 3)).toEqual(untimed);
  });

  it('chooses last a control whose module alone would add a heavy import (networkx: 20 s of graphs built at import)', () => {
    const addChanged = patch('pkg/core.py', '@@ -6,2 +6,2 @@\n def add(a, b):\n-    return helper(a) + b\n+    return b + helper(a)\n');
    const timed = FINGERPRINTS.map((f) => ({ ...f, ms: { 'bench.time_add': 40, 'bench.time_noop': 30 }[f.workload] ?? 9000 }));
    const modules = (of: Record<string, [string, number]>) =>
      new Map(Object.entries(of).map(([w, [module, importSeconds]]) => [w, { module, importSeconds }]));
    const controls = (m: Record<string, [string, number]>, n: number) =>
      selectWorkloads(input(addChanged, { fingerprints: timed, controls: n, modules: modules(m) })).controls;
    // without modules: time_noop (the fastest) first
    expect(selectWorkloads(input(addChanged, { fingerprints: timed, controls: 1 })).controls).toEqual(['bench.time_noop']);
    // time_noop's module takes 20 s to import and no selected workload needs it: it goes last
    const heavyNoop = {
      'bench.time_add': ['benchmarks.a', 0.5],
      'bench.time_noop': ['benchmarks.graphs', 20],
      'bench.time_mul': ['benchmarks.b', 0.9],
      'bench.time_helper': ['benchmarks.b', 0.9],
    } as const satisfies Record<string, [string, number]>;
    const chosen = controls(heavyNoop, 3);
    expect(chosen).toHaveLength(3);
    expect(chosen.at(-1)).toBe('bench.time_noop');
    // a heavy module the selected workload imports anyway costs nothing more: time_noop first again
    expect(controls({ ...heavyNoop, 'bench.time_add': ['benchmarks.graphs', 20] }, 1)).toEqual(['bench.time_noop']);
    // a module of a second at most is not heavy
    expect(controls({ ...heavyNoop, 'bench.time_noop': ['benchmarks.graphs', 1] }, 1)).toEqual(['bench.time_noop']);
  });

  it("places a hunk by the lines it changes, not by its context lines past the function's end (shapely #1961)", () => {
    // add's last line changed; git's three context lines run past add (line 7) into the blank
    // line and the class after it: still a change of add, not module-level code
    const s = selectWorkloads(
      input(
        patch(
          'pkg/core.py',
          '@@ -5,5 +5,6 @@\n \n def add(a, b):\n-    return helper(a) + b\n+    c = helper(a)\n+    return c + b\n \n class Ops:\n',
        ),
      ),
    );
    expect(s.mode).toBe('coverage');
    expect(s.selected).toEqual(['bench.time_add']);
    // a statement appended after add's last line, indented, belongs to add
    const appended = selectWorkloads(input(patch('pkg/core.py', '@@ -7,2 +7,3 @@\n     return helper(a) + b\n+    # done\n \n')));
    expect(appended.selected).toEqual(['bench.time_add']);
    // an unindented statement between two functions is module-level code
    const between = selectWorkloads(input(patch('pkg/core.py', '@@ -7,2 +7,3 @@\n     return helper(a) + b\n+X = 1\n \n')));
    expect(between.mode).toBe('all');
  });

  it('maps a change in a function to every workload that ran it, through methods and callers', () => {
    const helper = selectWorkloads(input(patch('pkg/core.py', '@@ -4,1 +4,1 @@\n-    return x + 1\n+    return 1 + x\n')));
    expect([...helper.selected].sort()).toEqual(['bench.time_add', 'bench.time_helper']);
    const method = selectWorkloads(input(patch('pkg/core.py', '@@ -12,1 +12,1 @@\n-        return a * b\n+        return b * a\n')));
    expect(method.selected).toEqual(['bench.time_mul']);
    expect(method.touched.map((t) => t.name)).toEqual(['Ops.mul']);
    // an insertion inside a function's body touches it
    const inserted = selectWorkloads(input(patch('pkg/core.py', '@@ -14,0 +15,1 @@\n+    a = int(a)\n')));
    expect(inserted.selected).toEqual(['bench.time_mul']);
  });

  it('falls back to all for module-level code the suite imports (a constant), and for a file every workload runs', () => {
    const constant = selectWorkloads(input(patch('pkg/consts.py', '@@ -1,1 +1,1 @@\n-LIMIT = 10\n+LIMIT = 20\n')));
    expect(constant).toMatchObject({
      mode: 'all',
      reason: expect.stringMatching(/module-level code changed in pkg\/consts\.py .*imports/),
    });
    expect(constant.selected).toHaveLength(4);
    const classBody = selectWorkloads(input(patch('pkg/core.py', '@@ -9,1 +9,1 @@\n-class Ops:\n+class Ops(object):\n')));
    expect(classBody.mode).toBe('all');
    // a function every workload runs (here: all run bench code of one shared helper)
    const shared = FINGERPRINTS.map((f) => ({ ...f, code: [...f.code!, code('pkg/core.py', 3, 4)] }));
    const everyone = selectWorkloads(
      input(patch('pkg/core.py', '@@ -4,1 +4,1 @@\n-    return x + 1\n+    return 1 + x\n'), { fingerprints: shared }),
    );
    expect(everyone).toMatchObject({
      mode: 'all',
      reason: expect.stringMatching(/every workload runs the changed code \(pkg\/core\.py:helper\)/),
    });
  });

  it('ignores new definitions and imports at module level, new files, tests the suite does not import, and docs', () => {
    const diff = [
      patch(
        'pkg/core.py',
        '@@ -15,0 +16,4 @@\n+\n+\n+def fast_mul(a, b):\n+    return a * b\n@@ -14,2 +14,2 @@\n def mul(a, b):\n-    return Ops.mul(a, b)\n+    return fast_mul(a, b)\n',
      ),
      'diff --git a/pkg/fast.py b/pkg/fast.py\nnew file mode 100644\n--- /dev/null\n+++ b/pkg/fast.py\n@@ -0,0 +1,2 @@\n+X = 1\n+Y = 2\n',
      patch('tests/test_core.py', '@@ -3,0 +4,1 @@\n+CASES = [1, 2]\n'),
      patch('docs/index.rst', '@@ -1,1 +1,1 @@\n-Fast\n+Faster\n'),
    ].join('');
    const s = selectWorkloads(input(diff));
    expect(s).toMatchObject({ mode: 'coverage', selected: ['bench.time_mul'] });
    // a new function whose signature spans lines, closed at the margin (networkx #8562)
    const multiline = patch('pkg/core.py', '@@ -15,0 +16,6 @@\n+\n+\n+def magnetic(\n+    G, *, q=0.25\n+) -> float:\n+    return q\n');
    expect(selectWorkloads(input(multiline))).toMatchObject({ mode: 'coverage', selected: [] });
  });

  it('a decorator added to a definition that exists selects what runs that definition (lru_cache on helper used to select nothing)', () => {
    const cached = selectWorkloads(
      input(patch('pkg/core.py', '@@ -2,2 +2,3 @@\n \n+@functools.lru_cache(maxsize=None)\n def helper(x):\n     return x + 1\n')),
    );
    expect(cached).toMatchObject({ mode: 'coverage', selected: ['bench.time_add', 'bench.time_helper'] });
    expect(cached.touched.map((t) => t.name)).toEqual(['helper']);
    // on a class: every method of it; on a method, among its decorators: that method
    const onClass = selectWorkloads(
      input(patch('pkg/core.py', '@@ -8,2 +8,3 @@\n \n+@dataclasses.dataclass(frozen=True)\n class Ops:\n     @staticmethod\n')),
    );
    expect(onClass).toMatchObject({ mode: 'coverage', selected: ['bench.time_mul'] });
    expect(onClass.touched.map((t) => t.name)).toEqual(['Ops.mul']);
    const onMethod = selectWorkloads(input(patch('pkg/core.py', '@@ -10,1 +10,2 @@\n+    @functools.cache\n     @staticmethod\n')));
    expect(onMethod.touched.map((t) => t.name)).toEqual(['Ops.mul']);
    // a decorator of a new definition is that definition's (nothing existing changes)
    const onNew = selectWorkloads(
      input(patch('pkg/core.py', '@@ -15,0 +16,4 @@\n+\n+@functools.cache\n+def square(a):\n+    return a * a\n')),
    );
    expect(onNew).toMatchObject({ mode: 'coverage', selected: [] });
  });

  it('imports added, removed or changed, and annotations that leave the value as it was, do not widen to the whole suite', () => {
    const body = '@@ -6,2 +6,2 @@\n def add(a, b):\n-    return helper(a) + b\n+    return operator.add(helper(a), b)\n';
    const importChanged = selectWorkloads(
      input(patch('pkg/core.py', `@@ -1,2 +1,2 @@\n-import math\n+import math, operator\n from pkg.consts import LIMIT\n${body}`)),
    );
    expect(importChanged).toMatchObject({ mode: 'coverage', selected: ['bench.time_add'] });
    const consts = (hunks: string) => selectWorkloads(input(patch('pkg/consts.py', hunks)));
    // a parenthesised list, one name changed; imports under a TYPE_CHECKING guard; an import removed
    expect(consts('@@ -1,4 +1,4 @@\n from os.path import (\n     join,\n-    exists,\n+    isdir,\n )\n').mode).toBe('coverage');
    expect(consts('@@ -1,0 +1,3 @@\n+from typing import TYPE_CHECKING\n+if TYPE_CHECKING:\n+    from numpy import ndarray\n').mode).toBe(
      'coverage',
    );
    expect(consts('@@ -1,2 +1,1 @@\n-import os, \\\n-    sys\n+import os\n').mode).toBe('coverage');
    // annotations: added, changed, or bare, the value the same
    expect(consts('@@ -1,1 +1,1 @@\n-LIMIT = 10\n+LIMIT: int = 10\n').mode).toBe('coverage');
    expect(consts('@@ -1,1 +1,2 @@\n-LIMIT: int = 10\n+LIMIT: Final[int] = 10\n+COUNT: int\n').mode).toBe('coverage');
    // still the whole suite: a value changed with its annotation, a class body's annotation (a dataclass field),
    // a call at import, and a list whose start the hunk does not show
    for (const hunks of [
      '@@ -1,1 +1,1 @@\n-LIMIT: int = 10\n+LIMIT: int = 20\n',
      '@@ -2,1 +2,1 @@\n-    size = 0\n+    size: int = 0\n',
      '@@ -1,0 +1,1 @@\n+register(LIMIT)\n',
      '@@ -3,2 +3,2 @@\n     join,\n-    exists,\n+    isdir,\n',
    ])
      expect(consts(hunks), hunks).toMatchObject({
        mode: 'all',
        reason: expect.stringMatching(/module-level code changed in pkg\/consts\.py/),
      });
  });

  it('places each changed line of a hunk that runs across functions (networkx #8715: one hunk of 305 lines)', () => {
    // the end of helper, the blank line between, and add's signature, in one run of changed lines
    const across = selectWorkloads(
      input(
        patch(
          'pkg/core.py',
          '@@ -3,5 +3,5 @@\n def helper(x):\n-    return x + 1\n-\n-def add(a, b):\n+    return 1 + x\n+\n+def add(a, b, /):\n     return helper(a) + b\n \n',
        ),
      ),
    );
    expect(across).toMatchObject({ mode: 'coverage', selected: ['bench.time_add', 'bench.time_helper'] });
    expect(across.touched.map((t) => t.name)).toEqual(['helper', 'add']);
    // a module-level statement among them still measures everything
    const withConstant = selectWorkloads(
      input(patch('pkg/core.py', '@@ -4,3 +4,4 @@\n-    return x + 1\n+    return x + 2\n+LIMIT = 3\n \n def add(a, b):\n')),
    );
    expect(withConstant).toMatchObject({
      mode: 'all',
      reason: expect.stringMatching(/module-level code changed in pkg\/core\.py \(line 5\)/),
    });
  });

  it('ignores a change to the benchmarks, which both sides run as the base has them (xarray #10316 rebuilt a benchmark module)', () => {
    const fingerprints: Fingerprint[] = [
      ...FINGERPRINTS.slice(0, 3),
      { workload: 'other.time_noop', code: [code('benchmarks/other.py', 1, 2)], opaque: false },
    ];
    const s = selectWorkloads(
      input(patch('benchmarks/bench.py', '@@ -1,1 +1,1 @@\n-SIZES = [10, 100]\n+SIZES = make_sizes(100)\n'), {
        fingerprints,
        outlines: new Map([['benchmarks/bench.py', [['def', 'time_add', 2, 3] as OutlineSpan]]]),
        imported: new Set(['/repo/pkg/core.py', '/repo/benchmarks/bench.py', '/repo/benchmarks/other.py']),
      }),
    );
    expect(s).toMatchObject({ mode: 'coverage', selected: [], touched: [] });
    expect(s.reason).toBe('the patch changes no code any workload runs');
  });

  it('ignores a reworded module docstring (networkx #8715), but not code beside it or a string that is not the docstring', () => {
    // leiden.py's first hunk: a three-line docstring made one line, the imports as context
    const docstring = patch(
      'pkg/consts.py',
      '@@ -1,6 +1,4 @@\n-"""Functions for detecting communities based on Leiden Community Detection\n-algorithm.\n-"""\n+"""Detecting communities based on the Leiden Community Detection algorithm"""\n \n import functools\n import itertools\n',
    );
    expect(selectWorkloads(input(docstring))).toMatchObject({ mode: 'coverage', selected: [] });
    // with a shebang and a comment changed too, and a one-line docstring with a prefix and a comment after it
    const oneLine = patch(
      'pkg/consts.py',
      "@@ -1,3 +1,3 @@\n #!/usr/bin/env python\n-r'''Old.'''  # note\n+r'''New.'''\n-# old comment\n+# new comment\n",
    );
    expect(selectWorkloads(input(oneLine)).selected).toEqual([]);
    // a statement written after the closing quotes, on its line or the next, is code
    const after = patch('pkg/consts.py', '@@ -1,2 +1,2 @@\n-"""Doc."""\n+"""Doc."""; LIMIT = 20\n LIMIT = 10\n');
    expect(selectWorkloads(input(after)).mode).toBe('all');
    const next = patch('pkg/consts.py', '@@ -1,3 +1,3 @@\n """Doc\n """\n-LIMIT = 10\n+LIMIT = 20\n');
    expect(selectWorkloads(input(next)).mode).toBe('all');
    // a hunk that starts below line 1 may start inside a string: not trusted
    const inside = patch('pkg/consts.py', '@@ -4,3 +4,3 @@\n text\n """\n-LIMIT = 10\n+LIMIT = 20\n');
    expect(selectWorkloads(input(inside)).mode).toBe('all');
    // a string assigned to a name is code
    const assigned = patch('pkg/consts.py', '@@ -1,1 +1,1 @@\n-NAME = """a"""\n+NAME = """b"""\n');
    expect(selectWorkloads(input(assigned)).mode).toBe('all');
  });

  it('falls back to all for compiled sources, build files, binary changes and unreadable outlines', () => {
    expect(selectWorkloads(input(patch('pkg/_speed.c', '@@ -1,1 +1,1 @@\n-int x;\n+long x;\n'))).reason).toMatch(
      /not Python source changed: pkg\/_speed\.c/,
    );
    expect(selectWorkloads(input(patch('pyproject.toml', '@@ -1,1 +1,1 @@\n-a\n+b\n'))).mode).toBe('all');
    expect(selectWorkloads(input(patch('requirements.txt', '@@ -1,1 +1,1 @@\n-numpy\n+numpy>=2\n'))).mode).toBe('all');
    expect(
      selectWorkloads(
        input('diff --git a/pkg/data.bin b/pkg/data.bin\nGIT binary patch\nliteral 1\nIcmZ?d00001\n\nliteral 0\nHcmV?d00001\n'),
      ).reason,
    ).toMatch(/binary/);
    expect(
      selectWorkloads(
        input(patch('pkg/core.py', '@@ -4,1 +4,1 @@\n-    return x + 1\n+    return 1 + x\n'), {
          outlines: new Map([['pkg/core.py', null]]),
        }),
      ).reason,
    ).toMatch(/could not be read/);
  });

  it('selects a workload whose fingerprint failed or is opaque, and falls back to all when the package does not run from the checkout', () => {
    const failed = FINGERPRINTS.map((f) =>
      f.workload === 'bench.time_noop' ? { ...f, code: null } : f.workload === 'bench.time_helper' ? { ...f, opaque: true } : f,
    );
    const s = selectWorkloads(
      input(patch('pkg/core.py', '@@ -6,2 +6,2 @@\n def add(a, b):\n-    return helper(a) + b\n+    return b + helper(a)\n'), {
        fingerprints: failed,
      }),
    );
    expect([...s.selected].sort()).toEqual(['bench.time_add', 'bench.time_helper', 'bench.time_noop']);
    const installed = FINGERPRINTS.map((f) => ({
      ...f,
      code: f.code!.map(([file, a, b]) => [file.replace('/repo/pkg', '/usr/lib/python3/site-packages/pkg'), a, b] as const),
    }));
    expect(
      selectWorkloads(input(patch('pkg/core.py', '@@ -4,1 +4,1 @@\n-    return x + 1\n+    return 1 + x\n'), { fingerprints: installed }))
        .reason,
    ).toMatch(/not installed in editable mode/);
  });

  it('selects nothing but the controls when the patch changes no code any workload runs', () => {
    const s = selectWorkloads(
      input(patch('tests/test_core.py', '@@ -2,1 +2,1 @@\n-    assert add(1, 2) == 4\n+    assert add(1, 2) == 4.0\n')),
    );
    expect(s).toMatchObject({
      mode: 'coverage',
      selected: [],
      reason: 'the patch changes no code any workload runs (it changes tests/test_core.py:test_add)',
    });
    expect(s.controls).toHaveLength(1);
  });
});
