import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { DockerService, IMAGE_OWNER_LABEL, OWNER_LABEL } from '../../pipeline/services/docker.js';
import { parseOwner, startTimeOf, type Owner } from '../../pipeline/services/owner.js';
import { snapshotTree, treeChanges } from '../helpers/fs-snapshot.js';
import { BIN, collect, runCli, spawnNode, tempDir, type CliResult } from '../helpers/index.js';

/**
 * Issue 13: a dry run makes synthesize's and validate's preflight checks against the real Docker
 * engine (engine, base image, asv in it) without building, tagging or removing anything, and
 * stops with the real run's exit code and reason.
 */
const MONTH = '2025-04';
const BASE = 'perfmine/base:bookworm';
const docker = new DockerService({ runLabel: 'test-dry-run-observer' });

function gitClone(): string {
  const dir = tempDir('perfmine-clone-');
  const git = (...args: string[]) => execFileSync('git', ['-C', dir, '-c', 'user.name=t', '-c', 'user.email=t@example.invalid', ...args]);
  git('init', '-q', '-b', 'main');
  git('commit', '-q', '--allow-empty', '-m', 'init');
  return dir;
}

/** The part of an owner label that tells one CLI process from another on this host. */
type Process = Pick<Owner, 'pid' | 'startTime'>;

/** Runs the CLI and returns its result with its process (PID and start time: what its labels name). */
async function runWithOwner(args: readonly string[], cwd: string): Promise<CliResult & { owner: Process }> {
  const child = spawnNode(BIN, args, { cwd });
  // Read while it runs: a PID is reused over a long test run, its start time tells the runs apart.
  const startTime = startTimeOf(child.pid!);
  if (startTime === null) throw new Error(`cannot read the start time of PID ${child.pid}`);
  const result = await collect(child, '');
  return { ...result, owner: { pid: child.pid!, startTime } };
}

/** Containers and images whose owner label names this process (PID and start time). */
async function leftBy(owner: Process): Promise<string[]> {
  const mine = (text: string | undefined) => {
    const o = parseOwner(text ?? '');
    return o?.pid === owner.pid && o.startTime === owner.startTime;
  };
  const containers = (await docker.containers()).filter((c) => mine(c.Labels?.[OWNER_LABEL])).map((c) => `container ${c.Id}`);
  const images = (await docker.images())
    .filter((i) => mine(i.Labels?.[IMAGE_OWNER_LABEL]))
    .map((i) => `image ${i.Id} ${i.RepoTags?.join(',')}`);
  return [...containers, ...images];
}

beforeAll(async () => {
  await docker.ping();
  if (!(await docker.imageExists(BASE))) throw new Error(`${BASE} is missing: run scripts/build-base-image.sh (npm test's pretest does)`);
});

describe('run --dry-run against the Docker engine', () => {
  it("runs synthesize's checks (engine, base image, asv in it) and stops where the real run stops, building nothing", async () => {
    const dir = tempDir();
    const scope = [
      'run',
      '--llm',
      'none',
      '--month',
      MONTH,
      '--source',
      `git:${gitClone()}`,
      '--repo',
      'acme/lib',
      '--until-stage',
      'validate',
    ];
    const before = snapshotTree(dir);
    const dry = await runWithOwner(['--base-image', BASE, '--db', join(dir, 'p.db'), ...scope, '--dry-run'], dir);
    expect(await leftBy(dry.owner)).toEqual([]);
    expect(treeChanges(before, snapshotTree(dir))).toEqual([]);

    const real = await runCli(['--base-image', BASE, '--db', join(dir, 'p.db'), ...scope], { cwd: dir });
    expect(dry.code, `${dry.stdout}\n${dry.stderr}`).toBe(real.code);
    const reason = (r: CliResult) => /stop(?:ped)? at (\w+)/.exec(r.stdout)?.[1] ?? null;
    expect(reason(dry)).toBe(reason(real));
    // The local base image is made from Debian packages without asv (PyPI is out of reach here):
    // then both stop at synthesize with exit 2 and the same fix; where asv is in it, both go on.
    if (real.code === 2) {
      expect(dry.stdout).toMatch(/a real run would stop at synthesize/);
      expect(dry.stderr).toMatch(/has no asv/);
      expect(dry.stderr).toMatch(/fix: .*scripts\/base-pypi\.Dockerfile.*synthesize\.asv\.wheelhouse/);
    }
  });

  it('says what it cannot check without building (a toolchain image from a wheelhouse), and builds nothing', async () => {
    const dir = tempDir();
    const wheelhouse = join(dir, 'wheels');
    mkdirSync(wheelhouse);
    writeFileSync(join(wheelhouse, 'asv-0.6.4-py3-none-any.whl'), 'not really a wheel');
    writeFileSync(join(dir, 'perfmine.config.json'), JSON.stringify({ validate: { engine: 'asv' }, synthesize: { asv: { wheelhouse } } }));
    const before = snapshotTree(dir);
    const dry = await runWithOwner(
      [
        '--base-image',
        BASE,
        '--db',
        join(dir, 'p.db'),
        'run',
        '--dry-run',
        '--llm',
        'none',
        '--month',
        MONTH,
        '--source',
        `git:${gitClone()}`,
        '--repo',
        'acme/lib',
        '--until-stage',
        'synthesize',
      ],
      dir,
    );
    expect(dry.code, dry.stderr).toBe(0);
    const note =
      /note: synthesize: a real run would build the image (\S+) here; a dry run builds and changes nothing; the checks after that step were not made/.exec(
        dry.stdout,
      );
    expect(note, dry.stdout).not.toBeNull();
    expect(await docker.imageExists(note![1]!)).toBe(false);
    expect(await leftBy(dry.owner)).toEqual([]);
    expect(treeChanges(before, snapshotTree(dir))).toEqual([]);
  });
});
