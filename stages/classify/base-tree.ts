import type { GitService } from '../../pipeline/services/git.js';
import { identifiersIn } from '../../pipeline/concepts/leak-check.js';

/**
 * Which of `candidates` the commit `sha` of the clone at `path` holds: as a whole word in some
 * text file (one `git grep -w -F` over the commit's tree), or as a directory or module name of
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
  // -I: text files only; -h -o: only the matched words; exit 1: none matched.
  const found = await git.run(path, ['grep', '-I', '-h', '-o', '-w', '-F', '-f', '-', sha], {
    input: `${candidates.join('\n')}\n`,
    okCodes: [1],
    ...options,
  });
  const present = new Set(
    found.stdout
      .toString('utf8')
      .split('\n')
      .filter((w) => w !== ''),
  );
  const wanted = new Set(candidates);
  for (const entry of await git.lsTree(path, sha, { recursive: true })) {
    for (const segment of entry.path.split('/'))
      for (const id of identifiersIn(segment.replace(/\.[^.]*$/, ''))) if (wanted.has(id)) present.add(id);
  }
  return present;
}
