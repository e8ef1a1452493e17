/**
 * A stored diff as a reader (the LLM, the token budget) sees it: each `GIT binary patch` body
 * (base85 of deflated bytes, which the git source keeps so that the diff applies) is replaced by
 * one line saying what it was. Text hunks are left exactly as they are. Pure.
 */
export function readableDiff(diff: string): string {
  if (!diff.includes('\nGIT binary patch\n')) return diff;
  const lines = diff.split('\n');
  const out: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line !== 'GIT binary patch') {
      out.push(line);
      continue;
    }
    const sizes: string[] = [];
    let j = i + 1;
    for (; j < lines.length && !lines[j]!.startsWith('diff --git '); j++) {
      const hunk = /^(literal|delta) (\d+)$/.exec(lines[j]!);
      if (hunk) sizes.push(`${hunk[1]} ${hunk[2]}`);
    }
    out.push(`GIT binary patch (not shown here: ${sizes.join(', ') || 'no hunk'})`);
    if (j === lines.length && diff.endsWith('\n')) out.push('');
    i = j - 1;
  }
  return out.join('\n');
}
