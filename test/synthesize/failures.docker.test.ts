import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BuildScripts } from '../../cache/build-scripts.js';
import { Ledger } from '../../cache/ledger.js';
import { openStore, type Db } from '../../cache/store.js';
import { runStage } from '../../pipeline/runner.js';
import { DockerService, IMAGE_OWNER_LABEL, OWNER_LABEL, PERFMINE_LABEL } from '../../pipeline/services/docker.js';
import { currentOwner, formatOwner } from '../../pipeline/services/owner.js';
import { synthesizeStage } from '../../stages/synthesize/index.js';
import { ASV_FAKE_IMAGE, ensureAsvFakeImage } from '../fakes/asv-image.js';
import { buildPythonRepo, type PythonRepo } from '../fixtures/python-repo.js';
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
} from './harness.js';

const REPO = 'fixture/failures';
const label = testLabel('failures');
const docker = new DockerService({ runLabel: label });
const dir = tempDir('failures');
// The limit kills the hanging script, and the tampering script and the template must build within
// it: 25 s was too short for a pip install on a loaded 2-core machine (the tampering build was
// killed at its limit instead of reaching the tamper check).
const BUILD_LIMIT_S = 60;
// No LLM: after the bad cached and neighbouring scripts, the template must do.
const config = testConfig(join(dir, 'perfmine.db'), { llm: { mode: 'none' } });
const cfg = { ...config, synthesize: { ...config.synthesize, timeouts: { ...config.synthesize.timeouts, build: BUILD_LIMIT_S } } };
const { log, lines } = memoryLogger('info');
let fixture: PythonRepo;
let db: Db;

const HANGING = '#!/usr/bin/env bash\nset -euo pipefail\ncd /repo\necho "waiting for a server that never answers"\nsleep 600\n';
const TAMPERING = [
  '#!/usr/bin/env bash',
  'set -euo pipefail',
  'cd /repo',
  '# "fixes" a slow benchmark by editing it',
  "sed -i 's/range(3000)/range(3)/' benchmarks/bench_core.py",
  'python3 -m pip install --no-build-isolation --no-deps -e .',
  '',
].join('\n');

describe('synthesize rejects hanging and tampering scripts (real Docker engine)', () => {
  beforeAll(async () => {
    await ensureAsvFakeImage();
    fixture = buildPythonRepo({ dir: join(dir, 'repo'), eras: [{ era: 'setup-py', commits: 3 }] });
    db = openStore(join(dir, 'perfmine.db'));
    seedCandidates(db, REPO, fixture.commits, [0]);
    const [c0, c1] = fixture.commits;
    // The cached script of commit 0 hangs; the script verified on commit 1 edits a benchmark.
    seedVerifiedScript(db, REPO, c0!.sha, c0!.date, HANGING);
    seedVerifiedScript(db, REPO, c1!.sha, c1!.date, TAMPERING);
  }, 300_000);

  afterAll(async () => {
    db?.close();
    await docker.removeLabelled(label);
    rmSync(dir, { recursive: true, force: true });
  }, 300_000);

  it('kills the hanging script at its time limit, rejects the tampering one, records both, and verifies the template', async () => {
    const ctx = testContext({ db, config: cfg, docker, log });
    const report = await runStage(ctx, synthesizeStage, gitScope(fixture.path));
    if (report.done !== 1) console.log(lines.join(''));
    expect(report).toMatchObject({ ran: 1, done: 1 });

    const attempts = new BuildScripts(db).forCommit(REPO, fixture.commits[0]!.sha).filter((a) => a.sourceDetail !== SEEDED);
    expect(attempts.map((a) => `${a.source}:${a.outcome}`)).toEqual(['cache:failed', 'neighbour:failed', 'template:verified']);

    const [hang, tamper, template] = attempts;
    expect(hang).toMatchObject({
      failingStep: 'build',
      failureKind: 'timeout',
      failure: expect.stringMatching(/^build\/timeout: build step killed at its time limit/),
    });
    expect(hang!.durationMs).toBeGreaterThanOrEqual(BUILD_LIMIT_S * 1000);
    expect(hang!.durationMs).toBeLessThan(BUILD_LIMIT_S * 1000 + 30_000);
    expect(hang!.steps.find((s) => s.step === 'build')).toMatchObject({ ok: false, timedOut: true, exitCode: null });
    expect(hang!.stdoutTail).toContain('waiting for a server that never answers');

    expect(tamper).toMatchObject({
      failingStep: 'tamper',
      failureKind: 'tampered',
      failure: 'tamper/tampered: the build script changed tracked files: benchmarks/bench_core.py (benchmark)',
      imageTag: null,
    });
    expect(tamper!.steps.map((s) => `${s.step}:${s.ok}`)).toEqual(['script:true', 'build:true', 'history:true', 'tamper:false']);

    expect(template).toMatchObject({
      sourceDetail: 'editable-offline',
      imageTag: expect.stringMatching(/^perfmine\/env-fixture-failures:/),
    });
    const out = new Ledger(db).get('synthesize', `${REPO}@${fixture.commits[0]!.sha}`);
    expect(out).toMatchObject({ status: 'done', output: { scriptSource: 'template', attemptId: template!.id } });
    // The rejected attempts' images are gone; only the verified one is left.
    const tags = (await docker.images(label)).flatMap((i) => i.RepoTags ?? []).filter((t) => t.startsWith('perfmine/env-'));
    expect(tags).toEqual([template!.imageTag]);
  }, 600_000);

  it('removes the leftovers of a crashed run, and nothing of a live one', async () => {
    const exited = spawnSync('true');
    const deadOwner = formatOwner({ ...currentOwner(), pid: exited.pid!, startTime: '1' });
    const dead = await docker.docker.createContainer({
      Image: ASV_FAKE_IMAGE,
      Cmd: ['sleep', '600'],
      Labels: { [PERFMINE_LABEL]: label, [OWNER_LABEL]: deadOwner },
    });
    const deadImage = await dead.commit({
      repo: 'perfmine/env-fixture-failures',
      tag: 'crashed-attempt-1',
      changes: [`LABEL ${IMAGE_OWNER_LABEL}=${deadOwner}`, `LABEL ${OWNER_LABEL}=`],
    });
    // A finished environment of the same dead owner is a result, not a leftover.
    const kept = await dead.commit({
      repo: 'perfmine/env-fixture-failures',
      tag: 'kept',
      changes: [`LABEL ${IMAGE_OWNER_LABEL}=${deadOwner}`, `LABEL ${OWNER_LABEL}=`],
    });
    const alive = await docker.docker.createContainer({ Image: ASV_FAKE_IMAGE, Cmd: ['sleep', '600'], Labels: docker.labels() });
    try {
      const removed = await docker.removeLeftovers({ labelValue: label });
      expect(removed.containers).toEqual([dead.id]);
      expect(removed.images).toEqual([(deadImage as { Id: string }).Id]);
      expect((await docker.containers(label)).map((c) => c.Id)).toEqual([alive.id]);
      expect(await docker.imageExists('perfmine/env-fixture-failures:crashed-attempt-1')).toBe(false);
      expect((await docker.inspectImage('perfmine/env-fixture-failures:kept'))?.id).toBe((kept as { Id: string }).Id);
    } finally {
      await alive.remove({ force: true });
    }
  });

  it('leaves no perfmine container of this run behind', async () => {
    expect(await docker.containers(label)).toEqual([]);
  });
});
