/** Repository filters (pure): each rejection has a stable reason code and a sentence. */
import type { PythonSupport } from './python-version.js';

export interface RepositoryFacts {
  readonly stars: number;
  readonly fork: boolean;
  readonly archived: boolean;
  readonly disabled: boolean;
  readonly pushedAt: string | null;
}

export interface FilterRules {
  readonly minStars: number;
  readonly maxInactiveYears: number;
  readonly minPython: string;
}

export type Verdict = { readonly keep: true } | { readonly keep: false; readonly reason: string; readonly detail: string };

const KEEP: Verdict = { keep: true };

/** Filters that need only the repository's metadata, cheapest first. `asOf`: the window's end. */
export function judgeMetadata(facts: RepositoryFacts, rules: FilterRules, asOf: Date): Verdict {
  if (facts.disabled) return { keep: false, reason: 'repo-disabled', detail: 'GitHub has disabled the repository' };
  if (facts.archived) return { keep: false, reason: 'repo-archived', detail: 'the repository is archived (read-only)' };
  if (facts.fork) return { keep: false, reason: 'repo-fork', detail: 'the repository is a fork' };
  if (facts.stars < rules.minStars) return { keep: false, reason: 'too-few-stars', detail: `${facts.stars} stars < ${rules.minStars}` };
  const cutoff = new Date(asOf);
  cutoff.setUTCMonth(cutoff.getUTCMonth() - Math.round(rules.maxInactiveYears * 12));
  if (facts.pushedAt === null || Date.parse(facts.pushedAt) < cutoff.getTime()) {
    return {
      keep: false,
      reason: 'inactive',
      detail: `no push since ${facts.pushedAt ?? 'ever'} (cutoff ${cutoff.toISOString().slice(0, 10)})`,
    };
  }
  return KEEP;
}

/** The Python version filter: only a clear "no" drops; unknown support passes. */
export function judgePython(support: PythonSupport, rules: FilterRules): Verdict {
  if (support.supported === false) {
    return { keep: false, reason: 'python-too-old', detail: `${support.evidence ?? 'metadata'} excludes Python >= ${rules.minPython}` };
  }
  return KEEP;
}
