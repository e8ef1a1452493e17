import type { BenchmarkInfo } from './benchmarks.js';
import { decideWorkload, DEFAULT_DECIDE_OPTIONS, type DecideOptions, type Measurement, type Verdict } from './compare.js';
import type { ResultsFile } from './results.js';
import { unrollResults, type Workload } from './workloads.js';

/**
 * The two sides of a comparison. A side is a list of result sets, one per asv invocation (one
 * results file each), so that several invocations per side can be compared later; asv's own
 * `compare` keeps, for a workload present in several files of a side, the last one read.
 */

/** The workloads of one results file (one asv invocation). */
export interface ResultSet {
  readonly source: string;
  readonly commitHash: string;
  /** `machine/env`, asv's key beside the workload name. */
  readonly machineEnv: string;
  readonly workloads: readonly Workload[];
}

/** A results file as a result set. */
export function resultSetOf(file: ResultsFile): ResultSet {
  return {
    source: file.source,
    commitHash: file.commitHash,
    machineEnv: `${file.machine ?? ''}/${file.envName}`,
    workloads: unrollResults(file),
  };
}

/** One row of a comparison: a workload (in one machine/env) and asv's verdict on it. */
export interface CompareRow {
  readonly name: string;
  readonly key: string;
  readonly machineEnv: string;
  readonly unit: string | null;
  readonly before: Measurement | undefined;
  readonly after: Measurement | undefined;
  readonly verdict: Verdict;
}

export interface CompareReport {
  readonly baseCommit: string;
  readonly headCommit: string;
  /** More than one machine/env among the rows: asv then appends `[machine/env]` to names. */
  readonly multipleEnvironments: boolean;
  /** Rows sorted by (name, machine/env), as asv sorts them. */
  readonly rows: readonly CompareRow[];
}

export interface CompareSidesOptions extends DecideOptions {
  /** benchmarks.json, for units; without it values print without units, as asv does. */
  readonly benchmarks: ReadonlyMap<string, BenchmarkInfo> | null;
}

interface Keyed {
  readonly name: string;
  readonly key: string;
  readonly machineEnv: string;
  readonly measurement: Measurement;
}

/** A side's workloads by (name, machine/env); a later result set replaces an earlier one (asv's rule). */
export function mergeSide(sets: readonly ResultSet[]): Map<string, Keyed> {
  const out = new Map<string, Keyed>();
  for (const set of sets) {
    for (const w of set.workloads) {
      out.set(rowKey(w.name, set.machineEnv), {
        name: w.name,
        key: w.key,
        machineEnv: set.machineEnv,
        measurement: { value: w.value, stats: w.stats, samples: w.samples, version: w.version },
      });
    }
  }
  return out;
}

function rowKey(name: string, machineEnv: string): string {
  return `${name}\u0000${machineEnv}`;
}

/** Compares strings by Unicode code point, as Python sorts them. */
export function compareCodePoints(a: string, b: string): number {
  const ia = a[Symbol.iterator]();
  const ib = b[Symbol.iterator]();
  for (;;) {
    const x = ia.next();
    const y = ib.next();
    if (x.done || y.done) return x.done && y.done ? 0 : x.done ? -1 : 1;
    const cx = x.value.codePointAt(0)!;
    const cy = y.value.codePointAt(0)!;
    if (cx !== cy) return cx - cy;
  }
}

/**
 * asv compare over two sides: every workload present on either side, sorted by
 * (name, machine/env), each with asv's verdict.
 */
export function compareResultSets(
  base: readonly ResultSet[],
  head: readonly ResultSet[],
  options: Partial<CompareSidesOptions> = {},
): CompareReport {
  const decide: DecideOptions = {
    factor: options.factor ?? DEFAULT_DECIDE_OPTIONS.factor,
    useStats: options.useStats ?? DEFAULT_DECIDE_OPTIONS.useStats,
    pThreshold: options.pThreshold ?? DEFAULT_DECIDE_OPTIONS.pThreshold,
  };
  const benchmarks = options.benchmarks ?? null;
  const before = mergeSide(base);
  const after = mergeSide(head);
  const keys = [...new Set([...before.keys(), ...after.keys()])];
  const entries = keys.map((k) => (before.get(k) ?? after.get(k))!);
  entries.sort((x, y) => compareCodePoints(x.name, y.name) || compareCodePoints(x.machineEnv, y.machineEnv));
  const rows = entries.map((e): CompareRow => {
    const k = rowKey(e.name, e.machineEnv);
    const b = before.get(k)?.measurement;
    const a = after.get(k)?.measurement;
    return {
      name: e.name,
      key: e.key,
      machineEnv: e.machineEnv,
      unit: benchmarks?.get(e.key)?.unit ?? null,
      before: b,
      after: a,
      verdict: decideWorkload(b, a, decide),
    };
  });
  const envs = new Set([...base, ...head].map((s) => s.machineEnv));
  return {
    baseCommit: base.at(-1)?.commitHash ?? '',
    headCommit: head.at(-1)?.commitHash ?? '',
    multipleEnvironments: envs.size > 1,
    rows,
  };
}
