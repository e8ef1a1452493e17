import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import PQueue from 'p-queue';
import { afterAll, describe, expect, it } from 'vitest';
import { GitService, type StreamedCommit } from '../../pipeline/services/git.js';

/**
 * `streamCommitLists` (one list) against a stand-in git (a script that writes what a test wants git to have
 * written, records in the caller's format): the commits are handed over one by one, and a record
 * that cannot be parsed costs only its own commit.
 */
const dir = mkdtempSync(join(tmpdir(), 'perfmine-fake-git-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function fakeGit(records: (marker: string) => string, exit = 0): string {
  const path = join(dir, `git-${Math.random().toString(36).slice(2)}.mjs`);
  writeFileSync(
    path,
    `#!${process.execPath}
const format = process.argv.find((a) => a.startsWith('--format='));
const marker = /^--format=%x00(pm[0-9a-f]+)H/.exec(format)[1];
process.stdin.resume();
process.stdin.on('end', () => {
  process.stdout.write(${JSON.stringify(records('MARKER'))}.split('MARKER').join(marker).replaceAll('NUL', '\\0'));
  process.exitCode = ${exit};
});
`,
  );
  chmodSync(path, 0o755);
  return path;
}

const header = (sha: string, message: string) => `${sha}\x1f\x1f1743494400\x1f1743498000\x1fAda\x1fada@example.com\x1f${message}\n`;
const body = (file: string) => `\ndiff --git a/${file} b/${file}\n--- a/${file}\n+++ b/${file}\n@@ -1 +1 @@\n-a\n+b\n`;
const record = (m: string, sha: string, message: string, file: string) => `NUL${m}H${header(sha, message)}NUL${m}B${body(file)}`;

async function stream(binary: string, shas: string[]): Promise<{ got: StreamedCommit[]; done: unknown }> {
  const git = new GitService({ queue: new PQueue({ concurrency: 2 }), timeoutMs: 30_000, binary });
  const got: StreamedCommit[] = [];
  const [s] = git.streamCommitLists(dir, [shas], (c) => got.push(c));
  const done = await s!.done.then(
    () => null,
    (e: unknown) => e,
  );
  return { got, done };
}

describe('streamCommitLists', () => {
  const [a, b, c] = ['a'.repeat(40), 'b'.repeat(40), 'c'.repeat(40)];

  it('hands over every commit, in order', async () => {
    const { got, done } = await stream(
      fakeGit((m) => record(m, a, 'one', 'x.py') + record(m, b, 'two', 'y.py') + record(m, c, 'three', 'z.py')),
      [a, b, c],
    );
    expect(done).toBeNull();
    expect(got.map((r) => ('commit' in r ? [r.sha, r.commit.message, r.commit.files.map((f) => f.path)] : [r.sha, 'error']))).toEqual([
      [a, 'one', ['x.py']],
      [b, 'two', ['y.py']],
      [c, 'three', ['z.py']],
    ]);
  });

  it('a record that cannot be parsed fails only its own commit', async () => {
    // b's numstat line cannot be read: its record is a SyntaxError, a and c are fine.
    const broken = (m: string) => `NUL${m}H${header(b, 'two')}NUL${m}B\nnot a numstat line\n`;
    const { got, done } = await stream(
      fakeGit((m) => record(m, a, 'one', 'x.py') + broken(m) + record(m, c, 'three', 'z.py')),
      [a, b, c],
    );
    expect(done).toBeNull();
    expect(got.map((r) => [r.sha, 'commit' in r ? 'ok' : String(r.error)])).toEqual([
      [a, 'ok'],
      [b, expect.stringMatching(/SyntaxError: git: unexpected line in numstat output/)],
      [c, 'ok'],
    ]);
  });

  it('when git fails, the records it ended stand, the one it was writing is dropped, and `done` names the failure', async () => {
    // git stopped while writing b (a blob missing from a partial clone): b's record may be cut short.
    const { got, done } = await stream(
      fakeGit((m) => record(m, a, 'one', 'x.py') + record(m, b, 'two', 'y.py'), 128),
      [a, b, c],
    );
    expect(got.map((r) => r.sha)).toEqual([a]);
    expect(String(done)).toMatch(/exited with 128/);
  });
});
