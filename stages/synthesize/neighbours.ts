import type { VerifiedScript } from '../../cache/build-scripts.js';

/**
 * Which successful build scripts of the same repository to try for a commit, nearest in commit
 * date first. Pure.
 */
export interface Neighbour extends VerifiedScript {
  /** |commit date - target commit date| in milliseconds. */
  readonly distanceMs: number;
}

/**
 * The verified scripts of other commits ordered by distance in commit date to the target (ties:
 * the older commit first, then the later attempt), one per distinct script (its nearest
 * commit), at most `limit`.
 */
export function orderNeighbours(
  target: { readonly sha: string; readonly commitDate: string },
  verified: readonly VerifiedScript[],
  limit = 10,
): Neighbour[] {
  const t = Date.parse(target.commitDate);
  if (Number.isNaN(t)) throw new RangeError(`not a date: ${target.commitDate}`);
  const ranked = verified
    .filter((v) => v.sha !== target.sha)
    .map((v) => ({ ...v, distanceMs: Math.abs(Date.parse(v.commitDate) - t) }))
    .filter((v) => !Number.isNaN(v.distanceMs))
    .sort((a, b) => a.distanceMs - b.distanceMs || Date.parse(a.commitDate) - Date.parse(b.commitDate) || b.attemptId - a.attemptId);
  const seen = new Set<string>();
  const out: Neighbour[] = [];
  for (const v of ranked) {
    if (seen.has(v.scriptHash)) continue;
    seen.add(v.scriptHash);
    out.push(v);
    if (out.length >= limit) break;
  }
  return out;
}
