import { commitKey } from '../../pipeline/concepts/keys.js';
import type { ClassifyOutput } from '../../pipeline/concepts/records/classify-output.js';

/** One commit to build: the base commit of one or more candidates. */
export interface CommitCandidate {
  readonly repo: string;
  readonly sha: string;
  /** The earliest merge among its candidates: the instant the item belongs to (windows). */
  readonly at: string;
  readonly prs: readonly number[];
}

/**
 * Candidates grouped by base commit, ordered by repository then by earliest merge (so that,
 * built in order, each commit can reuse the scripts of the ones before it). Pure.
 */
export function groupCandidates(candidates: readonly ClassifyOutput[]): CommitCandidate[] {
  const groups = new Map<string, { repo: string; sha: string; at: string; prs: number[] }>();
  for (const c of candidates) {
    const key = commitKey(c.repo, c.baseSha);
    const g = groups.get(key);
    if (!g) groups.set(key, { repo: c.repo, sha: c.baseSha, at: c.mergedAt, prs: [c.number] });
    else {
      if (Date.parse(c.mergedAt) < Date.parse(g.at)) g.at = c.mergedAt;
      g.prs.push(c.number);
    }
  }
  return [...groups.values()]
    .map((g) => ({ ...g, prs: [...new Set(g.prs)].sort((a, b) => a - b) }))
    .sort((a, b) => a.repo.localeCompare(b.repo) || Date.parse(a.at) - Date.parse(b.at) || a.sha.localeCompare(b.sha));
}
