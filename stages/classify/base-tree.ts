import type { GitService } from '../../pipeline/services/git.js';

/**
 * Which of `candidates` occur as whole words in some text file of the commit `sha` of the clone
 * at `path` (one `git grep -w -F` over the commit's tree). Null when the clone does not have the
 * commit: the leak check then judges from the diff alone.
 */
export async function identifiersAtBase(git: GitService, path: string, sha: string, candidates: readonly string[], signal?: AbortSignal): Promise<Set<string> | null> {
  const options = signal ? { signal } : {};
  const tree = await git.run(path, ['cat-file', '-e', `${sha}^{tree}`], { okCodes: [1, 128], ...options });
  if (tree.code !== 0) return null;
  if (candidates.length === 0) return new Set();
  // -I: text files only; -h -o: only the matched words; exit 1: none matched.
  const found = await git.run(path, ['grep', '-I', '-h', '-o', '-w', '-F', '-f', '-', sha], { input: `${candidates.join('\n')}\n`, okCodes: [1], ...options });
  return new Set(found.stdout.toString('utf8').split('\n').filter((w) => w !== ''));
}
