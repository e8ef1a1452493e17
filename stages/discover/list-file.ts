/**
 * Repository lists (pure): one `owner/name` a line (a GitHub URL also works; `#` starts a
 * comment), or a TSV whose header has a `repo` column (the format of
 * ../shared/reference/formulacode-repos.tsv).
 */
import { dedupeCandidates, REPO_NAME_RE, type RepositoryCandidate } from './candidate.js';

export interface ParsedList {
  readonly candidates: RepositoryCandidate[];
  /** `line N: problem` for each line that is not a repository. */
  readonly errors: string[];
}

/** `owner/name` from `owner/name`, `https://github.com/owner/name(.git)`, `github.com/owner/name/...`. */
export function normalizeRepoName(text: string): string | null {
  const t = text.trim();
  if (REPO_NAME_RE.test(t)) return t.replace(/\.git$/, '');
  const m = /^(?:https?:\/\/)?(?:www\.)?github\.com\/([A-Za-z0-9_.-]+)\/([A-Za-z0-9_.-]+?)(?:\.git)?(?:[/?#].*)?$/.exec(t);
  return m ? `${m[1]}/${m[2]}` : null;
}

export function parseRepoList(text: string): ParsedList {
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  const errors: string[] = [];
  const candidates: RepositoryCandidate[] = [];
  const firstIndex = lines.findIndex((l) => l.trim() !== '' && !l.trim().startsWith('#'));
  const first = firstIndex >= 0 ? lines[firstIndex]! : '';
  const header = first.includes('\t') ? first.split('\t').map((h) => h.trim().toLowerCase()) : null;
  const column = header ? header.findIndex((h) => h === 'repo' || h === 'repository' || h === 'repo_name' || h === 'full_name') : -1;
  if (header && column < 0 && normalizeRepoName(first.split('\t')[0] ?? '') === null) {
    return { candidates: [], errors: [`line ${firstIndex + 1}: a TSV needs a "repo" column (found: ${header.join(', ')})`] };
  }
  lines.forEach((raw, i) => {
    if (header && column >= 0 && i === firstIndex) return;
    const line = raw.replace(/\s+#.*$/, '').trim();
    if (line === '' || line.startsWith('#')) return;
    const cell = header ? (line.split('\t')[Math.max(column, 0)] ?? '') : (line.split(/\s+/)[0] ?? '');
    const name = normalizeRepoName(cell);
    if (name === null) errors.push(`line ${i + 1}: not a repository: ${JSON.stringify(cell.slice(0, 100))}`);
    else candidates.push({ name, asvConfigPath: null, via: 'list' });
  });
  return { candidates: dedupeCandidates(candidates), errors };
}
