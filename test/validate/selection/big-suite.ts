/**
 * A generated library and asv suite for workload selection: 50 modules of 10 functions (500
 * workloads, one benchmark per function), every function scaling its result by `common.scale`
 * with the module-level constant `common.FACTOR`. Patches: two functions changed; the constant
 * changed; the function every workload runs changed.
 */
export const MODULES = 50;
export const FUNCTIONS = 10;

const mod = (m: number) => `m${String(m).padStart(2, '0')}`;

function moduleSource(m: number): string {
  const fns = Array.from(
    { length: FUNCTIONS },
    (_, f) =>
      `def f${f}(n=${200 + 10 * f}):\n    total = 0\n    for i in range(n):\n        total += (i * ${m + f + 1}) % 7\n    return scale(total)\n`,
  );
  return `from .common import scale\n\n\n${fns.join('\n\n')}`;
}

const COMMON = 'FACTOR = 3\n\n\ndef scale(x):\n    return x * FACTOR\n';

export function bigSuiteFiles(): Record<string, string> {
  const files: Record<string, string> = {
    'asv.conf.json': '{"version": 1, "benchmark_dir": "benchmarks"}\n',
    'biglib/__init__.py': '',
    'biglib/common.py': COMMON,
    'benchmarks/__init__.py': '',
  };
  for (let m = 0; m < MODULES; m++) {
    files[`biglib/${mod(m)}.py`] = moduleSource(m);
    files[`benchmarks/bench_${mod(m)}.py`] =
      `from biglib import ${mod(m)}\n\n\n${Array.from({ length: FUNCTIONS }, (_, f) => `def time_f${f}():\n    ${mod(m)}.f${f}()\n`).join('\n\n')}`;
  }
  return files;
}

/** A unified diff changing line `line` (1-based) of `file` from `before` to `after`. */
function lineDiff(file: string, line: number, before: string, after: string): string {
  return `diff --git a/${file} b/${file}\n--- a/${file}\n+++ b/${file}\n@@ -${line},1 +${line},1 @@\n-${before}\n+${after}\n`;
}

/** The line of `total += ...` in function f of module m (see moduleSource). */
function loopLine(m: number, f: number): { line: number; text: string } {
  return { line: 4 + f * 7 + 3, text: `        total += (i * ${m + f + 1}) % 7` };
}

/** Two functions made to do less: m07.f3 and m21.f8. */
export function twoFunctionsPatch(): { diff: string; files: Record<string, string>; expected: string[] } {
  const files = bigSuiteFiles();
  let diff = '';
  for (const [m, f] of [
    [7, 3],
    [21, 8],
  ] as const) {
    const { line, text } = loopLine(m, f);
    const after = text.replace('(i * ', '(i + ');
    const path = `biglib/${mod(m)}.py`;
    const lines = files[path]!.split('\n');
    if (lines[line - 1] !== text) throw new Error(`big suite: line ${line} of ${path} is ${JSON.stringify(lines[line - 1])}`);
    lines[line - 1] = after;
    files[path] = lines.join('\n');
    diff += lineDiff(path, line, text, after);
  }
  return { diff, files, expected: [`bench_m07.time_f3`, `bench_m21.time_f8`] };
}

export function constantPatch(): string {
  return lineDiff('biglib/common.py', 1, 'FACTOR = 3', 'FACTOR = 4');
}

export function everyWorkloadPatch(): string {
  return lineDiff('biglib/common.py', 5, '    return x * FACTOR', '    return FACTOR * x');
}
