import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { monthWindow } from '../window.js';

/**
 * The embedded default: a small pure-Python library, `fastmath`, with asv benchmarks, pytest
 * tests and a month of pull-request history (merge commits and squash commits), made with real
 * git. Each pull request is built to exercise one decision of the pipeline.
 */
export type SampleExpectation =
  | 'emitted' // a real speedup (far faster, about 2x, about 1.3x): kept and emitted
  | 'filtered-message' // the rule filter drops it (docs, version bump)
  | 'no-improvement' // measured: nothing got faster (a placebo)
  | 'regression' // measured: slower
  | 'snapshot-mismatch'; // faster, but a benchmark's return value changed

export interface SamplePullRequest {
  readonly number: number;
  readonly title: string;
  readonly style: 'merge' | 'squash';
  readonly mergedAt: string;
  readonly expect: SampleExpectation;
}

export interface SampleRepo {
  readonly path: string;
  readonly defaultBranch: string;
  readonly month: string;
  readonly pullRequests: readonly SamplePullRequest[];
}

type Files = Record<string, string | null>;

const INIT = `"""fastmath: a small sample library for the perfmine demo."""

__version__ = "0.1.0"

from .core import count_primes, fib, is_prime, sum_of_squares

__all__ = ["count_primes", "fib", "is_prime", "sum_of_squares"]
`;

const CORE_V1 = `"""Number helpers, written plainly."""


def fib(n):
    """The n-th Fibonacci number."""
    if n < 2:
        return n
    return fib(n - 1) + fib(n - 2)


def is_prime(n):
    """Whether n is prime, by trial division."""
    # try every divisor up to the square root
    if n < 2:
        return False
    i = 2
    while i * i <= n:
        if n % i == 0:
            return False
        i += 1
    return True


def sum_of_squares(n):
    """1^2 + 2^2 + ... + n^2."""
    total = 0
    for i in range(1, n + 1):
        total += i * i
    return total


def count_primes(limit):
    """How many primes are below limit."""
    return sum(1 for k in range(limit) if is_prime(k))
`;

// Six workloads: enough for validate's paired verdict to normalize each base/expert pair by the
// machine's speed during it (validate.paired.minNormalizationWorkloads, default 5), so that a
// shared, noisy machine does not decide. Each pull request below changes at most two of them.
const BENCHMARKS = `import fastmath


def time_fib():
    return fastmath.fib(20)


def time_sum_of_squares():
    return fastmath.sum_of_squares(30000)


class TimePrimes:
    params = [2000, 6000]
    param_names = ["limit"]

    def time_count_primes(self, limit):
        return fastmath.count_primes(limit)


class TimeIsPrime:
    params = [100003, 1000003]
    param_names = ["n"]

    def time_is_prime(self, n):
        return fastmath.is_prime(n)
`;

const TESTS = `from fastmath import count_primes, fib, is_prime, sum_of_squares


def test_fib():
    assert [fib(i) for i in range(10)] == [0, 1, 1, 2, 3, 5, 8, 13, 21, 34]


def test_is_prime():
    assert [k for k in range(20) if is_prime(k)] == [2, 3, 5, 7, 11, 13, 17, 19]


def test_count_primes():
    assert count_primes(20) == 8


def test_sum_of_squares_is_an_int():
    assert isinstance(sum_of_squares(3), int)
`;

const ASV_CONF = `// asv configuration of the fastmath sample (asv reads JSON with comments)
{
  "version": 1,
  "project": "fastmath",
  "project_url": "https://example.invalid/fastmath",
  "repo": ".",
  "branches": ["main"],
  "environment_type": "existing",
  "benchmark_dir": "benchmarks",
  "results_dir": ".asv/results",
  "html_dir": ".asv/html",
}
`;

const PYPROJECT = (version: string, dependency: string | null) => `[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "fastmath"
version = "${version}"
description = "A small sample library for the perfmine demo"
requires-python = ">=3.8"
classifiers = ["Programming Language :: Python :: 3"]
${dependency ? `dependencies = ["${dependency}"]\n` : ''}
[tool.setuptools]
packages = ["fastmath"]
`;

const README = `# fastmath

A small sampel library of number helpers, used to demonstrate perfmine.
Run the benchmarks with asv and the tests with pytest.
`;

interface Step {
  readonly pr?: { number: number; title: string; body: string; style: 'merge' | 'squash'; branch: string; expect: SampleExpectation };
  readonly message?: string;
  readonly day: string;
  readonly files: Files;
}

/** The package's first lines when it depends on the demo's generated package (sample-index.ts): its 1.x API. */
const INIT_WITH_DEPENDENCY = (dependency: string) =>
  INIT.replace(
    '__version__ = "0.1.0"\n',
    `__version__ = "0.1.0"\n\n# ${dependency} 1.x names it isqrt_floor (2.0 renamed it)\nfrom ${dependency} import isqrt_floor as _isqrt_floor  # noqa: F401\n`,
  );

function steps(month: string, dependency: string | null): Step[] {
  const w = monthWindow(month);
  const start = new Date(w.start);
  const at = (dayOffset: number, hour = 10) => new Date(start.getTime() + dayOffset * 86_400_000 + hour * 3_600_000).toISOString();
  const core = (from: string, to: string) => (text: string) => {
    if (!text.includes(from)) throw new Error(`sample repo: pattern not found: ${from.slice(0, 40)}`);
    return text.replace(from, to);
  };
  let current = CORE_V1;
  const edit = (fn: (t: string) => string) => (current = fn(current));

  return [
    {
      message: 'Initial fastmath package with benchmarks and tests',
      day: at(-10),
      files: {
        'fastmath/__init__.py': dependency ? INIT_WITH_DEPENDENCY(dependency) : INIT,
        'fastmath/core.py': CORE_V1,
        'benchmarks/__init__.py': '',
        'benchmarks/bench_core.py': BENCHMARKS,
        'tests/test_core.py': TESTS,
        'asv.conf.json': ASV_CONF,
        'pyproject.toml': PYPROJECT('0.1.0', dependency),
        'README.md': README,
        '.gitignore': '.asv/\n*.egg-info/\n__pycache__/\n',
      },
    },
    {
      pr: {
        number: 101,
        title: 'PERF: compute fib() iteratively instead of by exponential recursion',
        body: 'fib(n) recomputes the same values exponentially many times, so `time_fib` is slow. Computing it iteratively makes it linear and much faster.',
        style: 'merge',
        branch: 'alice/fast-fib',
        expect: 'emitted',
      },
      day: at(2),
      files: {
        'fastmath/core.py': edit(
          core(
            '    if n < 2:\n        return n\n    return fib(n - 1) + fib(n - 2)\n',
            '    a, b = 0, 1\n    for _ in range(n):\n        a, b = b, a + b\n    return a\n',
          ),
        ),
      },
    },
    {
      pr: {
        number: 102,
        title: 'DOC: fix typos in README',
        body: 'Fixes a spelling mistake.',
        style: 'squash',
        branch: 'bob/typo',
        expect: 'filtered-message',
      },
      day: at(7),
      files: { 'README.md': README.replace('sampel', 'sample') },
    },
    {
      pr: {
        number: 103,
        title: 'Speed up is_prime',
        body: 'Tidy the comment in is_prime; this should make prime checks faster.',
        style: 'merge',
        branch: 'carol/prime-comment',
        expect: 'no-improvement',
      },
      day: at(11),
      files: {
        'fastmath/core.py': edit(
          core('    # try every divisor up to the square root\n', '    # trial division: every divisor up to sqrt(n)\n'),
        ),
      },
    },
    {
      pr: {
        number: 104,
        title: 'perf: faster sum_of_squares with a closed form',
        body: 'Replace the loop in sum_of_squares with the closed form, which is O(1).',
        style: 'squash',
        branch: 'dave/closed-form',
        expect: 'snapshot-mismatch',
      },
      day: at(16),
      files: {
        'fastmath/core.py': edit(
          core(
            '    total = 0\n    for i in range(1, n + 1):\n        total += i * i\n    return total\n',
            '    return n * (n + 1) * (2 * n + 1) // 6 + n\n',
          ),
        ),
      },
    },
    {
      pr: {
        number: 105,
        title: 'Optimize count_primes with a list of candidates',
        body: 'Build the list of candidates first and test each one in a single comprehension; should be quicker.',
        style: 'merge',
        branch: 'erin/count-list',
        expect: 'regression',
      },
      day: at(20),
      files: {
        // Same counts, but every divisor up to k is tried for a prime k (not up to its square
        // root): tens of times slower at 6000, a regression no noisy machine can hide.
        'fastmath/core.py': edit(
          core(
            '    return sum(1 for k in range(limit) if is_prime(k))\n',
            '    candidates = list(range(2, limit))\n    return len([k for k in candidates if all(k % d for d in range(2, k))])\n',
          ),
        ),
      },
    },
    {
      pr: {
        number: 106,
        title: 'MAINT: bump version to 0.2.0',
        body: '',
        style: 'squash',
        branch: 'frank/release',
        expect: 'filtered-message',
      },
      day: at(24),
      files: {
        'fastmath/__init__.py': (dependency ? INIT_WITH_DEPENDENCY(dependency) : INIT).replace('0.1.0', '0.2.0'),
        'pyproject.toml': PYPROJECT('0.2.0', dependency),
      },
    },
    {
      // About 2x on time_is_prime: half the candidate divisors (measured 1.96x at 100003 in the
      // base image's Python 3.11).
      pr: {
        number: 107,
        title: 'PERF: skip even divisors in is_prime',
        body: 'Once 2 is ruled out no even number can divide n, yet `is_prime` tries every one of them.',
        style: 'merge',
        branch: 'grace/odd-divisors',
        expect: 'emitted',
      },
      day: at(25),
      files: {
        'fastmath/core.py': edit(
          core(
            '    i = 2\n    while i * i <= n:\n        if n % i == 0:\n            return False\n        i += 1\n    return True\n',
            '    if n % 2 == 0:\n        return n == 2\n    i = 3\n    while i * i <= n:\n        if n % i == 0:\n            return False\n        i += 2\n    return True\n',
          ),
        ),
      },
    },
    {
      // About 1.3x on time_is_prime: the bound computed once instead of a multiplication per
      // candidate (measured 1.32x at 100003).
      pr: {
        number: 108,
        title: 'perf: bound the trial division in is_prime by isqrt(n)',
        body: '`is_prime` squares the candidate divisor at every step to compare it with n.',
        style: 'squash',
        branch: 'heidi/isqrt',
        expect: 'emitted',
      },
      day: at(26),
      files: {
        'fastmath/core.py': edit((t) =>
          core(
            '    i = 3\n    while i * i <= n:\n',
            '    limit = math.isqrt(n)\n    i = 3\n    while i <= limit:\n',
          )(core('"""Number helpers, written plainly."""\n', '"""Number helpers, written plainly."""\n\nimport math\n')(t)),
        ),
      },
    },
  ];
}

function git(cwd: string, args: readonly string[], date?: string): string {
  const env = { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_SYSTEM: '/dev/null' };
  if (date) Object.assign(env, { GIT_AUTHOR_DATE: date, GIT_COMMITTER_DATE: date });
  return execFileSync(
    'git',
    ['-c', 'user.name=perfmine demo', '-c', 'user.email=demo@example.invalid', '-c', 'commit.gpgsign=false', ...args],
    {
      cwd,
      env,
      encoding: 'utf8',
    },
  ).trim();
}

function writeFiles(root: string, files: Files): void {
  for (const [path, content] of Object.entries(files)) {
    const full = join(root, path);
    if (content === null) rmSync(full, { force: true });
    else {
      mkdirSync(dirname(full), { recursive: true });
      writeFileSync(full, content);
    }
  }
}

/**
 * Creates the sample repository at `dir` (which must not exist or be empty). The pull requests
 * are merged in `month` (default 2025-04); the initial commit lies ten days before it. With
 * `dependency` (the demo's: sample-index.ts), the package depends on that generated package and
 * imports its 1.x API.
 */
export function createSampleRepo(dir: string, month = '2025-04', options: { readonly dependency?: string | null } = {}): SampleRepo {
  mkdirSync(dir, { recursive: true });
  git(dir, ['init', '-q', '-b', 'main']);
  const prs: SamplePullRequest[] = [];
  for (const step of steps(month, options.dependency ?? null)) {
    if (!step.pr) {
      writeFiles(dir, step.files);
      git(dir, ['add', '-A']);
      git(dir, ['commit', '-q', '-m', step.message ?? 'commit'], step.day);
      continue;
    }
    const { pr } = step;
    const opened = new Date(Date.parse(step.day) - 2 * 3_600_000).toISOString();
    if (pr.style === 'merge') {
      git(dir, ['checkout', '-q', '-b', pr.branch]);
      writeFiles(dir, step.files);
      git(dir, ['add', '-A']);
      git(dir, ['commit', '-q', '-m', `${pr.title}\n\n${pr.body}`.trim()], opened);
      git(dir, ['checkout', '-q', 'main']);
      git(dir, ['merge', '-q', '--no-ff', pr.branch, '-m', `Merge pull request #${pr.number} from ${pr.branch}\n\n${pr.title}`], step.day);
      git(dir, ['branch', '-q', '-D', pr.branch]);
    } else {
      writeFiles(dir, step.files);
      git(dir, ['add', '-A']);
      git(dir, ['commit', '-q', '-m', `${pr.title} (#${pr.number})\n\n${pr.body}`.trim()], step.day);
    }
    prs.push({ number: pr.number, title: pr.title, style: pr.style, mergedAt: step.day, expect: pr.expect });
  }
  return { path: dir, defaultBranch: 'main', month, pullRequests: prs };
}
