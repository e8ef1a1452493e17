/**
 * The power suite: a library whose pull request makes four jobs exactly 1.1x, 1.2x, 1.5x and 2x
 * faster by doing proportionally less of the same work (iterations of constant cost: small ints
 * only), four others untouched, and an asv suite timing each job. Used by the power test and by
 * benchmark 6.
 */
export const POWER_SPEEDUPS: Readonly<Record<string, number>> = { a: 1.1, b: 1.2, c: 1.5, d: 2 };
export const POWER_UNTOUCHED = ['u0', 'u1', 'u2', 'u3'] as const;
const WORK = 60_000;

export function powerLibrary(expert: boolean): string {
  const body = Object.entries(POWER_SPEEDUPS)
    .map(([name, s]) => `def job_${name}():\n    return work(${expert ? Math.round(WORK / s) : WORK})\n`)
    .join('\n');
  const others = POWER_UNTOUCHED.map((u, i) => `def job_${u}():\n    return work(${WORK + 7_000 * i})\n`).join('\n');
  return `def work(n):\n    total = 0\n    for i in range(n):\n        total += i % 7\n    return total\n\n${body}\n${others}`;
}

export const POWER_SUITE = `import powerlib\n\n${[...Object.keys(POWER_SPEEDUPS), ...POWER_UNTOUCHED].map((n) => `def time_${n}():\n    powerlib.job_${n}()\n`).join('\n')}`;

/** The repository's files at the base (false) or after the pull request (true). */
export function powerFiles(expert: boolean): Record<string, string> {
  return {
    'asv.conf.json': '{"version": 1, "benchmark_dir": "benchmarks"}\n',
    'benchmarks/__init__.py': '',
    'benchmarks/bench.py': POWER_SUITE,
    'powerlib.py': powerLibrary(expert),
  };
}
