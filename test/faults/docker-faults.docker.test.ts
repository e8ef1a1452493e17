import { createServer, type Server } from 'node:http';
import { rmSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BuildScripts, type Attempt } from '../../cache/build-scripts.js';
import { Ledger } from '../../cache/ledger.js';
import { openStore, type Db } from '../../cache/store.js';
import { runStage, type StageReport } from '../../pipeline/runner.js';
import { DockerService } from '../../pipeline/services/docker.js';
import { synthesizeStage } from '../../stages/synthesize/index.js';
import { ASV_FAKE_IMAGE, ensureAsvFakeImage } from '../fakes/asv-image.js';
import { buildPythonRepo, correctScript, type PythonRepo } from '../fixtures/python-repo.js';
import {
  gitScope,
  memoryLogger,
  seedCandidates,
  seedVerifiedScript,
  SEEDED,
  tempDir,
  testConfig,
  testContext,
  testLabel,
} from '../synthesize/harness.js';

const label = testLabel('faults');
const docker = new DockerService({ runLabel: label });
const dir = tempDir('docker-faults');
const PIDS_LIMIT = 64;
const DISK_MB = 200;

/** The Docker bridge's address on this host: where a container with network reaches it. */
async function bridgeGateway(): Promise<string> {
  const info = (await docker.docker.getNetwork('bridge').inspect()) as {
    IPAM?: { Config?: { Gateway?: string }[] };
    Options?: Record<string, string>;
  };
  const configured = info.IPAM?.Config?.find((c) => c.Gateway)?.Gateway;
  if (configured) return configured;
  const name = info.Options?.['com.docker.network.bridge.name'] ?? 'docker0';
  // The bridge is down while no container uses it (so os.networkInterfaces() leaves it out).
  const address = /\binet (\d+\.\d+\.\d+\.\d+)\//.exec(
    execFileSync('ip', ['-4', '-o', 'addr', 'show', 'dev', name], { encoding: 'utf8' }),
  )?.[1];
  if (!address) throw new Error(`the bridge network has no gateway (no IPv4 address on ${name})`);
  return address;
}

const HEADER = '#!/usr/bin/env bash\nset -euo pipefail\ncd /repo\n';

/** Writes until the device is full: /dev/shm is the container's 64 MB tmpfs, so ENOSPC comes at once. */
const FILLS_DISK = `${HEADER}echo "writing until the disk is full"\ndd if=/dev/zero of=/dev/shm/fill bs=1M\necho "unreachable: the disk never filled"\n`;

/** One file written to the root filesystem without end: the file-size limit (docker.diskMb) stops it. */
const BIG_FILE = `${HEADER}echo "writing one endless file"\ndd if=/dev/zero of=/var/tmp/big bs=1M\necho "unreachable: the file never stopped"\n`;

/** Many files on the root filesystem, none large: only the disk watchdog (writable layer size) stops them. */
const MANY_FILES = `${HEADER}echo "writing many files"\nfor i in $(seq 1 4000); do head -c 1048576 /dev/zero > /var/tmp/f$i; done\necho "unreachable: wrote 4 GB"\n`;

/** Starts processes without bound; only the container's pid limit stops it. */
const FORKS = `${HEADER}n=0\nwhile true; do sleep 600 & n=$((n + 1)); echo "forked $n"; done\n`;

/**
 * Builds correctly (with the network the build is allowed) and leaves behind a `.pth` hook that
 * phones home whenever Python starts: verification runs without network, so it is refused.
 * (Not sitecustomize.py: Debian's own, earlier on sys.path, would shadow it.)
 */
function phonesHome(url: string): string {
  return `${correctScript('pyproject-c')}python3 -c 'import urllib.request; urllib.request.urlopen("${url}/build-phase", timeout=20).read()'
site=$(python3 -c 'import site; print(site.getsitepackages()[0])')
cat > "$site/perfmine_phone_home.py" <<'PY'
import os, sys, urllib.request
try:
    urllib.request.urlopen("${url}/verify-phase", timeout=20).read()
except OSError as error:
    print(f"phone-home refused: {error}", file=sys.stderr, flush=True)
    os._exit(86)
PY
echo "import perfmine_phone_home" > "$site/perfmine-phone-home.pth"
`;
}

/**
 * Build scripts that misbehave, run by the synthesize stage on the real Docker engine with
 * perfmine's limits (pid limit, --network none for verification; the container's own /dev/shm
 * tmpfs for the disk). Each is the commit's cached script; the stage records the failed attempt
 * with its step, kind and log tails, goes on with the template, and leaves no container behind.
 * A script that hangs is killed at its time limit: test/synthesize/failures.docker.test.ts.
 */
describe('misbehaving build scripts in synthesize (real Docker engine)', () => {
  let fixture: PythonRepo;
  let db: Db;
  let listener: Server;
  const heard: string[] = [];
  let report: StageReport;
  let lines: string[];

  const repos = {
    disk: 'faults/disk',
    bigFile: 'faults/big-file',
    manyFiles: 'faults/many-files',
    fork: 'faults/fork',
    network: 'faults/network',
  } as const;
  const attempts = (repo: string): Attempt[] =>
    new BuildScripts(db).forCommit(repo, fixture.commits[0]!.sha).filter((a) => a.sourceDetail !== SEEDED);

  beforeAll(async () => {
    await ensureAsvFakeImage();
    const gateway = await bridgeGateway();
    listener = createServer((req, res) => {
      heard.push(req.url ?? '');
      res.end('ok');
    });
    await new Promise<void>((resolve) => listener.listen(0, gateway, resolve));
    const url = `http://${gateway}:${(listener.address() as { port: number }).port}`;

    // A commit the offline template cannot build (its C header must be generated first), so
    // that each item ends after the cached script and the template.
    fixture = buildPythonRepo({ dir: join(dir, 'repo'), eras: [{ era: 'pyproject-c', commits: 2 }] });
    db = openStore(join(dir, 'perfmine.db'));
    const [c0] = fixture.commits;
    // Three repositories (one clone): no item's script is another's neighbour.
    for (const repo of Object.values(repos)) seedCandidates(db, repo, fixture.commits, [0]);
    seedVerifiedScript(db, repos.disk, c0!.sha, c0!.date, FILLS_DISK);
    seedVerifiedScript(db, repos.bigFile, c0!.sha, c0!.date, BIG_FILE);
    seedVerifiedScript(db, repos.manyFiles, c0!.sha, c0!.date, MANY_FILES);
    seedVerifiedScript(db, repos.fork, c0!.sha, c0!.date, FORKS);
    seedVerifiedScript(db, repos.network, c0!.sha, c0!.date, phonesHome(url));

    const config = testConfig(join(dir, 'perfmine.db'), {
      llm: { mode: 'none' },
      docker: {
        baseImage: ASV_FAKE_IMAGE,
        cpus: 1,
        memoryMb: 1024,
        pidsLimit: PIDS_LIMIT,
        concurrency: 1,
        diskMb: DISK_MB,
        diskCheckSeconds: 1,
      },
      // The build may use the network (as for PyPI); verification never can.
      synthesize: {
        offline: true,
        buildNetwork: 'bridge',
        timeouts: { repoImage: 300, build: 120, import: 60, asv: 60, pytest: 60, tamper: 60, tool: 60 },
      },
    });
    const logged = memoryLogger('info');
    lines = logged.lines;
    report = await runStage(testContext({ db, config, docker, log: logged.log }), synthesizeStage, gitScope(fixture.path));
    // Five items of two builds each: 10 minutes ran out on a 2-core machine at load 25.
  }, 1_800_000);

  afterAll(async () => {
    db?.close();
    await new Promise<void>((resolve) => (listener ? listener.close(() => resolve()) : resolve()));
    await docker.removeLabelled(label);
    rmSync(dir, { recursive: true, force: true });
  }, 300_000);

  it('records every item, and the run goes on past each misbehaving script', () => {
    if (report.dropped['no-verified-script'] !== 3) console.log(lines.join(''));
    expect(report).toMatchObject({ planned: 5, ran: 5, done: 0, dropped: { 'no-verified-script': 5 }, failed: {} });
    for (const repo of Object.values(repos)) {
      expect(
        attempts(repo).map((a) => `${a.source}:${a.outcome}:${a.failingStep}`),
        repo,
      ).toEqual(['cache:failed:' + (repo === repos.network ? 'import' : 'build'), 'template:failed:build']);
      expect(new Ledger(db).get('synthesize', `${repo}@${fixture.commits[0]!.sha}`)?.detail).toMatch(
        /^2 attempt\(s\); last failure: build\/missing-header/,
      );
    }
  });

  it('a script that fills its disk fails on ENOSPC, recorded with the line that says so', () => {
    const [attempt] = attempts(repos.disk);
    expect(attempt).toMatchObject({ failingStep: 'build', imageTag: null });
    expect(attempt!.failure).toMatch(/^build\/out-of-disk: dd: error writing '\/dev\/shm\/fill': No space left on device$/);
    expect(attempt!.stdoutTail).not.toContain('unreachable: the disk never filled');
    expect(attempt!.steps.find((s) => s.step === 'build')).toMatchObject({ ok: false, timedOut: false, exitCode: 1 });
  });

  it('a script that writes one endless file on the root filesystem is stopped at docker.diskMb, by the file-size limit or the disk watchdog', () => {
    const [attempt] = attempts(repos.bigFile);
    expect(attempt).toMatchObject({ failingStep: 'build', failureKind: 'out-of-disk', imageTag: null });
    // Both limits are docker.diskMb: the file-size limit stops dd when its file reaches it, the
    // watchdog kills the container when its writable layer does. Either may come first; each is
    // a correct stop, named as such.
    const build = attempt!.steps.find((s) => s.step === 'build');
    if (/File size limit exceeded/.test(attempt!.failure ?? '')) {
      expect(attempt!.failure).toMatch(/^build\/out-of-disk: .*File size limit exceeded/);
      expect(build).toMatchObject({ ok: false, timedOut: false });
    } else {
      // The watchdog may also see the layer over the limit after dd has already died of SIGXFSZ
      // (exit 153): the watchdog's reason is recorded either way, the exit code is whichever came.
      expect(attempt!.failure).toBe('build/out-of-disk: build step killed: the container wrote more than its disk limit (docker.diskMb)');
      expect(build).toMatchObject({ ok: false, timedOut: false });
      expect([null, 153]).toContain(build!.exitCode);
    }
    expect(attempt!.stdoutTail).not.toContain('unreachable: the file never stopped');
  });

  it('a script that writes many files on the root filesystem is killed by the disk watchdog, long before it writes them all', () => {
    const [attempt] = attempts(repos.manyFiles);
    expect(attempt).toMatchObject({ failingStep: 'build', failureKind: 'out-of-disk', imageTag: null });
    expect(attempt!.failure).toBe('build/out-of-disk: build step killed: the container wrote more than its disk limit (docker.diskMb)');
    expect(attempt!.stdoutTail).not.toContain('unreachable: wrote 4 GB');
    expect(attempt!.steps.find((s) => s.step === 'build')).toMatchObject({ ok: false, exitCode: null, timedOut: false });
  });

  it('a script that forks without bound is stopped by the pid limit, and recorded', () => {
    const [attempt] = attempts(repos.fork);
    expect(attempt).toMatchObject({ failingStep: 'build', imageTag: null });
    expect(attempt!.stderrTail).toMatch(/fork: Resource temporarily unavailable/);
    const forked = Math.max(...[...attempt!.stdoutTail.matchAll(/^forked (\d+)$/gm)].map((m) => Number(m[1])));
    // Every process counts against the limit (bash, the sleepers, the container's init).
    expect(forked).toBeGreaterThan(PIDS_LIMIT / 2);
    expect(forked).toBeLessThan(PIDS_LIMIT);
    expect(attempt!.steps.find((s) => s.step === 'build')).toMatchObject({ ok: false, timedOut: false });
  });

  it('the recorded failure of the fork bomb names the fork failure', () => {
    const [attempt] = attempts(repos.fork);
    expect(attempt).toMatchObject({ failureKind: 'out-of-processes' });
    // bash says it as `fork: retry: Resource temporarily unavailable` while it retries.
    expect(attempt!.failure).toMatch(/^build\/out-of-processes: .*fork: (?:retry: )?Resource temporarily unavailable$/);
  });

  it('a script that phones home from verification is refused by --network none, and recorded as a network failure', () => {
    const [attempt] = attempts(repos.network);
    expect(attempt).toMatchObject({ failingStep: 'import', failureKind: 'network', imageTag: null });
    expect(attempt!.failure).toBe('import/network: Network is unreachable');
    expect(attempt!.stderrTail).toMatch(/phone-home refused: <urlopen error \[Errno 101\] Network is unreachable>/);
    expect(attempt!.steps.map((s) => `${s.step}:${s.ok}`)).toEqual([
      'script:true',
      'build:true',
      'history:true',
      'tamper:true',
      'import:false',
    ]);
    // The build had the network (it reached this host once); verification never did.
    expect(heard).toEqual(['/build-phase']);
  });

  it('leaves no container of this run behind, and no image of a failed attempt', async () => {
    expect(await docker.containers(label)).toEqual([]);
    const tags = (await docker.images(label)).flatMap((i) => i.RepoTags ?? []);
    expect(tags.filter((t) => t.startsWith('perfmine/env-'))).toEqual([]);
  });
});
