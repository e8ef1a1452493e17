import { describe, expect, it } from 'vitest';
import type { GhPullListItem } from '../../pipeline/services/github-schemas.js';
import { monthWindow } from '../../pipeline/window.js';
import { assembleDiff, filesBeyondList, scanPullPage, toFileChange } from '../../stages/collect/github-record.js';

const item = (number: number, updated: string, merged: string | null): GhPullListItem => ({
  number,
  state: 'closed',
  updated_at: updated,
  merged_at: merged,
  merge_commit_sha: merged ? `m${number}` : null,
  head: { sha: `h${number}` },
  base: { ref: 'main' },
});

describe('GitHub record assembly (pure)', () => {
  it('scans a page sorted by updated_at: keeps PRs merged in the window, stops once a PR is older than the start', () => {
    const w = monthWindow('2025-04');
    const page1 = [
      item(1, '2025-05-10T00:00:00Z', '2025-05-09T00:00:00Z'),
      item(2, '2025-05-02T00:00:00Z', '2025-04-30T23:59:59Z'),
      item(3, '2025-04-15T00:00:00Z', null),
    ];
    expect(scanPullPage(page1, w)).toEqual({ inWindow: [page1[1]], done: false });
    const page2 = [item(4, '2025-04-02T00:00:00Z', '2025-04-01T00:00:00Z'), item(5, '2025-03-31T00:00:00Z', '2025-03-30T00:00:00Z')];
    expect(scanPullPage(page2, w)).toEqual({ inWindow: [page2[0]], done: true });
    expect(scanPullPage([], w).done).toBe(true);
  });

  it('assembles a git-style diff from file patches and says when it is partial', () => {
    const { diff, complete } = assembleDiff([
      { filename: 'a.py', status: 'modified', additions: 1, deletions: 1, patch: '@@ -1 +1 @@\n-a\n+b' },
      { filename: 'new.py', status: 'added', additions: 1, deletions: 0, patch: '@@ -0,0 +1 @@\n+x' },
      { filename: 'b.py', previous_filename: 'old_b.py', status: 'renamed', additions: 0, deletions: 0 },
      { filename: 'huge.py', status: 'modified', additions: 5000, deletions: 0 },
    ]);
    expect(diff).toBe(
      [
        'diff --git a/a.py b/a.py',
        '--- a/a.py',
        '+++ b/a.py',
        '@@ -1 +1 @@',
        '-a',
        '+b',
        'diff --git a/new.py b/new.py',
        'new file mode 100644',
        '--- /dev/null',
        '+++ b/new.py',
        '@@ -0,0 +1 @@',
        '+x',
        'diff --git a/old_b.py b/b.py',
        'rename from old_b.py',
        'rename to b.py',
        'diff --git a/huge.py b/huge.py',
        'Binary files a/huge.py and b/huge.py differ',
        '',
      ].join('\n'),
    );
    expect(complete).toBe(false);
    expect(toFileChange({ filename: 'img.png', status: 'added', additions: 0, deletions: 0 }).binary).toBe(true);
  });

  it('completes a capped file list from the base and merge trees', () => {
    const tree = (entries: [string, string][]) => ({
      sha: 't',
      truncated: false,
      tree: entries.map(([path, sha]) => ({ path, type: 'blob', sha })),
    });
    const listed = [toFileChange({ filename: 'a.py', status: 'modified', additions: 1, deletions: 1, patch: '@@' })];
    const extra = filesBeyondList(
      listed,
      tree([
        ['a.py', '1'],
        ['b.py', '1'],
        ['gone.py', '1'],
        ['same.py', '1'],
      ]),
      tree([
        ['a.py', '2'],
        ['b.py', '2'],
        ['c.py', '1'],
        ['same.py', '1'],
      ]),
    );
    expect(extra.map((f) => [f.path, f.status])).toEqual([
      ['b.py', 'modified'],
      ['c.py', 'added'],
      ['gone.py', 'removed'],
    ]);
  });
});
