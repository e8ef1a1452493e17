import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, renameSync, rmSync, openSync, closeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadPullRequest } from '../../cache/pull-requests.js';
import { runStage } from '../../pipeline/runner.js';
import { collectStage } from '../../stages/collect/index.js';
import { testContext, testScope } from '../fixtures/context.js';
import { GitHistoryBuilder, type GitHistory } from '../fixtures/git-history.js';

/**
 * Commits shaped like the ones that broke `--source git:PATH` on rich (Textualize/rich #1038
 * adds `assets/logo.ai`, an Adobe Illustrator file: a PDF whose first NUL byte is at 56,252).
 * git decides that a file is binary from its first 8,000 bytes only, so such a file is diffed as
 * text and its patch holds NUL bytes; records of `git log` split on NUL then lost their order, and
 * the whole batch of commits read with it failed with "malformed commit header (1 fields)".
 */

/** A PDF-like file: a text header, then (past git's first 8,000 bytes) binary streams with NULs, not UTF-8. */
function illustratorLike(seed: number): Uint8Array {
  const head = Buffer.from(`%PDF-1.6\r%\xe2\xe3\xcf\xd3\r\n`, 'latin1');
  const text = Buffer.from(
    Array.from({ length: 300 }, (_, i) => `${i + seed} 0 obj <</Type /Page /Parent 2 0 R>> endobj\r\n`).join(''),
    'latin1',
  );
  const stream = Buffer.from(Array.from({ length: 4000 }, (_, i) => (i * 7 + seed) % 256));
  return Buffer.concat([head, text, Buffer.from('stream\r\n'), stream, Buffer.from('\r\nendstream\r\n')]);
}

/** Valid UTF-8 text with a NUL past the first 8,000 bytes. */
const utf8WithNul = `${'# élan\n'.repeat(1500)}value = "a\u0000b"\n`;

let repo: GitHistory;

beforeAll(async () => {
  const h = new GitHistoryBuilder({ defaultBranch: 'main' });
  h.commit({
    message: 'Initial import',
    files: { 'asv.conf.json': '{"version": 1}\n', 'pkg/__init__.py': '', 'pkg/core.py': 'A = 1\n' },
    date: '2025-03-01T00:00:00Z',
  });
  h.squash({ number: 20, title: 'Before the odd one', files: { 'pkg/core.py': 'A = 2\n' }, date: '2025-04-02T00:00:00Z' });
  h.merge({
    number: 21,
    from: 'willmcgugan/logo',
    title: 'logo',
    commits: [
      {
        message: 'add logo',
        files: { 'assets/logo.ai': illustratorLike(1), 'pkg/data.txt': utf8WithNul, 'pkg/core.py': 'A = 3\n' },
        date: '2025-04-03T00:00:00Z',
      },
    ],
    date: '2025-04-04T00:00:00Z',
  });
  h.squash({ number: 22, title: 'Change the logo', files: { 'assets/logo.ai': illustratorLike(2) }, date: '2025-04-05T00:00:00Z' });
  h.squash({ number: 23, title: 'After the odd ones', files: { 'pkg/core.py': 'A = 4\n' }, date: '2025-04-06T00:00:00Z' });
  repo = await h.write();
});

afterAll(async () => {
  await repo.cleanup();
});

const built = (n: number) => repo.prs.find((p) => p.number === n)!;

/** The tree made by applying `diff` to `base` with `git apply --cached` (byte-exact or not at all). */
function applied(path: string, base: string, diff: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'perfmine-apply-'));
  const env = { ...process.env, GIT_INDEX_FILE: join(dir, 'index') };
  try {
    execFileSync('git', ['-C', path, 'read-tree', base], { env });
    execFileSync('git', ['-C', path, 'apply', '--cached', '--binary', '-'], { env, input: diff });
    return execFileSync('git', ['-C', path, 'write-tree'], { env, encoding: 'utf8' }).trim();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('collect --source git:PATH on commits whose patches hold NUL bytes', () => {
  it('is the shape git shows as text: numstat counts lines, not a binary change', async () => {
    const numstat = await repo.git(['diff', '--numstat', built(21).baseSha, built(21).mergeSha]);
    expect(numstat).toMatch(/^\d+\t\d+\tassets\/logo\.ai$/m);
    expect(numstat).toMatch(/^\d+\t\d+\tpkg\/data\.txt$/m);
    const patch = await repo.git(['diff', '--binary', built(21).baseSha, built(21).mergeSha]);
    expect(patch.includes('\0')).toBe(true);
  });

  it("collects every PR read by the same git process, and each diff applies to its base giving the merge commit's tree", async () => {
    const t = testContext({ config: { collect: { gitBatchSize: 500 } } });
    const report = await runStage(t.ctx, collectStage, testScope({ source: { kind: 'git', path: repo.path }, repos: ['o/odd'] }));
    expect(report.failed).toEqual({});
    expect(report.done).toBe(4);
    for (const n of [20, 21, 22, 23]) {
      const pr = loadPullRequest(t.db, 'o/odd', n)!;
      expect(pr.diff.includes('\0'), `#${n}`).toBe(false);
      expect(applied(repo.path, pr.baseSha, pr.diff), `#${n}`).toBe((await repo.git(['rev-parse', `${pr.mergeSha}^{tree}`])).trim());
    }
    const logo = loadPullRequest(t.db, 'o/odd', 21)!;
    // Line counts are git's own (the file is text to git); the change is held byte for byte.
    const numstat = (await repo.git(['diff', '--numstat', logo.baseSha, logo.mergeSha]))
      .trim()
      .split('\n')
      .map((l) => l.split('\t'));
    expect(logo.files.map((f) => [String(f.additions), String(f.deletions), f.path])).toEqual(numstat);
    expect(logo.missing).toContain('diff.bytes');
    expect(logo.diff).toMatch(
      /diff --git a\/assets\/logo\.ai b\/assets\/logo\.ai\nnew file mode 100644\nindex 0{40}\.\.[0-9a-f]{40}\nGIT binary patch\n/,
    );
    expect(logo.diff).toMatch(
      /diff --git a\/pkg\/data\.txt b\/pkg\/data\.txt\nnew file mode 100644\nindex 0{40}\.\.[0-9a-f]{40}\nGIT binary patch\n/,
    );
    // A text change next to them stays readable text.
    expect(logo.diff).toContain('--- a/pkg/core.py\n+++ b/pkg/core.py\n@@ -1 +1 @@\n-A = 2\n+A = 3\n');
    expect(loadPullRequest(t.db, 'o/odd', 23)!.missing).not.toContain('diff.bytes');
  });
});

describe('collect --source git:PATH when git cannot read one commit of a batch', () => {
  let broken: GitHistory;
  beforeAll(async () => {
    const h = new GitHistoryBuilder({ defaultBranch: 'main' });
    h.commit({
      message: 'Initial import',
      files: { 'asv.conf.json': '{"version": 1}\n', 'pkg/core.py': 'A = 1\n' },
      date: '2025-03-01T00:00:00Z',
    });
    h.squash({ number: 30, title: 'One', files: { 'pkg/core.py': 'A = 2\n' }, date: '2025-04-02T00:00:00Z' });
    h.squash({
      number: 31,
      title: 'Add a video',
      files: { 'videos/demo.mp4': new Uint8Array(Buffer.from('a video that the clone does not have')) },
      date: '2025-04-03T00:00:00Z',
    });
    h.squash({ number: 32, title: 'Three', files: { 'pkg/core.py': 'A = 3\n' }, date: '2025-04-04T00:00:00Z' });
    broken = await h.write();
    // Like a partial clone without its largest blobs: the objects made loose, then one blob removed.
    const packDir = join(broken.path, '.git', 'objects', 'pack');
    const aside = mkdtempSync(join(tmpdir(), 'perfmine-pack-'));
    for (const f of readdirSync(packDir)) renameSync(join(packDir, f), join(aside, f));
    for (const pack of readdirSync(aside).filter((f) => f.endsWith('.pack'))) {
      const fd = openSync(join(aside, pack), 'r');
      try {
        execFileSync('git', ['-C', broken.path, 'unpack-objects', '-q'], { stdio: [fd, 'ignore', 'inherit'] });
      } finally {
        closeSync(fd);
      }
    }
    rmSync(aside, { recursive: true, force: true });
    const blob = (await broken.git(['rev-parse', `${built31(broken)}:videos/demo.mp4`])).trim();
    rmSync(join(broken.path, '.git', 'objects', blob.slice(0, 2), blob.slice(2)));
  });
  afterAll(async () => {
    await broken.cleanup();
  });
  const built31 = (r: GitHistory) => r.prs.find((p) => p.number === 31)!.mergeSha;

  it("fails only that commit's pull request; the others read by the same git process are collected", async () => {
    const t = testContext();
    const report = await runStage(t.ctx, collectStage, testScope({ source: { kind: 'git', path: broken.path }, repos: ['o/broken'] }));
    expect(report.done).toBe(2);
    expect(Object.values(report.failed).reduce((a, b) => a + b, 0)).toBe(1);
    const rows = t.ctx.ledger.list('collect');
    expect(rows.map((r) => [r.key, r.status])).toEqual([
      ['o/broken#30', 'done'],
      ['o/broken#31', 'failed'],
      ['o/broken#32', 'done'],
    ]);
    expect(rows[1]!.lastError).toMatch(/git log/);
    expect(t.logs.some((l) => l.includes('git stopped before reading every commit'))).toBe(true);
  });
});
