import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanEnv, collect, REPO_ROOT, tempDir, type CliResult } from '../helpers/index.js';

const BUILD = join(REPO_ROOT, 'scripts/build-base-image.sh');
const LOCKCTL = join(REPO_ROOT, 'scripts/base-images/lock.sh');
const FAKE_DEBOOTSTRAP = join(REPO_ROOT, 'test/fakes/debootstrap-from-image.sh');
const SUITE = 'bookworm';
const ARCH = process.arch === 'arm64' ? 'arm64' : 'amd64';
const COMMITTED = join(REPO_ROOT, 'scripts/base-images', `${SUITE}-${ARCH}.lock`);
/** Another build of the same recipe: the base scripts/setup-test-env.sh builds (PERFMINE_BASE_IMAGE names another). */
const SHARED = process.env.PERFMINE_BASE_IMAGE ?? `perfmine/base:${SUITE}`;
const RUN = `${process.pid}-${randomBytes(3).toString('hex')}`;
const BUILT = `perfmine/base:recipe-test-${RUN}`;
const RELOCKED = `perfmine/base:recipe-relock-${RUN}`;
const STALE = `perfmine/base:recipe-stale-${RUN}`;
const RECIPE_LABEL = 'org.perfmine.base.recipe';
/** dpkg-query's format for the lock's lines (its own `${field}` syntax, not a template). */
const DPKG_FORMAT = '${Package}=${Version} ${Architecture}\\n';
/** A command run in a tmux session signals back; stdout is the uid it ran as. */
const TMUX_CHECK =
  "tmux new-session -d -s agent 'id -u > /tmp/tmux-ran; tmux wait-for -S ready; exec cat' && timeout 60 tmux wait-for ready && cat /tmp/tmux-ran && tmux kill-server";

const dir = tempDir('base-recipe');
const fakeBin = join(dir, 'bin');
mkdirSync(fakeBin);
writeFileSync(join(fakeBin, 'debootstrap'), `#!/bin/sh\nexec bash '${FAKE_DEBOOTSTRAP}' "$@"\n`, { mode: 0o755 });

function run(cmd: string, args: readonly string[], env: Record<string, string> = {}): Promise<CliResult> {
  return collect(spawn(cmd, args, { env: cleanEnv(env) }), '');
}

/** The build script, with the host's mirror if it names one. */
function build(tag: string, env: Record<string, string> = {}): Promise<CliResult> {
  const mirror = process.env.PERFMINE_DEBIAN_MIRROR;
  return run('bash', [BUILD, tag], { ...(mirror ? { PERFMINE_DEBIAN_MIRROR: mirror } : {}), ...env });
}

/** The build with the stand-in debootstrap: it unpacks `image` (or, with none, refuses). */
function buildWithFake(tag: string, image: string | null, env: Record<string, string> = {}): Promise<CliResult> {
  return build(tag, {
    PATH: `${fakeBin}:${process.env.PATH ?? '/usr/bin:/bin'}`,
    ...(image ? { PERFMINE_FAKE_DEBOOTSTRAP_IMAGE: image } : {}),
    ...env,
  });
}

async function ok(cmd: string, args: readonly string[]): Promise<string> {
  const r = await run(cmd, args);
  if (r.code !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
  return r.stdout;
}

const entries = (lock: string) => lock.split('\n').filter((l) => l !== '' && !l.startsWith('#'));
const headerPackages = (lock: string) => (/^# packages: (.*)$/m.exec(lock)?.[1] ?? '').split(' ');

/** `name=version arch` of every package dpkg-query lists in the image, sorted as the lock is. */
async function packageSet(image: string): Promise<string[]> {
  const out = await ok('docker', ['run', '--rm', '--network', 'none', image, 'dpkg-query', '-W', '-f', DPKG_FORMAT]);
  return out.split('\n').filter(Boolean).sort();
}

async function label(image: string): Promise<string> {
  return (await ok('docker', ['image', 'inspect', '-f', `{{ index .Config.Labels "${RECIPE_LABEL}" }}`, image])).trim();
}

async function imageId(image: string): Promise<string | null> {
  const r = await run('docker', ['image', 'inspect', '-f', '{{.Id}}', image]);
  return r.code === 0 ? r.stdout.trim() : null;
}

/** The committed lock with one package's version changed: [lock text, package, locked version]. */
function withChangedVersion(lock: string, pkg: string): [string, string] {
  const line = entries(lock).find((l) => l.startsWith(`${pkg}=`));
  if (!line) throw new Error(`${pkg} is not in the lock`);
  const version = line.slice(pkg.length + 1).split(' ')[0]!;
  return [lock.replace(`\n${pkg}=${version} `, `\n${pkg}=${version}~changed `), version];
}

function lockDir(name: string, text: string): string {
  const d = join(dir, name);
  mkdirSync(d);
  writeFileSync(join(d, `${SUITE}-${ARCH}.lock`), text);
  return d;
}

const committed = readFileSync(COMMITTED, 'utf8');

afterAll(async () => {
  for (const tag of [BUILT, RELOCKED, STALE]) await run('docker', ['rmi', '-f', tag]);
  rmSync(dir, { recursive: true, force: true });
}, 120_000);

describe('the lock comparison (scripts/base-images/lock.sh on a recorded package list)', () => {
  const recorded = join(dir, 'recorded');
  writeFileSync(recorded, entries(committed).join('\n') + '\n');

  it('names each package whose version differs, that is missing or extra, and nothing when the sets agree', async () => {
    expect(await run(LOCKCTL, ['diff', COMMITTED, recorded])).toMatchObject({ code: 0, stdout: '' });

    const [changed, tmuxVersion] = withChangedVersion(committed, 'tmux');
    const makeLine = entries(committed).find((l) => l.startsWith('make='))!;
    const drifted = join(dir, 'drifted.lock');
    writeFileSync(drifted, changed.replace(`${makeLine}\n`, '') + 'ghost=1.0-1 all\n');
    const r = await run(LOCKCTL, ['diff', drifted, recorded]);
    expect(r.code).toBe(1);
    const [, makeVersion, makeArch] = /^make=(\S+) (\S+)$/.exec(makeLine)!;
    expect(r.stdout.split('\n').filter(Boolean)).toEqual([
      'ghost: the lock has 1.0-1 (all), the build installed none',
      `make: the build installed ${makeVersion} (${makeArch}), the lock has none`,
      `tmux: the mirror now serves ${tmuxVersion} (${ARCH}), the lock has ${tmuxVersion}~changed (${ARCH})`,
    ]);
  });

  it("digests the suite, the package list and the locked versions, not the list's order or the lock's header", async () => {
    const pkgs = headerPackages(committed);
    const digest = async (suite: string, lock: string, packages: readonly string[]) =>
      (await ok(LOCKCTL, ['digest', suite, lock, ...packages])).trim();
    const base = await digest(SUITE, COMMITTED, pkgs);
    expect(base).toMatch(/^[0-9a-f]{64}$/);
    const restamped = join(dir, 'restamped.lock');
    writeFileSync(restamped, committed.replace(/^# locked: .*$/m, '# locked: 1999-01-01T00:00:00Z from http://mirror.invalid/debian'));
    expect(await digest(SUITE, restamped, [...pkgs].reverse())).toBe(base);
    const changed = join(dir, 'changed.lock');
    writeFileSync(changed, withChangedVersion(committed, 'tmux')[0]);
    expect(await digest(SUITE, changed, pkgs)).not.toBe(base);
    expect(await digest('trixie', COMMITTED, pkgs)).not.toBe(base);
    const withoutTmux = pkgs.filter((p) => p !== 'tmux');
    expect(await digest(SUITE, COMMITTED, withoutTmux)).not.toBe(base);
  });
});

describe('scripts/build-base-image.sh from its pinned recipe (one real debootstrap of bookworm; real Docker)', () => {
  let built: CliResult;
  let recipe: string;

  beforeAll(async () => {
    // One real build from the committed recipe, to a tag of this run's own.
    built = await build(BUILT);
    recipe = (await ok(LOCKCTL, ['digest', SUITE, COMMITTED, ...headerPackages(committed)])).trim();
  }, 1_800_000);

  it('gives exactly the package set of the committed lock, the same as the other build of the recipe; the image carries the lock and the recipe', async () => {
    expect(built.code, built.stderr).toBe(0);
    expect(built.stderr).not.toContain('wrote the lock');
    expect(readFileSync(COMMITTED, 'utf8')).toBe(committed);
    const installed = await packageSet(BUILT);
    expect(installed).toEqual(entries(committed));
    expect(await ok('docker', ['run', '--rm', '--network', 'none', BUILT, 'cat', '/etc/perfmine/base.lock'])).toBe(committed);
    expect(await label(BUILT)).toBe(recipe);

    // The other build (scripts/setup-test-env.sh's, or the one that wrote the lock) has the same recipe and package set.
    expect(await label(SHARED), `${SHARED} was built from another recipe: scripts/setup-test-env.sh builds it again`).toBe(recipe);
    expect(await packageSet(SHARED)).toEqual(installed);

    // Built from this recipe already: nothing to do (the stand-in debootstrap would refuse if it were asked).
    const id = await imageId(BUILT);
    const again = await buildWithFake(BUILT, null);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain(`${BUILT} was built from this recipe (${recipe}); nothing to do`);
    expect(again.stderr).not.toContain('fake debootstrap');
    expect(await imageId(BUILT)).toBe(id);
  }, 300_000);

  it('fails naming the one package whose locked version the mirror no longer serves, tags nothing, and relocks on request', async () => {
    expect(built.code, built.stderr).toBe(0);
    const [changed, version] = withChangedVersion(committed, 'tmux');
    const locks = lockDir('one-version-changed', changed);
    const env = { PERFMINE_BASE_LOCK_DIR: locks };

    const failed = await buildWithFake(RELOCKED, BUILT, env);
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain('(1 package(s)); no image tagged');
    expect(failed.stderr).toContain(`tmux: the mirror now serves ${version} (${ARCH}), the lock has ${version}~changed (${ARCH})`);
    expect(failed.stderr).toContain(`PERFMINE_BASE_RELOCK=1 scripts/build-base-image.sh ${RELOCKED}`);
    expect(failed.stderr).toMatch(/PERFMINE_DEBIAN_MIRROR=https:\/\/snapshot\.debian\.org\/archive\/debian\/\d{8}T\d{6}Z\//);
    expect(failed.stderr).not.toContain('importing');
    expect(await imageId(RELOCKED)).toBeNull();
    expect(readFileSync(join(locks, `${SUITE}-${ARCH}.lock`), 'utf8')).toBe(changed);

    const relocked = await buildWithFake(RELOCKED, BUILT, { ...env, PERFMINE_BASE_RELOCK: '1' });
    expect(relocked.code, relocked.stderr).toBe(0);
    expect(relocked.stderr).toContain(`wrote the lock ${join(locks, `${SUITE}-${ARCH}.lock`)} (${entries(committed).length} packages)`);
    const rewritten = readFileSync(join(locks, `${SUITE}-${ARCH}.lock`), 'utf8');
    expect(entries(rewritten)).toEqual(entries(committed));
    expect(headerPackages(rewritten)).toEqual(headerPackages(committed));
    expect(await label(RELOCKED)).toBe(recipe);
    // Built from the stand-in's root filesystem (the build's steps after debootstrap, in seconds).
    expect(await ok('docker', ['run', '--rm', '--network', 'none', RELOCKED, 'cat', '/fake-debootstrap'])).toBe(`${BUILT}\n`);
  }, 600_000);

  it('builds again when the tag was built from another recipe, and refuses a lock written for another package list before any work', async () => {
    expect(built.code, built.stderr).toBe(0);
    const container = (await ok('docker', ['create', BUILT, '/bin/true'])).trim();
    try {
      await ok('docker', ['commit', '--change', `LABEL ${RECIPE_LABEL}=stale`, container, STALE]);
    } finally {
      await run('docker', ['rm', '-f', container]);
    }
    const stale = await buildWithFake(STALE, null);
    expect(stale.code).not.toBe(0);
    expect(stale.stderr).toContain(`${STALE} was built from recipe stale, the recipe is now ${recipe}: building it again`);
    expect(stale.stderr).toContain('fake debootstrap: refused to install bookworm');
    expect(await label(STALE)).toBe('stale');

    const fewer = committed.replace(/^(# packages: .*) tmux$/m, '$1');
    expect(fewer).not.toBe(committed);
    const other = await buildWithFake(BUILT, null, { PERFMINE_BASE_LOCK_DIR: lockDir('other-package-list', fewer) });
    expect(other.code).toBe(1);
    expect(other.stderr).toContain('packages: the package list now adds tmux and drops nothing');
    expect(other.stderr).toContain('PERFMINE_BASE_RELOCK=1 scripts/build-base-image.sh');
    expect(other.stderr).not.toContain('fake debootstrap');
    expect(await label(BUILT)).toBe(recipe);
  }, 300_000);

  it('runs tmux for an unprivileged user with no network: nobody (no home, shell nologin), a uid with no account, a user with a home of their own', async () => {
    expect(built.code, built.stderr).toBe(0);
    const asUser = (user: string) => run('docker', ['run', '--rm', '--network', 'none', '--user', user, BUILT, 'sh', '-c', TMUX_CHECK]);
    const nobody = await asUser('65534:65534');
    expect(nobody, nobody.stderr).toMatchObject({ code: 0, stdout: '65534\n' });
    const noAccount = await asUser('4242:4242');
    expect(noAccount, noAccount.stderr).toMatchObject({ code: 0, stdout: '4242\n' });
    const withHome = await run('docker', [
      'run',
      '--rm',
      '--network',
      'none',
      BUILT,
      'bash',
      '-c',
      'useradd -m -u 4243 agent && su agent -c "test -O \\$HOME && $0"',
      TMUX_CHECK,
    ]);
    expect(withHome, withHome.stderr).toMatchObject({ code: 0, stdout: '4243\n' });
  }, 300_000);
});
