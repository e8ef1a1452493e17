import { describe, expect, it } from 'vitest';
import { fullIndexHeader, gitBlobSha } from '../../stages/collect/github-binary.js';

describe('binary sections of a GitHub diff', () => {
  it('computes git blob ids', () => {
    expect(gitBlobSha(new Uint8Array())).toBe('e69de29bb2d1d6434b8b29ae775ad8c2e48c5391');
    expect(gitBlobSha(Buffer.from('hello\n'))).toBe('ce013625030ba8dba906f756967f9e9ca394464a');
  });

  it('gives a placeholder section a full index line, keeping its mode; adds one when GitHub wrote none', () => {
    const modified = 'diff --git a/t.bin b/t.bin\nindex 1234567..89abcde 100644\nBinary files a/t.bin and b/t.bin differ\n';
    expect(fullIndexHeader(modified, Buffer.from('hello\n'), new Uint8Array())).toBe(
      'diff --git a/t.bin b/t.bin\nindex ce013625030ba8dba906f756967f9e9ca394464a..e69de29bb2d1d6434b8b29ae775ad8c2e48c5391 100644',
    );
    const added = 'diff --git a/n.bin b/n.bin\nnew file mode 100644\nBinary files /dev/null and b/n.bin differ\n';
    expect(fullIndexHeader(added, null, new Uint8Array())).toBe(
      `diff --git a/n.bin b/n.bin\nnew file mode 100644\nindex ${'0'.repeat(40)}..e69de29bb2d1d6434b8b29ae775ad8c2e48c5391`,
    );
  });
});
