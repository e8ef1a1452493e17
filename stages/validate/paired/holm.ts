/**
 * Holm's step-down procedure: which of m hypotheses to reject so that the chance of rejecting any
 * true one stays at most `alpha`, whatever their dependence. Sorted ascending, the k-th smallest
 * p-value (k from 1) is rejected while p ≤ alpha / (m − k + 1); the first that is not stops it.
 * Null p-values (no test) are neither counted nor rejected. Pure.
 */
export function holmRejections(pValues: readonly (number | null)[], alpha: number): boolean[] {
  const tested = pValues.flatMap((p, i) => (p === null || Number.isNaN(p) ? [] : [{ p, i }])).sort((a, b) => a.p - b.p || a.i - b.i);
  const out = pValues.map(() => false);
  const m = tested.length;
  for (let k = 0; k < m; k++) {
    if (tested[k]!.p > alpha / (m - k)) break;
    out[tested[k]!.i] = true;
  }
  return out;
}
