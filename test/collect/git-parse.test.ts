import { describe, expect, it } from 'vitest';
import { deflateSync } from 'node:zlib';
import { readableDiff } from '../../pipeline/concepts/readable-diff.js';
import {
  binarySection,
  encodeBase85,
  expandRenamePath,
  headerPath,
  isoFromEpochSeconds,
  parseCatFileBatch,
  parseCommitBody,
  logFormat,
  LogRecordSplitter,
  newLogMarker,
  parseLog,
  parseLsTree,
  parseNumstatLine,
  parsePatch,
  patchSectionRanges,
  pickAsvConfigPath,
  sectionBlobs,
  unquoteGitPath,
} from '../../pipeline/services/git-parse.js';

const HEADER = (sha: string, parents: string, message: string) =>
  `${sha}\x1f${parents}\x1f1743494400\x1f1743498000\x1fAda\x1fada@example.com\x1f${message}\n`;

describe('git output parsers', () => {
  it('unquotes C-style quoted paths, octal UTF-8 included', () => {
    expect(unquoteGitPath('"\\303\\251t\\303\\251.txt"')).toBe('été.txt');
    expect(unquoteGitPath('"a\\tb\\"c\\\\d"')).toBe('a\tb"c\\d');
    expect(unquoteGitPath('plain name.py')).toBe('plain name.py');
  });

  it('reads numstat lines, binary ones and rename forms', () => {
    expect(parseNumstatLine('3\t1\tpkg/a.py')).toEqual({ additions: 3, deletions: 1, binary: false, path: 'pkg/a.py' });
    expect(parseNumstatLine('-\t-\tdata.bin')).toEqual({ additions: 0, deletions: 0, binary: true, path: 'data.bin' });
    expect(parseNumstatLine('not numstat')).toBeNull();
    expect(expandRenamePath('src/{old => new}/x.py')).toEqual({ from: 'src/old/x.py', to: 'src/new/x.py' });
    expect(expandRenamePath('src/{ => sub}/x.py')).toEqual({ from: 'src/x.py', to: 'src/sub/x.py' });
    expect(expandRenamePath('a.txt => b.txt')).toEqual({ from: 'a.txt', to: 'b.txt' });
    expect(expandRenamePath('plain.py')).toBeNull();
  });

  it('splits a patch into file sections with status, paths and binary flag', () => {
    const patch = [
      'diff --git a/a.txt b/d/a b.txt',
      'similarity index 37%',
      'rename from a.txt',
      'rename to d/a b.txt',
      '--- a/a.txt',
      '+++ b/d/a b.txt\t',
      '@@ -1 +1,2 @@',
      ' hi',
      '+more',
      'diff --git "a/\\303\\251.txt" "b/\\303\\251.txt"',
      'new file mode 100644',
      '--- /dev/null',
      '+++ "b/\\303\\251.txt"',
      '@@ -0,0 +1 @@',
      '+new',
      'diff --git a/gone.py b/gone.py',
      'deleted file mode 100644',
      '--- a/gone.py',
      '+++ /dev/null',
      '@@ -1 +0,0 @@',
      '-x',
      'diff --git a/bin.dat b/bin.dat',
      'new file mode 100644',
      'Binary files /dev/null and b/bin.dat differ',
      'diff --git a/run.sh b/run.sh',
      'old mode 100644',
      'new mode 100755',
      'diff --git a/empty file b/empty file',
      'new file mode 100644',
      '',
    ].join('\n');
    const sections = parsePatch(patch);
    expect(sections.map((s) => [s.path, s.previousPath, s.status, s.binary])).toEqual([
      ['d/a b.txt', 'a.txt', 'renamed', false],
      ['é.txt', null, 'added', false],
      ['gone.py', null, 'removed', false],
      ['bin.dat', null, 'added', true],
      ['run.sh', null, 'changed', false],
      ['empty file', null, 'added', false],
    ]);
    expect(sections.map((s) => s.text).join('')).toBe(patch);
  });

  it('reads `diff --git` header paths when nothing else names the file', () => {
    expect(headerPath('diff --git a/x y.py b/x y.py')).toBe('x y.py');
    expect(headerPath('diff --git "a/\\303\\251" "b/\\303\\251"')).toBe('é');
  });

  it('zips numstat counts with patch sections', () => {
    const body =
      '\n\n2\t1\tpkg/a.py\n-\t-\timg.png\n\ndiff --git a/pkg/a.py b/pkg/a.py\n--- a/pkg/a.py\n+++ b/pkg/a.py\n@@ -1 +1,2 @@\n-a\n+b\n+c\ndiff --git a/img.png b/img.png\nBinary files a/img.png and b/img.png differ\n';
    const { files, patch } = parseCommitBody(body);
    expect(files).toEqual([
      { path: 'pkg/a.py', previousPath: null, status: 'modified', additions: 2, deletions: 1, binary: false },
      { path: 'img.png', previousPath: null, status: 'modified', additions: 0, deletions: 0, binary: true },
    ]);
    expect(patch.startsWith('diff --git a/pkg/a.py')).toBe(true);
    expect(() => parseCommitBody('\n\n1\t1\ta.py\n2\t0\tb.py\n\ndiff --git a/a.py b/a.py\n')).toThrow(
      /2 numstat lines but 1 patch sections/,
    );
  });

  it('reads whole log outputs record by record, NUL bytes in patches and messages included', () => {
    const sha1 = 'a'.repeat(40);
    const sha2 = 'b'.repeat(40);
    const m = 'pm0123456789abcdef01234567';
    const out = `\0${m}H${HEADER(sha1, `${sha2} ${'c'.repeat(40)}`, 'Merge pull request #5 from u/x\n\nTitle é')}\0${m}B\n\n1\t0\tx.py\n\ndiff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -0,0 +1 @@\n+é\0\0tail\n\0${m}H${HEADER(sha2, '', 'root \0 with a NUL')}\0${m}B\n\n1\t0\tx.py\n`;
    const commits = parseLog(out, m);
    expect(commits.map((c) => [c.sha, c.parents.length, c.message, c.files.length])).toEqual([
      [sha1, 2, 'Merge pull request #5 from u/x\n\nTitle é', 1],
      [sha2, 0, 'root \0 with a NUL', 1],
    ]);
    expect(commits[0]!.patch.endsWith('+é\0\0tail\n')).toBe(true);
    expect(commits[0]!.authorDate).toBe('2025-04-01T08:00:00.000Z');
    expect(commits[0]!.committerDate).toBe('2025-04-01T09:00:00.000Z');
    expect(() => parseLog(out, 'pm-another-process')).toThrow(/output before the first commit/);
    expect(() => parseLog(`\0${m}H${HEADER(sha2, '', 'x')}\0${m}H${HEADER(sha1, '', 'y')}`, m)).toThrow(/malformed log record 1/);
  });

  it('cuts output fed in chunks of any size into the same records, separators cut by a chunk boundary included', () => {
    const m = 'pm00112233445566778899aabb';
    const records = [
      `\0${m}H${HEADER('a'.repeat(40), '', 'one')}\0${m}B\n\n1\t0\tx.py\n`,
      `\0${m}H${HEADER('b'.repeat(40), '', 'two')}\0${m}B\ndiff --git a/x b/x\n+\0\0pm00112233445566778899aaXH\n${'+y\n'.repeat(5000)}`,
      `\0${m}H${HEADER('c'.repeat(40), '', 'three')}\0${m}B`,
    ];
    const out = Buffer.from(records.join(''));
    for (const size of [1, 2, 3, 7, 29, 30, 31, 4096, out.length]) {
      const splitter = new LogRecordSplitter(m);
      const got: string[] = [];
      for (let i = 0; i < out.length; i += size) {
        const complete = splitter.push(out.subarray(i, i + size));
        if (complete) got.push(complete.toString());
      }
      const last = splitter.end();
      if (last) got.push(last.toString());
      // Whole records only, in order, each byte once.
      expect(got.join(''), `chunks of ${size}`).toBe(records.join(''));
      expect(
        got.every((r) => r.startsWith(`\0${m}H`)),
        `chunks of ${size}`,
      ).toBe(true);
      expect(
        got.flatMap((r) => parseLog(r, m).map((c) => c.message)),
        `chunks of ${size}`,
      ).toEqual(['one', 'two', 'three']);
      if (size === 1) expect(got).toEqual(records);
    }
    expect(new LogRecordSplitter(m).end()).toBeNull();
    const stray = new LogRecordSplitter(m);
    stray.push(Buffer.from('fatal: something\n'));
    expect(() => stray.end()).toThrow(/output before the first commit/);
  });

  it('makes a new marker for every process, and a format that puts it before each header and body', () => {
    const a = newLogMarker();
    expect(a).toMatch(/^pm[0-9a-f]{24}$/);
    expect(newLogMarker()).not.toBe(a);
    expect(logFormat(a)).toBe(`%x00${a}H%H%x1f%P%x1f%at%x1f%ct%x1f%an%x1f%ae%x1f%B%x00${a}B`);
  });

  it('reads ls-tree -z (with sizes) and cat-file --batch output', () => {
    const tree = parseLsTree(`100644 blob ${'1'.repeat(40)}      42\tasv.conf.json\u0000040000 tree ${'2'.repeat(40)}       -\tpkg\0`);
    expect(tree).toEqual([
      { mode: '100644', type: 'blob', oid: '1'.repeat(40), size: 42, path: 'asv.conf.json' },
      { mode: '040000', type: 'tree', oid: '2'.repeat(40), size: null, path: 'pkg' },
    ]);
    const batch = Buffer.concat([
      Buffer.from(`${'3'.repeat(40)} blob 3\n`),
      Buffer.from([0, 10, 255]),
      Buffer.from('\nHEAD:nope missing\n'),
    ]);
    const objects = parseCatFileBatch(batch, ['HEAD:bin', 'HEAD:nope']);
    expect(objects[0]!.content).toEqual(Buffer.from([0, 10, 255]));
    expect(objects[1]).toEqual({ request: 'HEAD:nope', oid: null, type: null, content: null });
  });

  it('writes epoch seconds as Date#toISOString does, leap days, century years and the last four-digit second included', () => {
    const edges = [
      0, 59, 86_399, 86_400, 951_782_399, 951_782_400, 951_868_800, 1_709_164_800, 1_743_494_400, 4_107_542_399, 4_107_542_400,
      4_102_444_800, 253_402_300_799,
    ];
    // 80,000 seconds about 37 days apart from 1970 to 9999, each at another time of day
    const sweep = Array.from({ length: 80_000 }, (_, i) => i * 3_167_000 + ((i * 7_919) % 86_400));
    for (const seconds of [...edges, ...sweep])
      expect(isoFromEpochSeconds(seconds), String(seconds)).toBe(new Date(seconds * 1000).toISOString());
    // outside what it computes itself: Date's text
    for (const seconds of [-1, -86_401, 253_402_300_800, 1.5])
      expect(isoFromEpochSeconds(seconds)).toBe(new Date(seconds * 1000).toISOString());
  });

  it('picks the shallowest asv config, .json before .jsonc', () => {
    expect(pickAsvConfigPath(['a/b/asv.conf.json', 'bench/asv.conf.jsonc', 'bench/asv.conf.json', 'README.md'])).toBe(
      'bench/asv.conf.json',
    );
    expect(pickAsvConfigPath(['asv.conf.jsonc', 'x/asv.conf.json'])).toBe('asv.conf.jsonc');
    expect(pickAsvConfigPath(['notasv.conf.json.bak', 'myasv.conf.json'])).toBeNull();
  });
});

describe('binary patches for text that is not UTF-8', () => {
  it('encodes base85 as git does (the empty blob is git\'s "HcmV?d00001")', () => {
    // git deflates at its fastest level: the same bytes, base85-encoded as git does.
    expect(`H${encodeBase85(deflateSync(Buffer.alloc(0), { level: 1 }))}`).toBe('HcmV?d00001');
    expect(encodeBase85(Buffer.from([0, 0, 0, 0]))).toBe('00000');
    expect(encodeBase85(Buffer.from([255, 255, 255, 255]))).toBe('|NsC0');
  });

  it('finds the sections of each record, NULs inside them included, and the blobs of a full index line', () => {
    const m = 'pmfeedfacefeedfacefeedface';
    const out = Buffer.from(
      `\0${m}Hh\ndiff --git a/not b/a-section\n\0${m}Bdiff --git a/x b/x\nindex 1..2\n+\0\0\n\0${m}Hh2\0${m}B\ndiff --git a/y b/y\nnew file mode 100644\nindex ${'0'.repeat(40)}..${'a'.repeat(40)}\ndiff --git a/z b/z\n`,
    );
    const ranges = patchSectionRanges(out, m);
    expect(ranges.map((r) => [r.record, out.subarray(r.start, r.end).toString()])).toEqual([
      [0, 'diff --git a/x b/x\nindex 1..2\n+\0\0\n'],
      [1, expect.stringMatching(/^diff --git a\/y b\/y\n/)],
      [1, 'diff --git a/z b/z\n'],
    ]);
    expect(sectionBlobs(out.subarray(ranges[1]!.start, ranges[1]!.end).toString())).toEqual({ old: null, new: 'a'.repeat(40) });
    expect(sectionBlobs('index 1234567..89abcde 100644')).toBeNull();
  });

  it('rewrites a section as a GIT binary patch, keeping its header', () => {
    const header = `diff --git a/l.py b/l.py\nindex ${'1'.repeat(40)}..${'2'.repeat(40)} 100644\n--- a/l.py\n+++ b/l.py\n@@ -1 +1 @@\n-x\n+y\n`;
    const section = binarySection(header, Buffer.from('x\n'), Buffer.from('y\n'));
    expect(section).toMatch(
      new RegExp(
        `^diff --git a/l.py b/l.py\\nindex 1{40}\\.\\.2{40} 100644\\nGIT binary patch\\nliteral 2\\n[A-Za-z]\\S+\\n\\nliteral 2\\n[A-Za-z]\\S+\\n\\n$`,
      ),
    );
  });

  it('shows a reader one line per binary patch and leaves text hunks as they are', () => {
    const text = 'diff --git a/u.py b/u.py\n--- a/u.py\n+++ b/u.py\n@@ -1 +1 @@\n-y = 1\n+y = 2\n';
    const binary =
      'diff --git a/t.bin b/t.bin\nnew file mode 100644\nindex 00..49\nGIT binary patch\nliteral 3\nKcmZQz{0{&D1OWj6\n\nliteral 0\nHcmV?d00001\n\n';
    expect(readableDiff(text)).toBe(text);
    expect(readableDiff(binary + text)).toBe(
      `diff --git a/t.bin b/t.bin\nnew file mode 100644\nindex 00..49\nGIT binary patch (not shown here: literal 3, literal 0)\n${text}`,
    );
    expect(readableDiff(text + binary)).toBe(
      `${text}diff --git a/t.bin b/t.bin\nnew file mode 100644\nindex 00..49\nGIT binary patch (not shown here: literal 3, literal 0)\n`,
    );
  });
});
