import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * A generated Python project with an asv suite, base and expert versions, for the snapshot helper.
 * The expert changes one return value, nudges a float by 1e-13 (equal within 1e-9), and breaks
 * one benchmark.
 */

const CONFIG = `{
  // asv configs carry comments and trailing commas
  "version": 1,
  "project": "toy",
  "benchmark_dir": "bench",
  "results_dir": ".asv/results", /* not read by the helper */
}
`;

function toyModule(expert: boolean): string {
  return `
def total(xs):
    return sum(xs)${expert ? ' + 1' : ''}

def mean(xs):
    return sum(xs) / len(xs)${expert ? ' * (1 + 1e-13)' : ''}

def fragile():
    ${expert ? 'raise ValueError("broken by the patch")' : 'return 7'}
`;
}

const BENCH_FUNCS = `
import random
import time
import toy

def time_total():
    return toy.total(range(100))

def track_mean():
    return toy.mean([1.0, 2.0, 4.0])

def time_fragile():
    return toy.fragile()

def time_nan():
    return float("nan")

def time_identity():
    return object()

def time_seeded_random():
    return random.random()

def time_clock():
    return time.perf_counter_ns()

def time_raises_on_base():
    raise RuntimeError("always")

def helper_not_a_benchmark():
    return 1
`;

const BENCH_CLASSES = `
import toy

class Suite:
    params = [[1, 3], ["a"]]
    param_names = ["n", "s"]

    def setup(self, n, s):
        if n == 3 and s == "b":
            raise NotImplementedError
        self.data = list(range(n))

    def time_len(self, n, s):
        return {"n": len(self.data), "s": s, "items": tuple(self.data)}


class Skipping:
    params = [1, 2]

    def setup(self, n):
        if n == 2:
            raise NotImplementedError

    def time_n(self, n):
        return n * 10


class Cached:
    def setup_cache(self):
        return {"base": 40}

    def track_cached(self, cache):
        return cache["base"] + 2
`;

const TESTS = `
import toy

def test_total():
    assert toy.total(range(3)) == 3

def test_mean():
    assert abs(toy.mean([1.0, 2.0]) - 1.5) < 1e-9
`;

export interface ToyOptions {
  readonly expert?: boolean;
  /** Add a benchmark module that cannot be imported. */
  readonly brokenImport?: boolean;
}

/** The project's files by relative path. */
export function toyProjectFiles(options: ToyOptions = {}): Record<string, string> {
  const files: Record<string, string> = {
    'asv.conf.json': CONFIG,
    'toy.py': toyModule(options.expert ?? false),
    'bench/__init__.py': '',
    'bench/funcs.py': BENCH_FUNCS,
    'bench/sub/__init__.py': '',
    'bench/sub/classes.py': BENCH_CLASSES,
    'tests/test_toy.py': TESTS,
  };
  if (options.brokenImport) files['bench/needs_network.py'] = 'raise ImportError("this suite downloads data at import time")\n';
  return files;
}

export function writeToyProject(dir: string, options: ToyOptions = {}): void {
  for (const [path, text] of Object.entries(toyProjectFiles(options))) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
}
