import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DockerService } from '../../pipeline/services/docker.js';
import type { CommitBuildSpec } from '../../pipeline/services/environments/environment.js';
import { exportSealedHistory } from '../../pipeline/services/environments/sealed-history.js';
import { ASV_FAKE_IMAGE, ensureAsvFakeImage } from '../fakes/asv-image.js';
import { buildPythonRepo, correctScript, git, type PythonRepo } from '../fixtures/python-repo.js';
import { tempDir, testEnvironments, testLabel } from './harness.js';

/**
 * Sealed history (issue 28): every image built for a commit holds that commit and its ancestors
 * only, whatever the clone holds besides: a merged pull request after it (whose merge commit and
 * added blob must stay out), a later tag, a stash, a reflog, a note, a remote-tracking branch; a
 * base that is not on the default branch; a submodule. The verification's history step refuses
 * (`history-leak`) a build that brings anything else in.
 */
const label = testLabel('sealed');
const docker = new DockerService({ runLabel: label });
const dir = tempDir('sealed');
const limits = { cpus: 1, memoryMb: 1024, pidsLimit: 256 };
const envs = testEnvironments(docker, limits);
const at = (iso: string) => ({ GIT_AUTHOR_DATE: iso, GIT_COMMITTER_DATE: iso });

let fixture: PythonRepo;
let base = '';
let ancestor = '';
let merge = '';
let addedBlob = '';
let patch = '';
let maintBase = '';

/** What a git command in /repo of the image prints (exit code kept). */
async function inImage(image: string, script: string): Promise<{ code: number | null; out: string }> {
  const r = await docker.run({ image, cmd: ['bash', '-c', script], workingDir: '/repo', network: 'none', timeoutMs: 60_000, limits });
  return { code: r.exitCode, out: `${r.stdout}${r.stderr}`.trim() };
}

/** The checks an agent would make: every ref, reflog and object; the later commits and blobs by id. */
async function expectSealed(image: string, sha: string, hostClone: string): Promise<void> {
  const ancestry = git(hostClone, ['rev-list', sha]).split('\n').sort();
  const all = await inImage(image, 'git rev-list --all --reflog | sort');
  expect(all.out.split('\n')).toEqual(ancestry);
  for (const id of [merge, addedBlob]) expect((await inImage(image, `git cat-file -e ${id}`)).code, id).not.toBe(0);
  const latest = await inImage(image, 'git log --all --format=%cI | sort | tail -n 1');
  expect(Date.parse(latest.out)).toBeLessThanOrEqual(Date.parse(git(hostClone, ['show', '-s', '--format=%cI', sha])));
  const refs = await inImage(image, 'git for-each-ref --format="%(refname)"; git stash list; git notes list 2>/dev/null; git remote');
  for (const line of refs.out.split('\n').filter(Boolean)) expect(line, line).toMatch(/^refs\/tags\//);
  const leftovers = await inImage(image, 'ls .git; ls .git/logs 2>/dev/null | wc -l');
  expect(leftovers.out).not.toMatch(/FETCH_HEAD|ORIG_HEAD|packed-refs.*stash/);
}

describe('sealed history (real Docker engine)', () => {
  beforeAll(async () => {
    await ensureAsvFakeImage();
    fixture = buildPythonRepo({ dir: join(dir, 'repo'), eras: [{ era: 'setup-py', commits: 2 }] });
    const repo = fixture.path;
    ancestor = fixture.commits[0]!.sha;
    base = fixture.commits[1]!.sha;
    git(repo, ['tag', '-a', 'v0.1', '-m', 'release 0.1', ancestor], at('2024-01-05T00:00:00Z'));
    // a pull request merged after the base: its merge commit and the blob it adds must not get in
    git(repo, ['checkout', '-q', '-b', 'alice/fast']);
    writeFileSync(join(repo, 'fixpkg', 'fast.py'), 'def fast():\n    return "the expert solution"\n');
    git(repo, ['add', '-A']);
    git(repo, ['commit', '-qm', 'perf: the fast path'], at('2024-02-01T00:00:00Z'));
    git(repo, ['checkout', '-q', 'main']);
    git(repo, ['merge', '-q', '--no-ff', 'alice/fast', '-m', 'Merge pull request #7 from alice/fast'], at('2024-02-02T00:00:00Z'));
    merge = git(repo, ['rev-parse', 'HEAD']);
    addedBlob = git(repo, ['rev-parse', 'HEAD:fixpkg/fast.py']);
    patch = `${git(repo, ['diff', base, merge])}\n`;
    // everything a clone may hold besides
    git(repo, ['tag', 'v9.0', merge]);
    git(repo, ['update-ref', 'refs/remotes/origin/later', merge]);
    git(repo, ['notes', 'add', '-m', 'a note written later', base], at('2024-03-01T00:00:00Z'));
    writeFileSync(join(repo, 'fixpkg', 'core.py'), '# work in progress\n');
    git(repo, ['stash', '-q']);
    // a base that is not on the default branch: a maintenance branch off the ancestor
    git(repo, ['checkout', '-q', '-b', 'maint', ancestor]);
    writeFileSync(join(repo, 'MAINT.txt'), 'maintenance\n');
    git(repo, ['add', '-A']);
    git(repo, ['commit', '-qm', 'maint: a fix'], at('2024-01-20T00:00:00Z'));
    maintBase = git(repo, ['rev-parse', 'HEAD']);
    git(repo, ['checkout', '-q', 'main']);
  }, 600_000);

  afterAll(async () => {
    await docker.removeLabelled(label);
    rmSync(dir, { recursive: true, force: true });
  }, 120_000);

  const spec = (sha: string, sourceImage: string, extra: Partial<CommitBuildSpec> = {}): CommitBuildSpec => ({
    repo: 'fixture/sealed',
    sha,
    script: correctScript('setup-py'),
    sourceImage,
    baseImage: ASV_FAKE_IMAGE,
    importName: 'fixpkg',
    asvConfigPath: 'asv.conf.json',
    pythonVersion: '3.11',
    ...extra,
  });

  it('builds the environment and the expert side of the base with nothing of the later history', async () => {
    const source = await envs.sourceFor('fixture/sealed', base, { kind: 'git', path: fixture.path }, ASV_FAKE_IMAGE);
    await expectSealed(source, base, fixture.path);
    // the ancestor's tag is kept (lightweight, at its commit); the later one is not
    expect((await inImage(source, 'git tag -l; git cat-file -t v0.1')).out.split('\n')).toEqual(['v0.1', 'commit']);

    const env = await envs.buildAndVerify(spec(base, source), 'perfmine/env-fixture-sealed:base-attempt-1');
    expect(env.failure).toBeNull();
    expect(env.steps.map((s) => s.step)).toContain('history');
    await expectSealed(env.image!, base, fixture.path);

    const expert = await envs.buildAndVerify(spec(base, source, { patch }), 'perfmine/expert-fixture-sealed:7-attempt-1');
    expect(expert.failure).toBeNull();
    await expectSealed(expert.image!, base, fixture.path);
    // the expert's change is in the working tree only
    expect((await inImage(expert.image!, 'cat fixpkg/fast.py; git status --porcelain')).out).toBe(
      'def fast():\n    return "the expert solution"\n?? fixpkg/fast.py',
    );
  }, 600_000);

  it('seals a base that is not on the default branch', async () => {
    const source = await envs.sourceFor('fixture/sealed', maintBase, { kind: 'git', path: fixture.path }, ASV_FAKE_IMAGE);
    await expectSealed(source, maintBase, fixture.path);
    expect((await inImage(source, `git cat-file -e ${base}`)).code).not.toBe(0);
    const env = await envs.buildAndVerify(spec(maintBase, source), 'perfmine/env-fixture-sealed:maint-attempt-1');
    expect(env.failure).toBeNull();
  }, 600_000);

  it('refuses as history-leak a build that brings in an object, a ref or a stash outside the history', async () => {
    const source = await envs.sourceFor('fixture/sealed', base, { kind: 'git', path: fixture.path }, ASV_FAKE_IMAGE);
    const leaks = {
      object: 'git hash-object -w --stdin <<<"a later file" >/dev/null',
      ref: 'git update-ref refs/heads/later "$(git -c user.name=a -c user.email=a@b commit-tree HEAD^{tree} -p HEAD -m later)"',
      stash: 'echo x >> README.md && git -c user.name=a -c user.email=a@b stash -q',
    };
    for (const [what, line] of Object.entries(leaks)) {
      const script = `${correctScript('setup-py')}${line}\n`;
      const run = await envs.buildAndVerify(spec(base, source, { script }), `perfmine/env-fixture-sealed:leak-${what}-attempt-1`);
      expect(run.failure, what).toMatchObject({ step: 'history', kind: 'history-leak' });
      expect(run.steps.find((s) => s.step === 'history')!.detail, what).toMatch(/^history-leak: /);
      if (run.image) await envs.discard(run.image);
    }
  }, 600_000);

  it('seals a submodule at its gitlinked commit, and a task folder rebuilds the same history from its bundles', async () => {
    const sub = join(dir, 'sub');
    mkdirSync(sub, { recursive: true });
    git(sub, ['init', '-q', '-b', 'main']);
    writeFileSync(join(sub, 'data.txt'), 'v1\n');
    git(sub, ['add', '-A']);
    git(sub, ['-c', 'user.name=s', '-c', 'user.email=s@s', 'commit', '-qm', 'sub v1'], at('2024-01-01T00:00:00Z'));
    const subV1 = git(sub, ['rev-parse', 'HEAD']);
    const repo = join(dir, 'super');
    execFileSync('git', ['clone', '-q', fixture.path, repo], { env: { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null' } });
    git(repo, ['config', 'user.name', 'S']);
    git(repo, ['config', 'user.email', 's@s']);
    git(repo, ['-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', sub, 'vendor/sub']);
    git(repo, ['commit', '-qm', 'vendor the submodule'], at('2024-03-01T00:00:00Z'));
    const superBase = git(repo, ['rev-parse', 'HEAD']);
    // the submodule moves on after the base
    writeFileSync(join(sub, 'data.txt'), 'v2: later\n');
    git(sub, ['-c', 'user.name=s', '-c', 'user.email=s@s', 'commit', '-qam', 'sub v2'], at('2024-04-01T00:00:00Z'));
    git(join(repo, 'vendor/sub'), ['fetch', '-q', 'origin']);
    const subV2 = git(join(repo, 'vendor/sub'), ['rev-parse', 'origin/main']);

    const source = await envs.sourceFor('fixture/super', superBase, { kind: 'git', path: repo }, ASV_FAKE_IMAGE);
    const inSub = await inImage(
      source,
      'cat vendor/sub/data.txt; git -C vendor/sub rev-list --all; git -C vendor/sub cat-file -e ' + subV2,
    );
    expect(inSub.out.split('\n').slice(0, 2)).toEqual(['v1', subV1]);
    expect(inSub.code).not.toBe(0);
    const env = await envs.buildAndVerify(
      { ...spec(superBase, source), repo: 'fixture/super' },
      'perfmine/env-fixture-super:base-attempt-1',
    );
    expect(env.failure).toBeNull();

    // the task folder's bundles (made on this host) give the same history in an image built from them alone
    const history = await exportSealedHistory(repo, superBase);
    expect([...history.keys()]).toEqual(['source/modules/vendor/sub.bundle', 'source/repo.bundle']);
    const fromImage = await envs.sealedHistory(source);
    expect([...fromImage.keys()]).toEqual([...history.keys()]);
    for (const [path, data] of history) expect(fromImage.get(path)!.equals(data), path).toBe(true);
  }, 600_000);
});
