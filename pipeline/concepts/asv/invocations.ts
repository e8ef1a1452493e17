import { computeStats } from './compute-stats.js';
import type { ResultSet } from './result-set.js';
import type { Workload } from './workloads.js';

/**
 * Per-invocation result sets. perfmine keeps one results file per asv invocation; asv's
 * `--append-samples` instead appends each invocation's samples to one file, in time order. These
 * pure functions go between the two: split an appended file back into its invocations, and pool
 * invocations into one set as `--append-samples` would have written it (asv's verdict is made on
 * pooled samples).
 */

/** A workload's stored result recomputed from samples, as asv_runner stores it (median + stats). */
function fromSamples(w: Workload, samples: readonly number[]): Workload {
  const computed = computeStats(samples, w.stats?.number ?? 1);
  if (computed === null) return { ...w, samples: null };
  return { ...w, value: computed.result, stats: computed.stats, samples: [...samples] };
}

/**
 * Splits a result set written with `--append-samples` into its invocations: invocation i holds
 * samples [i*n, (i+1)*n) of every workload, with its median and statistics recomputed. A
 * workload without samples, or whose sample count is not a multiple of n, is a failure (null)
 * in every part, so that it never looks measured when it was not.
 */
export function splitAppendedSamples(set: ResultSet, samplesPerInvocation: number): ResultSet[] {
  if (!Number.isInteger(samplesPerInvocation) || samplesPerInvocation < 1) {
    throw new RangeError(`samples per invocation must be a positive integer, got ${samplesPerInvocation}`);
  }
  const counts = set.workloads.map((w) =>
    w.samples && w.samples.length % samplesPerInvocation === 0 ? w.samples.length / samplesPerInvocation : 0,
  );
  const parts = Math.max(0, ...counts);
  return Array.from({ length: parts }, (_, i): ResultSet => ({
    ...set,
    source: `${set.source}#${i + 1}`,
    workloads: set.workloads.map((w, j) => {
      if (counts[j] !== parts || !w.samples) return { ...w, value: null, stats: null, samples: null };
      return fromSamples(w, w.samples.slice(i * samplesPerInvocation, (i + 1) * samplesPerInvocation));
    }),
  }));
}

/** A usable timing: a finite number (not a failure, not a skip). */
function measured(w: Workload | undefined): w is Workload & { value: number } {
  return w !== undefined && typeof w.value === 'number' && Number.isFinite(w.value);
}

/**
 * Pools invocations into one set, as `asv run --append-samples` accumulates them: per workload,
 * the samples of every invocation that measured it, in order, and the median and statistics of
 * that pool. A workload no invocation measured keeps the last invocation's entry (failed or
 * skipped); one measured without recorded samples keeps the last measured entry (asv's
 * last-file-wins rule). Workloads are listed in first-seen order; the source names every file.
 */
export function poolInvocations(sets: readonly ResultSet[]): ResultSet {
  const last = sets.at(-1);
  if (!last) throw new RangeError('poolInvocations: no result sets');
  const order: string[] = [];
  const byName = new Map<string, Workload[]>();
  for (const set of sets) {
    for (const w of set.workloads) {
      const list = byName.get(w.name);
      if (list) list.push(w);
      else {
        byName.set(w.name, [w]);
        order.push(w.name);
      }
    }
  }
  const workloads = order.map((name): Workload => {
    const all = byName.get(name)!;
    const ok = all.filter(measured);
    const latest = all.at(-1)!;
    if (ok.length === 0) return latest;
    if (ok.some((w) => !w.samples || w.samples.length === 0)) return ok.at(-1)!;
    return fromSamples(
      ok.at(-1)!,
      ok.flatMap((w) => w.samples!),
    );
  });
  return { source: sets.map((s) => s.source).join(' + '), commitHash: last.commitHash, machineEnv: last.machineEnv, workloads };
}
