import type { BenchmarkResult, ResultsFile, ResultStats } from './results.js';

/**
 * Workloads: one per benchmark and parameter combination, named as asv names them in
 * `asv compare`: `mod.Class.time_x` or `mod.Class.time_x(10, 'a')`.
 */

/** One workload's measurement in one results file. */
export interface Workload {
  /** `key` plus the parameter values, e.g. `bench.Suite.time_x(10, 'a')`. */
  readonly name: string;
  /** The benchmark name in results and benchmarks.json. */
  readonly key: string;
  /** This combination's parameter values (Python repr strings). */
  readonly paramValues: readonly string[];
  /** The stored result: seconds, bytes or a tracked value; `null` failed, NaN skipped. */
  readonly value: number | null;
  readonly stats: ResultStats | null;
  readonly samples: readonly number[] | null;
  readonly version: string | null;
}

/** The cartesian product of the parameter lists, last parameter varying fastest (itertools.product). */
export function cartesianProduct(lists: readonly (readonly string[])[]): string[][] {
  let out: string[][] = [[]];
  for (const list of lists) {
    const next: string[][] = [];
    for (const prefix of out) for (const value of list) next.push([...prefix, value]);
    out = next;
  }
  return out;
}

/** The workload name of a benchmark key and one combination of parameter values. */
export function workloadName(key: string, paramValues: readonly string[]): string {
  return paramValues.length === 0 ? key : `${key}(${paramValues.join(', ')})`;
}

/** One benchmark row unrolled into its workloads, in cartesian-product order. */
export function unrollBenchmark(result: BenchmarkResult): Workload[] {
  return cartesianProduct(result.params).map((combo, j) => ({
    name: workloadName(result.key, combo),
    key: result.key,
    paramValues: combo,
    value: result.values[j] ?? null,
    stats: result.stats[j] ?? null,
    samples: result.samples[j] ?? null,
    version: result.version,
  }));
}

/** Every workload of a results file, benchmark by benchmark in file order. */
export function unrollResults(file: ResultsFile): Workload[] {
  return file.benchmarks.flatMap(unrollBenchmark);
}

/** Where a workload sits in the benchmark suite: module, class (if any), function. */
export interface WorkloadHierarchy {
  /** Dotted module path, e.g. `benchmarks.bench_core`. */
  readonly module: string;
  /** The class holding the benchmark method, or null for a module-level function. */
  readonly className: string | null;
  /** The benchmark function or method, e.g. `time_add`. */
  readonly function: string;
  /** The parameter part without parentheses, or null when unparameterized. */
  readonly params: string | null;
}

/**
 * Splits a workload name into module / class / function. The last dotted component (before the
 * parameters) is the function; the one before it is a class when it starts with an uppercase
 * letter (Python's class naming convention, which asv suites follow), else part of the module.
 */
export function workloadHierarchy(name: string): WorkloadHierarchy {
  const open = name.indexOf('(');
  const base = open < 0 ? name : name.slice(0, open);
  const params = open < 0 ? null : name.slice(open + 1, name.endsWith(')') ? -1 : undefined);
  const parts = base.split('.');
  const fn = parts.pop() ?? '';
  let className: string | null = null;
  if (parts.length >= 2 && /^[A-Z]/.test(parts[parts.length - 1]!)) className = parts.pop()!;
  return { module: parts.join('.'), className, function: fn, params };
}

/** The grouping levels of FormulaCode's stratified advantage. */
export type HierarchyLevel = 'module' | 'class' | 'function';

/**
 * The group a workload belongs to at a level: the module path; the class path (`module.Class`,
 * or the module for module-level functions); the function path (`module.Class.function`,
 * parameters dropped, so all parameter combinations of a benchmark form one group).
 */
export function hierarchyKey(name: string, level: HierarchyLevel): string {
  const h = workloadHierarchy(name);
  const classPath = h.className === null ? h.module : h.module === '' ? h.className : `${h.module}.${h.className}`;
  if (level === 'module') return h.module;
  if (level === 'class') return classPath;
  return classPath === '' ? h.function : `${classPath}.${h.function}`;
}
