import type { ImprovedWorkload } from '../../cache/improved-workloads.js';
import type { OptimizationCategory } from '../../stages/classify/categories.js';
import type { FileChange, LinkedIssue, PullRequest } from '../../pipeline/concepts/records/pull-request.js';
import { GitRepo } from '../helpers/git.js';
import { makePullRequest } from '../helpers/pull-request.js';

/**
 * Generated performance pull requests whose title, body and branch name the solution (as real
 * ones do: "Faster cell_len: use sets"), each made in a real git repository so that the diff is
 * git's own. Each case says which words give its solution away, which workloads validate would
 * report improved, and which category the rules should find.
 */
export interface SolutionCase {
  readonly name: string;
  readonly title: string;
  readonly body: string;
  readonly branch: string;
  /** The files at the base commit, and what the patch writes (null deletes). */
  readonly base: Readonly<Record<string, string>>;
  readonly patch: Readonly<Record<string, string | null>>;
  readonly improved: readonly ImprovedWorkload[];
  /** Words and identifiers of the solution (from the title, body, branch and added code) that a statement must not hold. */
  readonly solutionWords: readonly string[];
  readonly category: OptimizationCategory | null;
}

const BENCH = (body: string) => `import textlib\n\n\n${body}`;

export const SOLUTION_CASES: readonly SolutionCase[] = [
  {
    name: 'sets',
    title: 'Faster cell_len: use sets',
    body: 'Membership tests on a list are linear. This keeps the single-cell characters in `_SINGLE_CELLS`, a frozenset, and asks `_SINGLE_CELLS.issuperset(text)` first.',
    branch: 'alice/faster-cell-len',
    base: {
      'textlib/cells.py': [
        '"""Cell widths of text."""',
        '',
        'SINGLE_CELL_CHARS = [chr(c) for c in range(32, 127)]',
        '',
        '',
        'def char_width(ch):',
        '    """Cells one character takes."""',
        '    return 1 if ch in SINGLE_CELL_CHARS else 2',
        '',
        '',
        'def cell_len(text):',
        '    """Cells a string takes."""',
        '    total = 0',
        '    for ch in text:',
        '        total += char_width(ch)',
        '    return total',
        '',
      ].join('\n'),
      'benchmarks/bench_text.py': BENCH(
        'class TextSuite:\n    def time_align_center(self):\n        textlib.cells.cell_len("abc" * 1000)\n',
      ),
    },
    patch: {
      'textlib/cells.py': [
        '"""Cell widths of text."""',
        '',
        'SINGLE_CELL_CHARS = [chr(c) for c in range(32, 127)]',
        '_SINGLE_CELLS = frozenset(SINGLE_CELL_CHARS)',
        '',
        '',
        'def char_width(ch):',
        '    """Cells one character takes."""',
        '    return 1 if ch in _SINGLE_CELLS else 2',
        '',
        '',
        'def cell_len(text):',
        '    """Cells a string takes."""',
        '    if _SINGLE_CELLS.issuperset(text):',
        '        return len(text)',
        '    return sum(map(char_width, text))',
        '',
      ].join('\n'),
    },
    improved: [{ name: 'bench_text.TextSuite.time_align_center', params: null, unit: 'seconds', baseMedian: 2.53e-5, speedup: 1.77 }],
    solutionWords: [
      'use sets',
      'sets',
      'frozenset',
      '_SINGLE_CELLS',
      'issuperset',
      'faster-cell-len',
      'Faster cell_len',
      'Membership tests on a list',
      'sum(map(char_width, text))',
    ],
    category: 'use_better_data_structure_and_layout',
  },
  {
    name: 'cache',
    title: 'PERF: cache char widths with lru_cache',
    body: 'Memoize `char_width` via `functools.lru_cache` and keep rendered rows in `_ROW_WIDTH_CACHE` so tables stop recomputing them.',
    branch: 'bob/memoize-widths',
    base: {
      'textlib/table.py': [
        'from textlib.cells import cell_len',
        '',
        '',
        'def row_width(cells):',
        '    return sum(cell_len(c) for c in cells)',
        '',
        '',
        'def table_width(rows):',
        '    return max(row_width(r) for r in rows)',
        '',
      ].join('\n'),
      'benchmarks/bench_table.py': BENCH(
        'class WidthSuite:\n    params = [10, 100]\n    def time_render_table(self, n):\n        textlib.table.table_width([["x"] * n] * n)\n',
      ),
    },
    patch: {
      'textlib/table.py': [
        'import functools',
        '',
        'from textlib.cells import cell_len',
        '',
        '_ROW_WIDTH_CACHE = {}',
        '',
        '',
        '@functools.lru_cache(maxsize=4096)',
        'def _cached_cell_len(c):',
        '    return cell_len(c)',
        '',
        '',
        'def row_width(cells):',
        '    key = tuple(cells)',
        '    if key not in _ROW_WIDTH_CACHE:',
        '        _ROW_WIDTH_CACHE[key] = sum(_cached_cell_len(c) for c in cells)',
        '    return _ROW_WIDTH_CACHE[key]',
        '',
        '',
        'def table_width(rows):',
        '    return max(row_width(r) for r in rows)',
        '',
      ].join('\n'),
    },
    improved: [
      { name: 'bench_table.WidthSuite.time_render_table(10)', params: '10', unit: 'seconds', baseMedian: 4.1e-4, speedup: 3.2 },
      { name: 'bench_table.WidthSuite.time_render_table(100)', params: '100', unit: 'seconds', baseMedian: 0.0412, speedup: 11.5 },
    ],
    solutionWords: ['cache', 'lru_cache', 'Memoize', '_ROW_WIDTH_CACHE', '_cached_cell_len', 'memoize-widths', 'functools'],
    category: 'cache_and_reuse',
  },
  {
    name: 'vectorize',
    title: 'PERF: vectorize weighted_total with np.dot',
    body: 'The Python loop over every element is replaced by one `np.dot(values, weights)` call.',
    branch: 'carol/vectorize-weighted-total',
    base: {
      'textlib/stats.py': [
        'import numpy as np',
        '',
        '',
        'def weighted_total(values, weights):',
        '    acc = 0.0',
        '    for i in range(len(values)):',
        '        acc += values[i] * weights[i]',
        '    return acc',
        '',
      ].join('\n'),
      'benchmarks/bench_stats.py': BENCH(
        'def time_weighted_total():\n    textlib.stats.weighted_total(list(range(10000)), [1.0] * 10000)\n',
      ),
    },
    patch: {
      'textlib/stats.py': [
        'import numpy as np',
        '',
        '',
        'def weighted_total(values, weights):',
        '    as_array = np.asarray(values, dtype=np.float64)',
        '    return float(np.dot(as_array, np.asarray(weights, dtype=np.float64)))',
        '',
      ].join('\n'),
    },
    improved: [{ name: 'bench_stats.time_weighted_total', params: null, unit: 'seconds', baseMedian: 0.00213, speedup: 24.31 }],
    solutionWords: ['vectorize', 'np.dot', 'as_array', 'vectorize-weighted-total', 'Python loop'],
    category: 'use_lower_level_system',
  },
  {
    name: 'iterative',
    title: 'PERF: compute fibonacci iteratively instead of by exponential recursion',
    body: 'fibonacci(n) recomputes the same values; two accumulators `prev_value, next_value` make it linear.',
    branch: 'dave/iterative-fib',
    base: {
      'textlib/numbers.py': [
        'def fibonacci(n):',
        '    """The n-th Fibonacci number."""',
        '    if n < 2:',
        '        return n',
        '    return fibonacci(n - 1) + fibonacci(n - 2)',
        '',
      ].join('\n'),
      'benchmarks/bench_numbers.py': BENCH('def time_fibonacci():\n    textlib.numbers.fibonacci(20)\n'),
    },
    patch: {
      'textlib/numbers.py': [
        'def fibonacci(n):',
        '    """The n-th Fibonacci number."""',
        '    prev_value, next_value = 0, 1',
        '    for _ in range(n):',
        '        prev_value, next_value = next_value, prev_value + next_value',
        '    return prev_value',
        '',
      ].join('\n'),
    },
    improved: [{ name: 'bench_numbers.time_fibonacci', params: null, unit: 'seconds', baseMedian: 0.00311, speedup: 412.7 }],
    solutionWords: ['iteratively', 'recursion', 'accumulators', 'prev_value', 'next_value', 'iterative-fib'],
    category: 'use_better_algorithm',
  },
  {
    name: 'bisect',
    title: 'Faster width buckets with bisect',
    body: 'A binary search over `_BUCKET_EDGES` with `bisect_right` instead of scanning every bucket; see the new `textlib/_buckets.py`.',
    branch: 'erin/bisect-buckets',
    base: {
      'textlib/layout.py': [
        'EDGES = [4, 8, 16, 32, 64, 128]',
        '',
        '',
        'def bucket_of(width):',
        '    for index, edge in enumerate(EDGES):',
        '        if width < edge:',
        '            return index',
        '    return len(EDGES)',
        '',
      ].join('\n'),
      'benchmarks/bench_layout.py': BENCH(
        'class LayoutSuite:\n    params = ["narrow", "wide"]\n    def peakmem_bucket_of(self, kind):\n        textlib.layout.bucket_of(3 if kind == "narrow" else 200)\n',
      ),
    },
    patch: {
      'textlib/_buckets.py': [
        'from bisect import bisect_right',
        '',
        '_BUCKET_EDGES = (4, 8, 16, 32, 64, 128)',
        '',
        '',
        'def find_bucket(width):',
        '    return bisect_right(_BUCKET_EDGES, width)',
        '',
      ].join('\n'),
      'textlib/layout.py': [
        'from textlib._buckets import find_bucket',
        '',
        'EDGES = [4, 8, 16, 32, 64, 128]',
        '',
        '',
        'def bucket_of(width):',
        '    return find_bucket(width)',
        '',
      ].join('\n'),
    },
    improved: [
      {
        name: "bench_layout.LayoutSuite.peakmem_bucket_of('wide')",
        params: "'wide'",
        unit: 'bytes',
        baseMedian: 31_457_280,
        speedup: 1.21,
      },
    ],
    solutionWords: ['bisect', 'binary search', '_BUCKET_EDGES', 'bisect_right', '_buckets.py', 'find_bucket', 'bisect-buckets'],
    category: 'use_better_algorithm',
  },
];

/** Changed files with statuses and line counts, as collect records them. */
function filesBetween(repo: GitRepo, base: string, head: string): FileChange[] {
  const status = new Map(
    repo
      .git('diff', '--name-status', base, head)
      .split('\n')
      .filter(Boolean)
      .map((l) => {
        const [s, path] = l.split('\t') as [string, string];
        return [path, s === 'A' ? 'added' : s === 'D' ? 'removed' : 'modified'] as const;
      }),
  );
  return repo.filesBetween(base, head).map((f) => ({ ...f, status: status.get(f.path) ?? 'modified' }));
}

export interface MadeCase {
  readonly pr: PullRequest;
  readonly repo: GitRepo;
}

/**
 * The case as a collected pull request, from a real repository (removed by the caller): the base
 * commit, then the patch. `source: 'git'` makes it as the git source does (no body, no issues).
 */
export function makeCase(
  c: SolutionCase,
  options: { number?: number; source?: 'github' | 'git'; linkedIssues?: LinkedIssue[] } = {},
): MadeCase {
  const repo = new GitRepo();
  repo.commit('base', { 'asv.conf.json': '{"version": 1, "project": "textlib", "benchmark_dir": "benchmarks"}\n', ...c.base });
  const baseSha = repo.git('rev-parse', 'HEAD').trim();
  const mergeSha = repo.commit(`Merge pull request #${options.number ?? 7} from ${c.branch}\n\n${c.title}`, c.patch);
  const files = filesBetween(repo, baseSha, mergeSha);
  const git = options.source === 'git';
  const pr = makePullRequest({
    repo: 'acme/textlib',
    number: options.number ?? 7,
    title: c.title,
    body: git ? '' : `${c.body}\n\nBranch: ${c.branch}`,
    baseSha,
    mergeSha,
    headSha: mergeSha,
    files,
    additions: files.reduce((n, f) => n + f.additions, 0),
    deletions: files.reduce((n, f) => n + f.deletions, 0),
    changedFiles: files.length,
    diff: repo.diff(baseSha, mergeSha),
    linkedIssues: options.linkedIssues ?? [],
    asvConfig: { path: 'asv.conf.json', text: '{"version": 1, "project": "textlib", "benchmark_dir": "benchmarks"}\n' },
    source: git ? 'git' : 'github',
    missing: git ? ['body', 'labels', 'author', 'authorAssociation', 'comments', 'linkedIssues'] : [],
  });
  return { pr, repo };
}
