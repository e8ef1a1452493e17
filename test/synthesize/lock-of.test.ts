import { describe, expect, it } from 'vitest';
import { lockOf, type InstalledSet } from '../../pipeline/services/environments/lock.js';
import type { ServedFile } from '../../pipeline/services/package-index/index-session.js';

/**
 * The lock joins what is installed with what the time machine served by PEP 440 version equality,
 * not by text: an installed distribution's metadata may spell its version otherwise than the file
 * name it was installed from (a legacy sdist `legacy-1.0.tar.gz` whose setup.py says `1.0.0`; an
 * sdist `Odd-2.0RC1.tar.gz` installed as `2.0rc1`; `3.1-post0` and `3.1.post0`).
 */

function served(project: string, version: string | null, filename: string): ServedFile {
  return {
    project,
    version,
    filename,
    sha256: filename.length.toString(16).padStart(64, '0'),
    url: `https://files.example/${filename}`,
    uploadTime: null,
  };
}

function installed(...dists: [string, string][]): InstalledSet {
  return {
    python: '3.11.2',
    distributions: dists.map(([name, version]) => ({
      name,
      version,
      location: '/usr/local/lib/python3.11/site-packages',
      installer: 'pip',
      editable: false,
      direct_url: null,
    })),
  };
}

describe('the lock of a build', () => {
  it('finds the file each distribution was installed from by PEP 440 equality of versions', () => {
    const lock = lockOf(installed(['legacy', '1.0.0'], ['Odd', '2.0rc1'], ['post', '3.1-post0'], ['other', '4.0']), [
      served('legacy', '1.0', 'legacy-1.0.tar.gz'),
      served('odd', '2.0RC1', 'Odd-2.0RC1.tar.gz'),
      served('post', '3.1.post0', 'post-3.1.post0-py3-none-any.whl'),
      served('other', '4.0.post1', 'other-4.0.post1-py3-none-any.whl'),
      served('other', '4.1', 'other-4.1-py3-none-any.whl'),
    ]);
    expect(lock.distributions.map((d) => [d.name, d.source, d.filename])).toEqual([
      ['legacy', 'index', 'legacy-1.0.tar.gz'],
      ['Odd', 'index', 'Odd-2.0RC1.tar.gz'],
      // a post-release and a newer release are other versions: not what was installed
      ['other', 'local', null],
      ['post', 'index', 'post-3.1.post0-py3-none-any.whl'],
    ]);
    expect(lock.build.map((b) => b.filename)).toEqual(['other-4.0.post1-py3-none-any.whl', 'other-4.1-py3-none-any.whl']);
  });
});
