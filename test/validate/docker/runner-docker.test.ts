import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildImage, removeImage } from '../../../pipeline/services/docker-build.js';
import { DockerService } from '../../../pipeline/services/docker.js';
import { parseResultsFile } from '../../../stages/validate/asv/index.js';
import { parseSnapshotComparison, parseSnapshotRecord } from '../../../stages/validate/correctness/snapshot.js';
import { compareTests, readPytestRun } from '../../../stages/validate/correctness/tests.js';
import { DockerMeasurementRunner } from '../../../stages/validate/docker-runner.js';
import { measurementSchedule } from '../../../stages/validate/protocol/schedule.js';
import type { CandidateEnvironment } from '../../../stages/validate/runner-port.js';
import { readReference, RICH_DIR } from '../asv/reference.js';
import { invocationFile } from '../invocation-files.js';
import { toyProjectFiles } from '../snapshot/suite.js';

/**
 * The Docker measurement runner against the real engine, on a verified-image stand-in: the base
 * image plus a generated project checked out at /workspace/repo and built by its docker_build.sh,
 * with an `asv` that writes a real results file where asv writes it (the stand-in asv of the
 * synthesize branch replaces it in the integration test). Proves the expert image (patch applied
 * and committed, build script rerun), fresh-container invocations with files handed back on
 * stdout, pytest and the snapshot helper in the images, and image cleanup.
 */
const run = promisify(execFile);
const BASE = process.env.PERFMINE_TEST_BASE_IMAGE ?? 'perfmine/base:bookworm';
const docker = new DockerService({ runLabel: `test-validate-${process.pid}` });
const runner = new DockerMeasurementRunner({ docker, limits: { cpus: 1, memoryMb: 1024, pidsLimit: 256 }, runLabel: `test-validate-${process.pid}` });
const TAG = `perfmine-test/validate-base:${process.pid}`;
const scratch = mkdtempSync(join(tmpdir(), 'perfmine-runner-'));

const BUILD_SCRIPT = `#!/usr/bin/env bash
set -euo pipefail
python3 -c "import toy"
git -c safe.directory='*' rev-parse HEAD > /workspace/built-at.txt
`;

const FAKE_ASV = `#!/usr/bin/env bash
# writes what asv writes where asv writes it; records its arguments
echo "$@" >> /tmp/asv-argv.txt
if [ "$1" = machine ]; then mkdir -p results/perfmine && echo '{}' > results/perfmine/machine.json; exit 0; fi
sha=""; prev=""; for a in "$@"; do [ "$prev" = --set-commit-hash ] && sha=$a; prev=$a; done
mkdir -p results/perfmine
cp /opt/fake-results.json "results/perfmine/\${sha:0:8}-existing-py_usr_bin_python3.json"
echo '{"version": 2}' > results/benchmarks.json
echo "· Running 32 total benchmarks (OMP_NUM_THREADS=$OMP_NUM_THREADS)"
`;

/** The expert patch: git's own diff of the project, base to expert. */
async function expertPatch(): Promise<string> {
  const repo = join(scratch, 'patch');
  const write = (files: Record<string, string>) => {
    for (const [p, t] of Object.entries(files)) {
      mkdirSync(dirname(join(repo, p)), { recursive: true });
      writeFileSync(join(repo, p), t);
    }
  };
  write(toyProjectFiles());
  const git = (...args: string[]) => run('git', ['-C', repo, '-c', 'user.name=t', '-c', 'user.email=t@t', ...args]);
  await git('init', '-q');
  await git('add', '-A');
  await git('commit', '-q', '-m', 'base');
  write(toyProjectFiles({ expert: true }));
  return (await git('diff')).stdout;
}

function env(overrides: Partial<CandidateEnvironment> = {}): CandidateEnvironment {
  return { key: 'acme/toy#7', baseImage: TAG, buildScript: BUILD_SCRIPT, repoDir: '/workspace/repo', env: { OMP_NUM_THREADS: '1' }, network: false, ...overrides };
}

let patch = '';

beforeAll(async () => {
  patch = await expertPatch();
  const files: Record<string, string> = { 'asv': FAKE_ASV, 'fake-results.json': invocationFile(readReference(`${RICH_DIR}r2x2/ab/349042fd-existing-py_usr_bin_python3.json`), 0, 10), 'docker_build.sh': BUILD_SCRIPT };
  for (const [p, t] of Object.entries(toyProjectFiles())) files[`repo/${p}`] = t;
  const built = await buildImage(
    docker,
    {
      tag: TAG,
      dockerfile: [
        `FROM ${BASE}`,
        'COPY repo/ /workspace/repo/',
        'COPY asv /usr/local/bin/asv',
        'COPY fake-results.json /opt/fake-results.json',
        'COPY docker_build.sh /workspace/docker_build.sh',
        'WORKDIR /workspace/repo',
        'RUN chmod +x /usr/local/bin/asv && git init -q && git add -A && git -c user.name=t -c user.email=t@t commit -q -m base && bash /workspace/docker_build.sh',
      ].join('\n'),
      files,
      network: 'none',
      timeoutMs: 300_000,
    },
    `test-validate-${process.pid}`,
  );
  if (!built.ok) throw new Error(`test image: ${built.error}\n${built.log}`);
}, 600_000);

afterAll(async () => {
  await removeImage(docker, TAG);
  rmSync(scratch, { recursive: true, force: true });
});

describe('DockerMeasurementRunner (real engine)', () => {
  it('builds the expert image, measures both sides in fresh containers, runs pytest and the snapshot, and cleans up', async () => {
    const built = await runner.buildExpert(env(), patch, 300_000);
    expect(built.reading).toEqual({ ok: true });
    const expert = built.image!;

    // the build script ran again after the patch was committed
    const head = await docker.run({ image: expert, cmd: ['bash', '-c', "git -c safe.directory='*' rev-parse HEAD HEAD~1; cat /workspace/built-at.txt; git -c safe.directory='*' status --porcelain"], workingDir: '/workspace/repo', timeoutMs: 60_000, limits: { cpus: 1, memoryMb: 256, pidsLimit: 64 } });
    const [expertHead, baseHead, builtAt, ...dirty] = head.stdout.trim().split('\n');
    expect(builtAt).toBe(expertHead);
    expect(dirty).toEqual([]);

    const layout = { repoDir: '/workspace/repo', configPath: 'asv.conf.json', resultsDir: 'results' };
    const settings = { machine: 'perfmine', bench: null, rounds: 2, attributes: {}, cpuAffinity: null };
    const [a, b] = measurementSchedule(1, 0);
    const onBase = await runner.runInvocation(env(), TAG, a!, layout, settings, 120_000);
    const onExpert = await runner.runInvocation(env(), expert, b!, layout, settings, 120_000);
    expect(onBase.output).toMatchObject({ asvExitCode: 0, commit: baseHead, suiteNotImportable: false });
    expect(onExpert.output.commit).toBe(expertHead);
    expect(parseResultsFile(onExpert.output.results!, 'expert').benchmarks).toHaveLength(32);
    expect(onBase.output.log).toContain('OMP_NUM_THREADS=1');

    const options = { python: 'python3', args: [], timeLimitSeconds: 120 };
    const baseTests = readPytestRun(await runner.runTests(env(), TAG, options));
    const expertTests = readPytestRun(await runner.runTests(env(), expert, options));
    if (!baseTests.collected || !expertTests.collected) throw new Error('tests not collected');
    expect(compareTests(baseTests.report, expertTests.report, { base: false, expert: false }).regressions).toEqual([{ test: 'tests.test_toy::test_total', expert: 'failed' }]);

    const request = { configPath: 'asv.conf.json', bench: null, perCallSeconds: 30, timeLimitSeconds: 120, python: 'python3' };
    const recorded = await runner.recordSnapshot(env(), TAG, request);
    expect(parseSnapshotRecord(recorded.json!).workloads).toHaveLength(13);
    const compared = await runner.compareSnapshot(env(), expert, recorded.json!, request);
    expect(parseSnapshotComparison(compared.json!).counts.mismatch).toBe(2);

    await runner.release([expert]);
    expect(await docker.imageExists(expert)).toBe(false);
    expect(await docker.imageExists(`perfmine/snapshot-compare:acme__toy-7`)).toBe(false);
  });

  it('tells a patch that does not apply from a build script that fails', async () => {
    const broken = patch.replace(/^-(.*return sum\(xs\).*)$/m, '-$1 # not in the file');
    const notApplied = await runner.buildExpert(env({ key: 'acme/toy#8' }), broken, 300_000);
    expect(notApplied.reading).toMatchObject({ ok: false, reason: 'patch-does-not-apply' });
    expect(notApplied.image).toBeNull();
    const failing = await runner.buildExpert(env({ key: 'acme/toy#9', buildScript: '#!/usr/bin/env bash\necho compiling; exit 3\n' }), patch, 300_000);
    expect(failing.reading).toMatchObject({ ok: false, reason: 'expert-build-failed' });
    if (!failing.reading.ok) expect(failing.reading.detail).toContain('compiling');
  });
});
