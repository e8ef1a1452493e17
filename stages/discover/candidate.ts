/** A repository a discovery source proposes, before enrichment. */
export interface RepositoryCandidate {
  /** `owner/name` as the source spells it. */
  readonly name: string;
  /** Where the source saw an asv config, when it says. */
  readonly asvConfigPath: string | null;
  readonly via: 'bigquery' | 'code-search' | 'list' | 'cli';
}

export const REPO_NAME_RE = /^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/;

/** Keeps the first candidate of each name (case-insensitive), preferring one that knows its asv config path. */
export function dedupeCandidates(candidates: readonly RepositoryCandidate[]): RepositoryCandidate[] {
  const out = new Map<string, RepositoryCandidate>();
  for (const c of candidates) {
    const key = c.name.toLowerCase();
    const prev = out.get(key);
    if (!prev) out.set(key, c);
    else if (prev.asvConfigPath === null && c.asvConfigPath !== null) out.set(key, { ...prev, asvConfigPath: c.asvConfigPath });
  }
  return [...out.values()];
}
