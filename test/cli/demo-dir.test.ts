import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { classifyDemoDir, DEMO_MARKER } from '../../pipeline/cli/demo-dir.js';
import { snapshotTree, treeChanges } from '../helpers/fs-snapshot.js';
import { looksLikeABug, runCli, tempDir } from '../helpers/index.js';

// Several CLI processes per test on a shared 2-core machine: room to finish, not a speed claim.
vi.setConfig({ testTimeout: 300_000, hookTimeout: 300_000 });

/**
 * Issue 13: `perfmine demo --fresh --dir X` deleted X whatever it held (`--dir .` emptied the
 * current directory). The demo now writes only into a directory it made (its marker file), an
 * empty one, or an earlier demo's, and --fresh removes only what the demo puts there.
 */
describe('the demo directory', () => {
  it("decides from the listing alone which directories are the demo's", () => {
    expect(classifyDemoDir(null)).toEqual({ kind: 'absent' });
    expect(classifyDemoDir([])).toEqual({ kind: 'empty' });
    expect(classifyDemoDir([DEMO_MARKER, 'fastmath', 'notes.txt'])).toEqual({ kind: 'demo' });
    expect(classifyDemoDir(['fastmath', 'perfmine.db', 'out'])).toEqual({ kind: 'earlier-demo' });
    expect(classifyDemoDir(['perfmine.db'])).toEqual({ kind: 'foreign', entries: ['perfmine.db'] });
    expect(classifyDemoDir(['.git', 'perfmine.db', 'src'])).toEqual({ kind: 'foreign', entries: ['.git', 'src'] });
    expect(classifyDemoDir([], false)).toEqual({ kind: 'not-a-directory' });
  });

  it('--fresh --dir . in a checkout: refused with exit 2, nothing removed or added', async () => {
    const dir = tempDir();
    execFileSync('git', ['init', '-q', dir]);
    writeFileSync(join(dir, 'perfmine.db'), "the user's real database (bytes do not matter here)");
    mkdirSync(join(dir, 'src'));
    writeFileSync(join(dir, 'src', 'work.py'), 'print("mine")\n');
    const before = snapshotTree(dir);
    for (const args of [
      ['demo', '--fresh', '--dir', '.'],
      ['demo', '--dir', '.'],
      ['demo', '--fresh', '--dir', dir],
    ]) {
      const result = await runCli(args, { cwd: dir });
      expect(result.code, result.stderr).toBe(2);
      expect(result.stderr).toMatch(/--dir: .* holds files the demo did not create \(\.git, src\)/);
      expect(result.stderr).toMatch(/fix: pass --dir a new or empty directory .*nothing was changed/);
      expect(looksLikeABug(result.stderr)).toBe(false);
    }
    expect(treeChanges(before, snapshotTree(dir))).toEqual([]);
  });

  it('--dir at a file, or at a folder named like the sample that is not a repository: refused', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'plain'), 'x');
    mkdirSync(join(dir, 'other', 'fastmath'), { recursive: true });
    writeFileSync(join(dir, 'other', 'fastmath', 'mine.txt'), 'mine');
    const before = snapshotTree(dir);
    const atFile = await runCli(['demo', '--fresh', '--dir', join(dir, 'plain')], { cwd: dir });
    expect(atFile.code).toBe(2);
    expect(atFile.stderr).toMatch(/--dir: .*plain is a file, not a directory/);
    const lookalike = await runCli(['demo', '--fresh', '--dir', join(dir, 'other')], { cwd: dir });
    expect(lookalike.code).toBe(2);
    expect(lookalike.stderr).toMatch(/holds files the demo did not create \(fastmath\)/);
    expect(treeChanges(before, snapshotTree(dir))).toEqual([]);
  });
});
