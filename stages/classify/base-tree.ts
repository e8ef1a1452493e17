import type { GitService } from '../../pipeline/services/git.js';
import { identifiersIn } from '../../pipeline/concepts/leak-check.js';

/**
 * Which of `candidates` the commit `sha` of the clone at `path` holds: as a whole word in some
 * text file (one `git grep -o` of the words of the commit's tree), or as a directory or module name of
 * one of its paths (`git ls-tree -r`). Null when the clone does not have the commit: the leak
 * check then judges from the diff alone.
 */
export async function identifiersAtBase(
  git: GitService,
  path: string,
  sha: string,
  candidates: readonly string[],
  signal?: AbortSignal,
): Promise<Set<string> | null> {
  const options = signal ? { signal } : {};
  const tree = await git.run(path, ['cat-file', '-e', `${sha}^{tree}`], { okCodes: [1, 128], ...options });
  if (tree.code !== 0) return null;
  if (candidates.length === 0) return new Set();
  // Every run of word characters of the tree's text files (-I), matched against the candidates
  // here: the same answer as `git grep -w -F -f <candidates>` (a candidate is a whole word), but
  // one regular expression instead of a fixed string per candidate, which git matches slowly
  // with -w -o (192 candidates over xarray's tree: 52 s of CPU; this: 0.4 s). Exit 1: no text.
  const found = await git.run(path, ['grep', '-I', '-h', '-o', '-E', '[A-Za-z0-9_]+', sha], { okCodes: [1], ...options });
  const wanted = new Set(candidates);
  const present = new Set<string>();
  for (const word of found.stdout.toString('utf8').split('\n')) if (wanted.has(word)) present.add(word);
  for (const entry of await git.lsTree(path, sha, { recursive: true })) {
    for (const segment of entry.path.split('/'))
      for (const id of identifiersIn(segment.replace(/\.[^.]*$/, ''))) if (wanted.has(id)) present.add(id);
  }
  return present;
}
