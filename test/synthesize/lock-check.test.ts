import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { packagePath } from '../../pipeline/package-root.js';

/**
 * perfmine_lock.py `check`, as a task's Dockerfile runs it after the build, on a site directory of
 * its own (python3 -S with only that directory on the path). The package under test is locked as
 * `editable`: a version from the repository's history changes when the tree changes (hatch-vcs
 * gave holoviz/param `2.4.0a1.post1.dev6+g7698658.d20261127` once the expert patch was applied,
 * and the replay's expert build failed on it), so only its being built from the checkout is
 * checked; every other distribution must be at its locked version.
 */
const LOCK_PY = packagePath('python', 'perfmine_lock.py');
const dir = mkdtempSync(join(tmpdir(), 'lock-check-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function site(name: string, dists: { name: string; version: string; editable: boolean }[]): string {
  const root = join(dir, name);
  for (const d of dists) {
    const info = join(root, `${d.name}-${d.version}.dist-info`);
    mkdirSync(info, { recursive: true });
    writeFileSync(join(info, 'METADATA'), `Metadata-Version: 2.1\nName: ${d.name}\nVersion: ${d.version}\n`);
    if (d.editable) writeFileSync(join(info, 'direct_url.json'), JSON.stringify({ url: 'file:///repo', dir_info: { editable: true } }));
  }
  return root;
}

function check(siteDir: string, lock: { name: string; version: string; source: string }[]) {
  const path = join(siteDir, 'lock.json');
  writeFileSync(path, JSON.stringify({ distributions: lock }));
  const r = spawnSync('python3', ['-S', LOCK_PY, 'check', path], { env: { ...process.env, PYTHONPATH: siteDir }, encoding: 'utf8' });
  return { code: r.status, out: `${r.stdout}${r.stderr}` };
}

const LOCK = [
  { name: 'param', version: '2.4.0a1.post1.dev6+g7698658', source: 'editable' },
  { name: 'hatchling', version: '1.27.0', source: 'image' },
];

describe('the lock check of a built environment', () => {
  it('accepts the package under test at the version its changed checkout gives, and says so', () => {
    const s = site('dirty', [
      { name: 'param', version: '2.4.0a1.post1.dev6+g7698658.d20261127', editable: true },
      { name: 'hatchling', version: '1.27.0', editable: false },
    ]);
    const r = check(s, LOCK);
    expect(r.out).toContain(
      "param is built from the checkout: 2.4.0a1.post1.dev6+g7698658.d20261127 (the lock's build was 2.4.0a1.post1.dev6+g7698658)",
    );
    expect(r.code, r.out).toBe(0);
  });

  it('compares versions as PEP 440 does, not as text: 1.27 is 1.27.0, 2.0-post0 is 2.0.post0, 1.0RC1 is 1.0rc1', () => {
    const lock = [...LOCK, { name: 'legacy', version: '2.0-post0', source: 'index' }, { name: 'odd', version: '1.0RC1', source: 'index' }];
    const same = site('pep440-same', [
      { name: 'param', version: '2.4.0a1.post1.dev6+g7698658', editable: true },
      { name: 'hatchling', version: '1.27', editable: false },
      { name: 'legacy', version: '2.0.post0', editable: false },
      { name: 'odd', version: '1.0rc1', editable: false },
    ]);
    expect(check(same, lock)).toMatchObject({ code: 0 });
    // a post-release, a dev release and a local version are other versions
    for (const [i, other] of ['1.27.0.post1', '1.27.0.dev0', '1.27.0+local'].entries()) {
      const r = check(
        site(`pep440-other-${i}`, [
          { name: 'param', version: '2.4.0a1.post1.dev6+g7698658', editable: true },
          { name: 'hatchling', version: other, editable: false },
          { name: 'legacy', version: '2.0.post0', editable: false },
          { name: 'odd', version: '1.0rc1', editable: false },
        ]),
        lock,
      );
      expect(r.out).toContain(`hatchling: the lock has 1.27.0, ${other} is installed`);
      expect(r.code).toBe(3);
    }
  });

  it.each([
    {
      why: 'another version of a locked dependency',
      dists: [
        { name: 'param', version: '2.4.0a1.post1.dev6+g7698658', editable: true },
        { name: 'hatchling', version: '1.28.0', editable: false },
      ],
      says: 'hatchling: the lock has 1.27.0, 1.28.0 is installed',
    },
    {
      why: 'the package under test installed otherwise',
      dists: [
        { name: 'param', version: '2.4.0', editable: false },
        { name: 'hatchling', version: '1.27.0', editable: false },
      ],
      says: 'param: the lock has it built from the checkout (editable), 2.4.0 is installed otherwise',
    },
    {
      why: 'the package under test missing',
      dists: [{ name: 'hatchling', version: '1.27.0', editable: false }],
      says: 'missing: param==2.4.0a1.post1.dev6+g7698658 (editable)',
    },
  ])('refuses $why', ({ why, dists, says }) => {
    const r = check(site(why.replace(/ /g, '-'), dists), LOCK);
    expect(r).toMatchObject({ code: 3 });
    expect(r.out).toContain(says);
  });
});
