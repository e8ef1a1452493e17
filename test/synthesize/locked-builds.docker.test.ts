import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../cache/store.js';
import type { EnvironmentLock } from '../../pipeline/concepts/records/environment-lock.js';
import { DockerService } from '../../pipeline/services/docker.js';
import { Environments, type BuildSettings } from '../../pipeline/services/environments/environment.js';
import { buildConstraints, requirementsLock } from '../../pipeline/services/environments/lock.js';
import { exportSealedHistory } from '../../pipeline/services/environments/sealed-history.js';
import { sourceTierFiles } from '../../pipeline/services/environments/source-tier.js';
import { startLocalIndex, type LocalIndex } from '../../pipeline/services/package-index/local-index.js';
import type { TaskRow } from '../../stages/emit/row.js';
import { taskDockerfile } from '../../stages/emit/task-files.js';
import { writeDepWheels } from '../fakes/dep-wheels.js';
import { git } from '../fixtures/python-repo.js';
import { memoryLogger, tempDir, testLabel } from './harness.js';

const execFileP = promisify(execFile);

/**
 * Issue 29: environments as of the commit's date, locked, and rebuilt identically from a task
 * folder. The base image's own pip, behind the index time machine, in front of a loopback index of
 * generated wheels: dep 1.0 (uploaded 2023-01), 2.0 (2024-06, an incompatible API: api_v2 for
 * api_v1), 3.0 (2026-01). A repository whose commit of 2023-06 imports dep's 1.x API builds with
 * dep 1.0, its commit of 2024-09 (2.x API) with dep 2.0; with the cutoff off, the 2023 commit gets
 * 3.0 and fails verification at the import. The locks say so, and a task folder's Dockerfile
 * installs exactly its lock, or fails naming the file whose hash changed.
 */
const BASE = 'perfmine/base:bookworm';
const label = testLabel('locked');
const docker = new DockerService({ runLabel: label });
const dir = tempDir('locked');
const limits = { cpus: 1, memoryMb: 1024, pidsLimit: 256 };
const SCRIPT = '#!/usr/bin/env bash\nset -euo pipefail\ncd /repo\n"${PERFMINE_PYTHON:-python3}" -m pip install --no-build-isolation -e .\n';
const at = (iso: string) => ({ GIT_AUTHOR_DATE: iso, GIT_COMMITTER_DATE: iso });

let index: LocalIndex;
let wheels: Map<string, string>;
const db = openStore(':memory:');
let repo = '';
const commits: Record<'c2023' | 'c2024', { sha: string; date: string }> = { c2023: { sha: '', date: '' }, c2024: { sha: '', date: '' } };

function settings(cutoff: string): BuildSettings {
  return {
    limits,
    timeoutsMs: { repoImage: 300_000, build: 240_000, import: 60_000, asv: 120_000, pytest: 120_000, tamper: 60_000, tool: 60_000 },
    tailChars: 8000,
    buildNetwork: 'index',
    index: { upstream: index.url, cutoff, slackDays: 0, missingUploadTime: 'exclude', timeoutSeconds: 10, retries: 1 },
    store: db,
    asvDiscover: 'harness',
  };
}

function writeRepoFiles(api: 'api_v1' | 'api_v2'): void {
  const files: Record<string, string> = {
    'pyproject.toml':
      '[build-system]\nrequires = ["setuptools>=61"]\nbuild-backend = "setuptools.build_meta"\n\n[project]\nname = "usesdep"\nversion = "1.0"\nrequires-python = ">=3.8"\ndependencies = ["dep"]\n\n[tool.setuptools]\npackages = ["usesdep"]\n',
    'usesdep/__init__.py': `from dep import ${api} as _api\n\n\ndef value():\n    return _api()\n`,
    'asv.conf.json': '{"version": 1, "project": "usesdep", "repo": ".", "environment_type": "existing", "benchmark_dir": "benchmarks"}\n',
    'benchmarks/__init__.py': '',
    'benchmarks/bench.py': 'import usesdep\n\n\ndef time_value():\n    usesdep.value()\n',
  };
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(dirname(join(repo, name)), { recursive: true });
    writeFileSync(join(repo, name), text);
  }
}

async function build(commit: 'c2023' | 'c2024', cutoff: string) {
  const envs = new Environments(docker, settings(cutoff), memoryLogger().log);
  const { sha, date } = commits[commit];
  const sourceImage = await envs.sourceFor('fixture/usesdep', sha, { kind: 'git', path: repo }, BASE);
  return envs.buildAndVerify(
    {
      repo: 'fixture/usesdep',
      sha,
      commitDate: date,
      script: SCRIPT,
      sourceImage,
      baseImage: BASE,
      importName: 'usesdep',
      asvConfigPath: 'asv.conf.json',
      pythonVersion: '3.11',
    },
    `perfmine/env-fixture-usesdep:${commit}-attempt-${cutoff === 'none' ? 'n' : 'c'}`,
  );
}

const sha256Of = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');

describe('builds as of the commit date, locked, rebuilt from a task folder (real Docker engine, real pip)', () => {
  beforeAll(async () => {
    const wheelDir = join(dir, 'wheels');
    mkdirSync(wheelDir, { recursive: true });
    wheels = writeDepWheels(wheelDir);
    index = await startLocalIndex({ dir: wheelDir });
    repo = join(dir, 'repo');
    mkdirSync(repo, { recursive: true });
    git(repo, ['init', '-q', '-b', 'main']);
    git(repo, ['config', 'user.name', 'T']);
    git(repo, ['config', 'user.email', 't@t']);
    for (const [commit, api, date] of [
      ['c2023', 'api_v1', '2023-06-15T12:00:00Z'],
      ['c2024', 'api_v2', '2024-09-15T12:00:00Z'],
    ] as const) {
      writeRepoFiles(api);
      git(repo, ['add', '-A']);
      git(repo, ['commit', '-qm', `use dep's ${api}`], at(date));
      commits[commit] = { sha: git(repo, ['rev-parse', 'HEAD']), date: new Date(date).toISOString() };
    }
  }, 120_000);

  afterAll(async () => {
    await index?.close();
    db.close();
    await docker.removeLabelled(label);
  }, 120_000);

  let lock2023: EnvironmentLock;

  it('the 2023-06 commit builds and verifies with dep 1.0, the 2024-09 commit with dep 2.0, and the locks say so', async () => {
    const old = await build('c2023', 'commit-date');
    expect(old.failure).toBeNull();
    lock2023 = old.lock!;
    expect(lock2023.cutoff).toBe(commits.c2023.date);
    expect(lock2023.distributions.find((d) => d.name === 'dep')).toEqual({
      name: 'dep',
      version: '1.0',
      source: 'index',
      filename: wheels.get('1.0'),
      sha256: sha256Of(join(dir, 'wheels', wheels.get('1.0')!)),
    });
    expect(lock2023.distributions.find((d) => d.name === 'usesdep')).toMatchObject({ version: '1.0', source: 'editable' });
    expect(lock2023.distributions.filter((d) => d.source === 'local')).toEqual([]);

    const later = await build('c2024', 'commit-date');
    expect(later.failure).toBeNull();
    expect(later.lock!.distributions.find((d) => d.name === 'dep')).toMatchObject({
      version: '2.0',
      source: 'index',
      filename: wheels.get('2.0'),
    });
    for (const r of [old, later]) if (r.image) await docker.removeImage(r.image);
  }, 600_000);

  it('with the cutoff off, the 2023 commit gets dep 3.0 and fails verification naming the import error', async () => {
    const run = await build('c2023', 'none');
    expect(run.failure).toMatchObject({ step: 'import', kind: 'import-error' });
    expect(run.failure!.headline).toMatch(/cannot import name 'api_v1' from 'dep'/);
    expect(run.lock).toBeNull();
    if (run.image) await docker.removeImage(run.image);
  }, 600_000);

  it("a task folder's Dockerfile installs exactly the lock, and fails naming the file when its hash no longer matches", async () => {
    const folder = join(dir, 'task');
    mkdirSync(folder, { recursive: true });
    const row = { instance_id: 'fixture__usesdep-1', image_name: 'perfmine-test/usesdep:1', base_commit: commits.c2023.sha } as TaskRow;
    const perfmineFiles = sourceTierFiles();
    const write = (name: string, content: string | Buffer) => {
      mkdirSync(dirname(join(folder, name)), { recursive: true });
      writeFileSync(join(folder, name), content);
    };
    write('Dockerfile', taskDockerfile({ row, baseImage: BASE, pythonVersion: '3.11', perfmineFiles, lock: lock2023 }));
    write('docker_build.sh', SCRIPT);
    write('requirements.lock', requirementsLock(lock2023, row.instance_id));
    write('constraints.txt', buildConstraints(lock2023));
    write('lock.json', `${JSON.stringify(lock2023, null, 2)}\n`);
    for (const f of perfmineFiles)
      write(f.name, typeof f.content === 'string' || Buffer.isBuffer(f.content) ? f.content : readFileSync(f.content.file));
    for (const [name, data] of await exportSealedHistory(repo, commits.c2023.sha)) write(name, data);

    const image = 'perfmine-test/usesdep:1';
    const dockerBuild = () =>
      execFileP('docker', ['build', '-t', image, '--network', 'host', '--build-arg', `PIP_INDEX_URL=${index.url}`, folder], {
        maxBuffer: 64 * 1024 * 1024,
      });
    await dockerBuild();
    // the installed set is the lock (checked in the build by perfmine_lock.py, and here again)
    const check = await docker.run({
      image,
      cmd: ['bash', '-c', 'python3 /perfmine/perfmine_lock.py check /perfmine/lock.json && python3 -c "import dep; print(dep.VERSION)"'],
      network: 'none',
      timeoutMs: 60_000,
      limits,
      labels: { [`org.perfmine.test`]: label },
    });
    expect(check.exitCode, check.stdout + check.stderr).toBe(0);
    expect(check.stdout).toContain(`perfmine-lock: the environment is the lock (${lock2023.distributions.length} distributions)`);
    expect(check.stdout.trim().split('\n').at(-1)).toBe('1.0');
    await docker.removeImage(image);

    // a file whose hash changed: the build stops at the locked install, naming it
    const wrong = readFileSync(join(folder, 'requirements.lock'), 'utf8').replace(/sha256:[0-9a-f]{64}/, `sha256:${'0'.repeat(64)}`);
    write('requirements.lock', wrong);
    const failed = await dockerBuild().then(
      () => null,
      (error: { stdout?: string; stderr?: string }) => `${error.stdout ?? ''}${error.stderr ?? ''}`,
    );
    expect(failed).not.toBeNull();
    expect(failed).toMatch(/DO NOT MATCH THE HASHES/);
    expect(failed).toContain(wheels.get('1.0'));
  }, 900_000);
});
