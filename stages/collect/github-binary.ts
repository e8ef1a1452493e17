/**
 * GitHub renders a binary change as `Binary files a/x and b/x differ`, which `git apply` refuses
 * ("cannot apply binary patch without full index line"): the stored diff of such a pull request
 * could not be applied by validate. Here each such section is rewritten as the binary patch git
 * itself would write, from the file's bytes at the base and merge commits (the contents API), so
 * that the diff applies byte for byte. A file whose bytes cannot be read stays as GitHub wrote it,
 * and the diff is reported incomplete.
 */
import { createHash } from 'node:crypto';
import { binarySection, parsePatch } from '../../pipeline/services/git-parse.js';
import type { GitHubService } from '../../pipeline/services/github.js';

/** git's blob id of some bytes. */
export function gitBlobSha(content: Uint8Array): string {
  return createHash('sha1').update(`blob ${content.length}\0`).update(content).digest('hex');
}

/**
 * The header of a placeholder section with a full `index` line (the blob ids of both sides),
 * ready for `binarySection`. Pure.
 */
export function fullIndexHeader(section: string, oldContent: Uint8Array | null, newContent: Uint8Array | null): string {
  const lines = section.split('\n');
  const end = lines.findIndex((l) => l.startsWith('Binary files ') || l.startsWith('--- '));
  const header = lines.slice(0, end < 0 ? lines.length : end).filter((l) => l !== '');
  const zero = '0'.repeat(40);
  const ids = `${oldContent ? gitBlobSha(oldContent) : zero}..${newContent ? gitBlobSha(newContent) : zero}`;
  const at = header.findIndex((l) => l.startsWith('index '));
  if (at >= 0) {
    const mode = / (\d{6})$/.exec(header[at]!)?.[1];
    header[at] = `index ${ids}${mode ? ` ${mode}` : ''}`;
  } else {
    const addedOrRemoved = header.some((l) => l.startsWith('new file mode') || l.startsWith('deleted file mode'));
    header.push(`index ${ids}${addedOrRemoved ? '' : ' 100644'}`);
  }
  return header.join('\n');
}

export interface CompletedDiff {
  readonly diff: string;
  /** False when some binary change could not be read and stays a placeholder. */
  readonly complete: boolean;
  /** Binary changes rewritten in full. */
  readonly rewritten: number;
}

export async function completeBinaryDiff(
  gh: GitHubService,
  repo: string,
  baseSha: string,
  mergeSha: string,
  diff: string,
): Promise<CompletedDiff> {
  const start = diff.indexOf('diff --git ');
  if (start < 0 || !/^Binary files .* differ$/m.test(diff)) return { diff, complete: true, rewritten: 0 };
  let complete = true;
  let rewritten = 0;
  const parts: string[] = [diff.slice(0, start)];
  for (const section of parsePatch(diff.slice(start))) {
    if (!/^Binary files .* differ$/m.test(section.text)) {
      parts.push(section.text);
      continue;
    }
    const oldContent = section.status === 'added' ? null : await gh.getFileBytes(repo, section.previousPath ?? section.path, baseSha);
    const newContent = section.status === 'removed' ? null : await gh.getFileBytes(repo, section.path, mergeSha);
    if ((section.status !== 'added' && oldContent === null) || (section.status !== 'removed' && newContent === null)) {
      complete = false;
      parts.push(section.text);
      continue;
    }
    const header = fullIndexHeader(section.text, oldContent, newContent);
    parts.push(binarySection(header, oldContent ?? new Uint8Array(), newContent ?? new Uint8Array()));
    rewritten += 1;
  }
  return { diff: parts.join(''), complete, rewritten };
}
