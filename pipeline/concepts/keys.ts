/**
 * Item keys: how the ledger names a unit of work. A pull request is `owner/name#number` (collect,
 * filter, classify, validate, emit); a commit to build is `owner/name@sha` (synthesize). Pure.
 */

/** `owner/name#number`. */
export function prKey(repo: string, number: number): string {
  return `${repo}#${number}`;
}

export function parsePrKey(key: string): { repo: string; number: number } | null {
  const m = /^([^/#@\s]+\/[^/#@\s]+)#(\d+)$/.exec(key);
  return m ? { repo: m[1]!, number: Number(m[2]) } : null;
}

/** `owner/name@sha`. */
export function commitKey(repo: string, sha: string): string {
  return `${repo}@${sha}`;
}

export function parseCommitKey(key: string): { repo: string; sha: string } | null {
  const m = /^([A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+)@([0-9a-f]{7,64})$/.exec(key);
  return m ? { repo: m[1]!, sha: m[2]! } : null;
}
