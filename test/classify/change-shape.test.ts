import { describe, expect, it } from 'vitest';
import { changeShape } from '../../stages/classify/change-shape.js';
import type { FileChange } from '../../pipeline/concepts/records/pull-request.js';

/** Category and difficulty under `--llm none`, from crafted diffs of one core file. */

function diffOf(
  path: string,
  removed: readonly string[],
  added: readonly string[],
  header = 'def work(items):',
  context = ['    """Do the work."""'],
): string {
  return [
    `diff --git a/${path} b/${path}`,
    `--- a/${path}`,
    `+++ b/${path}`,
    `@@ -1,${removed.length + context.length} +1,${added.length + context.length} @@ ${header}`,
    ...context.map((l) => ` ${l}`),
    ...removed.map((l) => `-${l}`),
    ...added.map((l) => `+${l}`),
    '',
  ].join('\n');
}

function shape(
  removed: readonly string[],
  added: readonly string[],
  options: { path?: string; header?: string; context?: string[]; files?: FileChange[] } = {},
) {
  const path = options.path ?? 'pkg/core.py';
  const files = options.files ?? [
    { path, previousPath: null, status: 'modified' as const, additions: added.length, deletions: removed.length, binary: false },
  ];
  return changeShape(
    diffOf(path, removed, added, options.header, options.context),
    files,
    files.map((f) => f.path),
  );
}

describe('heuristic category: the shape of the change', () => {
  it('a new cache', () => {
    const s = shape(
      ['    return expensive(items)'],
      [
        '    if items in _RESULT_CACHE:',
        '        return _RESULT_CACHE[items]',
        '    _RESULT_CACHE[items] = expensive(items)',
        '    return _RESULT_CACHE[items]',
      ],
    );
    expect(s.category).toBe('cache_and_reuse');
    expect(s.reason).toContain('a cache introduced (_RESULT_CACHE[items])');
    expect(shape([], ['@functools.lru_cache(maxsize=None)']).category).toBe('cache_and_reuse');
  });

  it('a loop replaced by a vectorized call', () => {
    const s = shape(
      ['    total = 0', '    for x in items:', '        total += x * x', '    return total'],
      ['    arr = np.asarray(items)', '    return float(np.dot(arr, arr))'],
    );
    expect(s).toMatchObject({ category: 'use_lower_level_system' });
    expect(s.reason).toContain('a Python loop replaced by NumPy calls (np.asarray)');
  });

  it('NumPy calls without a loop removed are not a vectorization', () => {
    expect(shape(['    return list(items)'], ['    return np.asarray(items)']).category).toBeNull();
  });

  it('a data structure swap', () => {
    const s = shape(
      ['    allowed = list(ALLOWED)', '    return [x for x in items if x in allowed]'],
      ['    allowed = frozenset(ALLOWED)', '    return [x for x in items if x in allowed]'],
    );
    expect(s.category).toBe('use_better_data_structure_and_layout');
    expect(s.reason).toContain('(frozenset)');
  });

  it('an algorithmic change: recursion removed, or a binary search', () => {
    const fib = shape(
      ['    if n < 2:', '        return n', '    return fib(n - 1) + fib(n - 2)'],
      ['    a, b = 0, 1', '    for _ in range(n):', '        a, b = b, a + b', '    return a'],
      { header: '', context: ['def fib(n):'] },
    );
    expect(fib.category).toBe('use_better_algorithm');
    expect(fib.reason).toContain('a recursive call of fib() removed');
    expect(
      shape(
        ['    for i, e in enumerate(EDGES):', '        if x < e:', '            return i'],
        ['    return bisect.bisect_right(EDGES, x)'],
      ).category,
    ).toBe('use_better_algorithm');
  });

  it('compiled code, parallelism, removed work', () => {
    expect(shape([], ['cdef int i'], { path: 'pkg/_fast.pyx' }).category).toBe('use_lower_level_system');
    expect(
      shape(['    return [f(x) for x in items]'], ['    with ThreadPoolExecutor() as pool:', '        return list(pool.map(f, items))'])
        .category,
    ).toBe('use_parallelization');
    expect(
      shape(['    validate(items)', '    check_types(items)', '    items = list(items)', '    log(items)'], ['    pass']),
    ).toMatchObject({ category: 'remove_or_reduce_work' });
  });

  it('null with the reason when no rule matches; comments do not count', () => {
    const s = shape(['    return a + b'], ['    # we could keep an lru_cache here', '    return b + a']);
    expect(s.category).toBeNull();
    expect(s.reason).toContain('category null: no rule matched the shape of the change');
  });
});

describe('heuristic difficulty: the size of the change to core files', () => {
  const file = (path: string, additions: number, deletions: number, status: FileChange['status'] = 'modified'): FileChange => ({
    path,
    previousPath: null,
    status,
    additions,
    deletions,
    binary: false,
  });
  const sized = (files: FileChange[]) =>
    changeShape(
      '',
      files,
      files.map((f) => f.path),
    );

  it('easy, medium, hard at the documented bounds', () => {
    expect(sized([file('a.py', 30, 20)]).difficulty).toBe('easy');
    expect(sized([file('a.py', 30, 21)]).difficulty).toBe('medium');
    expect(sized([file('a.py', 1, 1), file('b.py', 1, 1), file('c.py', 1, 1)]).difficulty).toBe('medium');
    expect(sized([file('a.py', 300, 100)]).difficulty).toBe('medium');
    expect(sized([file('a.py', 300, 101)]).difficulty).toBe('hard');
    expect(sized(Array.from({ length: 9 }, (_, i) => file(`m${i}.py`, 1, 0))).difficulty).toBe('hard');
    expect(sized([file('a.py', 5, 0), file('_fast.pyx', 10, 0, 'added')])).toMatchObject({
      difficulty: 'hard',
      reason: expect.stringContaining('a new compiled source file'),
    });
  });

  it('null when no core file has a line count', () => {
    expect(changeShape('', [], [])).toMatchObject({
      difficulty: null,
      reason: expect.stringContaining('difficulty null: no core file with line counts'),
    });
  });
});
