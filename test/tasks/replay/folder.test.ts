import { chmodSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { folderDigest } from '../../../pipeline/concepts/replay-files.js';
import { ItemError } from '../../../pipeline/errors.js';
import { validateConfig } from '../../../stages/validate/config.js';
import { verifiableFolder } from '../../../tasks/replay/verify-replay.js';
import { machineOf, parseProbe, probeScript } from '../../../tasks/replay/machine.js';
import { replayProtocol } from '../../../tasks/replay/protocol.js';
import { buildContext, readTaskFolder } from '../../../tasks/replay/task-folder.js';
import { taskFoldersOf } from '../../../tasks/folder/index.js';
import { tempDir } from '../../synthesize/harness.js';

const dir = tempDir('replay-folder');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The Dockerfile's tail as emit writes it (stages/emit/task-files.ts), enough for the expert variant. */
const DOCKERFILE = [
  'FROM perfmine/base:bookworm AS source',
  'COPY source/ /perfmine-source/',
  'FROM perfmine/base:bookworm',
  'COPY --from=source /repo /repo',
  'COPY docker_build.sh /perfmine/docker_build.sh',
  'WORKDIR /repo',
  'RUN PIP_CONSTRAINT=/perfmine/constraints.txt bash /perfmine/docker_build.sh && bash /perfmine/seal.sh modules',
  '',
].join('\n');

const PROTOCOL = {
  adaptive: { looks: [6, 10, 15], earlyAlphaShare: 0.15, futility: 0.001 },
  engine: 'perfmine',
  rounds: 20,
  roundsPerProcess: 1,
  samples: 5,
  warmupSeconds: 0.02,
  mode: 'alternate',
  cpusets: { base: '1', expert: '1', calibration: '1' },
  seed: 1378699634,
  hashSeed: '0',
  measuredMs: 38893,
  paired: {
    minPairs: 3,
    consistency: 0.75,
    alpha: 0.0085,
    thresholdFloor: 1.05,
    safetyFactor: 1.5,
    maxPriorDf: 30,
    minCalibrationPairs: 2,
    minNormalizationWorkloads: 5,
  },
};

function writeTask(at: string): void {
  const files: Record<string, string> = {
    Dockerfile: DOCKERFILE,
    'docker_build.sh': '#!/usr/bin/env bash\npip install -e .\n',
    'expert.patch': 'diff --git a/x.py b/x.py\n',
    'instruction.md': '# task\n',
    'metadata.json': JSON.stringify({
      instance_id: 'demo__fastmath-101',
      repo: 'demo/fastmath',
      pull_number: 101,
      base_commit: 'a'.repeat(40),
      month: '2025-04',
      environment: { base_image: 'perfmine/base:bookworm', python_version: '3.11' },
      measurement: { engine: 'perfmine', protocol: { rounds: 6 } },
    }),
    'workloads.json': JSON.stringify([
      {
        name: 'bench_core.time_fib',
        perfmine_verdict: { change: 'improved', normalized_median: 0.001, noise: 0.2, usable_pairs: 6, minimum_detectable_speedup: 1.6 },
      },
      {
        name: 'bench_core.time_sum',
        perfmine_verdict: { change: 'unchanged', normalized_median: 1.01, noise: 0.1, usable_pairs: 20, minimum_detectable_speedup: 1.1 },
      },
    ]),
    'perfmine/bench/task.json': JSON.stringify({
      base_commit: 'a'.repeat(40),
      asv_config: 'asv.conf.json',
      python: 'python3.11',
      protocol: PROTOCOL,
    }),
    'source/repo.bundle': 'bundle bytes',
    'replays/0e0e0e0e-0000-4000-8000-000000000000.json': '{}',
  };
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(at, name, '..'), { recursive: true });
    writeFileSync(join(at, name), text);
  }
  chmodSync(join(at, 'docker_build.sh'), 0o755);
}

describe('a task folder as a replay reads it', () => {
  const month = join(dir, '2025-04');
  const task = join(month, 'demo__fastmath-101');
  writeTask(task);
  mkdirSync(join(month, 'not-a-task'), { recursive: true });

  it('finds the task folders of a month directory, or the folder itself', () => {
    expect(taskFoldersOf(month)).toEqual([task]);
    expect(taskFoldersOf(task)).toEqual([task]);
    expect(taskFoldersOf(join(dir, 'absent'))).toEqual([]);
  });

  it('reads the task, its recorded workloads and protocol (task.json first), every file but replays/, and its digest', () => {
    const f = readTaskFolder(task);
    expect(f).toMatchObject({
      instanceId: 'demo__fastmath-101',
      repo: 'demo/fastmath',
      pullNumber: 101,
      month: '2025-04',
      baseImage: 'perfmine/base:bookworm',
      engine: 'perfmine',
      asvConfig: 'asv.conf.json',
      python: 'python3.11',
      expertPatch: 'diff --git a/x.py b/x.py\n',
    });
    expect(f.protocol['rounds']).toBe(20);
    expect(f.workloads).toEqual([
      { name: 'bench_core.time_fib', change: 'improved', normalizedMedian: 0.001, noise: 0.2, usablePairs: 6, mds: 1.6 },
      { name: 'bench_core.time_sum', change: 'unchanged', normalizedMedian: 1.01, noise: 0.1, usablePairs: 20, mds: 1.1 },
    ]);
    expect(f.files.map((x) => x.path)).toEqual([
      'Dockerfile',
      'docker_build.sh',
      'expert.patch',
      'instruction.md',
      'metadata.json',
      'perfmine/bench/task.json',
      'source/repo.bundle',
      'workloads.json',
    ]);
    expect(f.files.find((x) => x.path === 'docker_build.sh')!.mode).toBe(0o755);
    // the digest: the files that are built or measured (not the agent's texts, nor the replays)
    expect(f.digest).toBe(folderDigest(f.files.map((x) => [x.path, x.sha256] as const)));
    const withoutTexts = folderDigest(
      f.files.filter((x) => x.path !== 'instruction.md' && x.path !== 'metadata.json').map((x) => [x.path, x.sha256] as const),
    );
    expect(f.digest).toBe(withoutTexts);
    writeFileSync(join(task, 'instruction.md'), '# another text\n');
    expect(readTaskFolder(task).digest).toBe(f.digest);
    writeFileSync(join(task, 'expert.patch'), 'diff --git a/y.py b/y.py\n');
    expect(readTaskFolder(task).digest).not.toBe(f.digest);
    writeFileSync(join(task, 'expert.patch'), 'diff --git a/x.py b/x.py\n');
  });

  it('builds its context from the files on disk with their modes, the given Dockerfile last', () => {
    const f = readTaskFolder(task);
    const context = buildContext(f, 'FROM x\n', [{ name: '.extra', content: 'p' }]);
    expect(context.map((e) => e.name)).toEqual([
      'docker_build.sh',
      'expert.patch',
      'instruction.md',
      'metadata.json',
      'perfmine/bench/task.json',
      'source/repo.bundle',
      'workloads.json',
      '.extra',
      'Dockerfile',
    ]);
    expect(context.at(-1)).toEqual({ name: 'Dockerfile', content: 'FROM x\n' });
    expect(context[0]).toEqual({ name: 'docker_build.sh', content: { file: join(task, 'docker_build.sh') }, mode: 0o755 });
  });

  it('its text files as text, its bundles as blobs read from disk when needed, its instance and repository', () => {
    const f = readTaskFolder(task);
    const v = verifiableFolder(f);
    expect(v.row).toEqual({ instance_id: f.instanceId, repo: f.repo });
    expect(Object.keys(v.blobs)).toEqual(['source/repo.bundle']);
    expect(v.blobs['source/repo.bundle']!.sha256).toBe(f.files.find((x) => x.path === 'source/repo.bundle')!.sha256);
    expect(v.files['expert.patch']).toBe(f.expertPatch);
    expect(v.files['source/repo.bundle']).toBeUndefined();
  });

  it('names the file when the folder cannot be read', () => {
    const broken = join(dir, 'broken');
    writeTask(broken);
    writeFileSync(join(broken, 'workloads.json'), '[{"name": 3}]');
    expect(() => readTaskFolder(broken)).toThrow(ItemError);
    expect(() => readTaskFolder(broken)).toThrow(/workloads\.json: 0\.name/);
    rmSync(join(broken, 'perfmine'), { recursive: true });
    writeTask(broken);
    rmSync(join(broken, 'perfmine/bench/task.json'));
    expect(() => readTaskFolder(broken)).toThrow(/perfmine\/bench\/task\.json: missing \(task format 1/);
  });
});

describe("the replay's protocol", () => {
  const config = validateConfig.parse({ harness: { rounds: 8, clock: 'wall', cpus: '0' } });

  it("takes the task's recorded keys, the configured alpha recovered from the final analysis's, and the rest from the configuration; never the recorded seed", () => {
    const p = replayProtocol(PROTOCOL, config);
    expect(p.engine).toBe('perfmine');
    expect(p.harness).toMatchObject({
      rounds: 20,
      samples: 5,
      roundsPerProcess: 1,
      mode: 'alternate',
      hashSeed: '0',
      clock: 'wall',
      cpus: '0',
      seed: null,
    });
    expect(p.harness.adaptive.looks).toEqual([6, 10, 15]);
    expect(p.paired.alpha).toBeCloseTo(0.01, 12);
    // a protocol recorded before issue 37's keys: measured batch by batch, every workload and side every round
    expect(p.harness).toMatchObject({ interleave: 'batch', plan: 'even', calibrationRounds: null, samplesPerRound: 'fixed' });
    expect(p.recorded).toEqual([
      'rounds',
      'roundsPerProcess',
      'samples',
      'warmupSeconds',
      'mode',
      'hashSeed',
      'adaptive',
      'interleave',
      'plan',
      'calibrationRounds',
      'samplesPerRound',
      'paired',
    ]);
    // one recorded with them: taken as recorded
    const now = replayProtocol(
      { ...PROTOCOL, interleave: 'sample', plan: 'cost', calibrationRounds: 10, samplesPerRound: 'by-setup' },
      config,
    );
    expect(now.harness).toMatchObject({ interleave: 'sample', plan: 'cost', calibrationRounds: 10, samplesPerRound: 'by-setup' });
    // without looks the recorded alpha is the configured one
    const noLooks = replayProtocol({ ...PROTOCOL, rounds: 5, adaptive: { looks: [], earlyAlphaShare: 0.15, futility: 0.001 } }, config);
    expect(noLooks.harness.rounds).toBe(5);
    expect(noLooks.paired.alpha).toBeCloseTo(0.0085, 12);
    // task format 2 records the configured alpha: taken as it is, nothing recovered
    const recorded = replayProtocol({ ...PROTOCOL, configuredAlpha: 0.02 }, config);
    expect(recorded.paired.alpha).toBe(0.02);
  });

  it('falls back to the configuration for a protocol it cannot read', () => {
    const p = replayProtocol({ rounds: 1 }, config);
    expect(p.harness.rounds).toBe(8);
    expect(p.recorded).toEqual([]);
    expect(replayProtocol(null, config).harness.rounds).toBe(8);
  });
});

describe('the machine record', () => {
  it("reads the probe's lines, null where sysfs said nothing", () => {
    expect(probeScript('python3.11')).toContain('python3.11 --version');
    const reading = parseProbe(
      [
        'cpu_model=AMD EPYC 7B13',
        'cpuset_effective=1',
        'governor=',
        'smt=notsupported 0',
        'kernel=6.1.0',
        'python=Python 3.11.2',
        'loadavg=0.52 0.40 1.10',
        '',
      ].join('\n'),
    );
    expect(reading).toEqual({
      cpuModel: 'AMD EPYC 7B13',
      cpusetEffective: '1',
      governor: null,
      smt: 'notsupported 0',
      kernel: '6.1.0',
      python: 'Python 3.11.2',
      loadAverage: [0.52, 0.4, 1.1],
    });
    const m = machineOf(
      reading,
      { cpus: 2, memoryBytes: 1, kernel: '6.1.0', os: 'Debian GNU/Linux 12 (bookworm)', serverVersion: '20.10', cgroupVersion: '2' },
      '1',
      { cpus: 1, memoryMb: 2048, pidsLimit: 512 },
      [1, 1, 1],
    );
    expect(m).toEqual({
      cpu_model: 'AMD EPYC 7B13',
      cpus: 2,
      cpuset: '1',
      cpuset_effective: '1',
      governor: null,
      smt: 'notsupported 0',
      kernel: '6.1.0',
      os: 'Debian GNU/Linux 12 (bookworm)',
      docker: { server_version: '20.10', cgroup_version: '2', limits: { cpus: 1, memory_mb: 2048, pids_limit: 512 } },
      image_python: 'Python 3.11.2',
      load_average: { before: [0.52, 0.4, 1.1], after: [1, 1, 1] },
    });
    expect(machineOf(null, null, null, { cpus: 1, memoryMb: 1, pidsLimit: 1 }, null).cpu_model).toBeNull();
  });
});
