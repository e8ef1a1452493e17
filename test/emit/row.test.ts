import { describe, expect, it } from 'vitest';
import type { StoredWorkloadVerdict } from '../../cache/measurements.js';
import { assembleRow, imageNameOf, instanceId, toJsonl, type RowInput } from '../../stages/emit/row.js';
import { taskDockerfile, workloadsJson } from '../../stages/emit/task-files.js';
import { sourceTierFiles } from '../../pipeline/services/environments/source-tier.js';
import { buildConstraints, requirementsLock, type EnvironmentLock } from '../../pipeline/services/environments/lock.js';

function workload(name: string, speedup: number | null, change: StoredWorkloadVerdict['paired']['change']): StoredWorkloadVerdict {
  return {
    workload: name,
    benchmark: name.replace(/\(.*$/, ''),
    module: 'bench',
    className: 'Suite',
    function: 'time_x',
    params: null,
    unit: 'seconds',
    baseMedian: speedup === null ? null : 2,
    expertMedian: speedup === null ? null : 2 / speedup,
    speedup,
    asv: {
      mark: change === 'improved' ? '-' : ' ',
      change: change === 'improved' ? 'improved' : 'unchanged',
      ratio: speedup === null ? null : 1 / speedup,
      tilde: false,
      pValue: 0.001,
    },
    paired: {
      change,
      reason: null,
      pairRatios: [0.5, 0.5],
      normalizedRatios: [0.5, 0.5],
      normalizedMedian: 0.5,
      usablePairs: 2,
      fasterPairs: 2,
      threshold: 1.2,
      mds: 1.1,
      pValue: 0.001,
      noise: 0.02,
      settled: null,
    },
  };
}

const input: RowInput = {
  repo: 'acme/fastlib',
  number: 101,
  baseSha: 'a'.repeat(40),
  mergeSha: 'b'.repeat(40),
  createdAt: '2025-04-02T10:00:00Z',
  mergedAt: '2025-04-30T23:59:59+00:00',
  problemStatement: '# Slow groupby\n',
  patch: 'diff --git a/x b/x\n',
  imageName: 'perfmine/acme__fastlib:101',
  buildScript: 'pip install -e .\n',
  workloads: [
    workload('bench.Suite.time_z', 4, 'improved'),
    workload('bench.Suite.time_a', 1, 'unchanged'),
    workload('bench.Suite.time_m', null, 'incomparable'),
  ],
  category: 'use_better_algorithm',
  difficulty: 'medium',
  classifier: 'gpt-4.1-mini',
};

describe('dataset rows', () => {
  it('assembles a SWE-bench-style row with perfmine fields, in a fixed key order', () => {
    const row = assembleRow(input);
    expect(Object.keys(row)).toEqual([
      'instance_id',
      'repo',
      'pull_number',
      'base_commit',
      'merge_commit',
      'created_at',
      'merged_at',
      'problem_statement',
      'patch',
      'image_name',
      'build_script',
      'workloads',
      'expert_speedup',
      'category',
      'difficulty',
      'classifier',
      'month',
      'docker_image',
      'base_image',
    ]);
    expect(row).toMatchObject({
      docker_image: null,
      base_image: null,
      instance_id: 'acme__fastlib-101',
      created_at: '2025-04-02T10:00:00.000Z',
      merged_at: '2025-04-30T23:59:59.000Z',
      month: '2025-04',
      workloads: { count: 3, names: ['bench.Suite.time_a', 'bench.Suite.time_m', 'bench.Suite.time_z'] },
    });
    // geometric mean over workloads with a speedup (4 and 1), and over the improved one (4)
    expect(row.expert_speedup).toEqual({ all: 2, improved: 4 });
  });

  it('has no speedup over improved workloads when none is improved', () => {
    expect(assembleRow({ ...input, workloads: [workload('b.t', 1.01, 'unchanged')] }).expert_speedup).toEqual({
      all: 1.01,
      improved: null,
    });
  });

  it('writes JSONL sorted by instance id, one line per row', () => {
    const a = assembleRow({ ...input, repo: 'zeta/lib', number: 3 });
    const b = assembleRow(input);
    const c = assembleRow({ ...input, number: 99 });
    const text = toJsonl([a, b, c]);
    expect(text.split('\n').map((l) => (l === '' ? '' : (JSON.parse(l) as { instance_id: string }).instance_id))).toEqual([
      'acme__fastlib-101',
      'acme__fastlib-99',
      'zeta__lib-3',
      '',
    ]);
    expect(toJsonl([])).toBe('');
  });

  it('names ids and images from the repository and number', () => {
    expect(instanceId('pandas-dev/pandas', 58000)).toBe('pandas-dev__pandas-58000');
    expect(imageNameOf('perfmine/{owner}__{name}:{number}', 'PyData/Xarray', 7)).toBe('perfmine/pydata__xarray:7');
  });

  it("rebuilds the environment from the folder alone: its sealed history in a stage of its own, perfmine's files, the lock, the build script", () => {
    const row = assembleRow(input);
    const perfmineFiles = sourceTierFiles();
    const chmod = `RUN chmod 0755 ${perfmineFiles
      .filter((f) => ((f.mode ?? 0) & 0o111) !== 0)
      .map((f) => `/${f.name}`)
      .join(' ')}`;
    const sealed = [
      'FROM perfmine/base:bookworm AS source',
      'COPY source/ /perfmine-source/',
      'COPY perfmine/seal.sh /perfmine-source/seal.sh',
      `RUN bash /perfmine-source/seal.sh from-bundle /perfmine-source/repo.bundle ${'a'.repeat(40)}`,
      'FROM perfmine/base:bookworm',
      'COPY --from=source /repo /repo',
      'COPY perfmine/ /perfmine/',
      'COPY usr/ /usr/',
      chmod,
      'ENV PERFMINE_PYTHON=python3.11',
    ];
    const dockerfile = (lock: EnvironmentLock | null) =>
      taskDockerfile({ row, baseImage: 'perfmine/base:bookworm', pythonVersion: '3.11', perfmineFiles, lock })
        .split('\n')
        .filter((l) => !l.startsWith('#'));
    expect(dockerfile(null)).toEqual([
      ...sealed,
      'COPY docker_build.sh /perfmine/docker_build.sh',
      'WORKDIR /repo',
      'RUN bash /perfmine/docker_build.sh && bash /perfmine/seal.sh modules',
      '',
    ]);
    // with a lock: the index's files installed hash-checked first, the build's requirements constrained, the result checked
    const lock: EnvironmentLock = {
      python: '3.11.2',
      cutoff: '2025-04-01T00:00:00.000Z',
      upstream: 'http://127.0.0.1:8080/simple/',
      distributions: [
        { name: 'numtheory', version: '1.0', source: 'index', filename: 'numtheory-1.0-py3-none-any.whl', sha256: 'b'.repeat(64) },
        { name: 'fastlib', version: '0.1', source: 'editable', filename: null, sha256: null },
        { name: 'pytest', version: '7.2.1', source: 'image', filename: null, sha256: null },
      ],
      build: [{ name: 'cython', version: '3.0.0', filename: 'cython-3.0.0.tar.gz', sha256: 'c'.repeat(64) }],
    };
    expect(dockerfile(lock)).toEqual([
      ...sealed,
      'COPY requirements.lock constraints.txt lock.json /perfmine/',
      'ARG PIP_INDEX_URL=https://pypi.org/simple/',
      'RUN "${PERFMINE_PYTHON:-python3}" -m pip install --no-cache-dir --require-hashes --no-deps -r /perfmine/requirements.lock',
      'COPY docker_build.sh /perfmine/docker_build.sh',
      'WORKDIR /repo',
      'RUN PIP_CONSTRAINT=/perfmine/constraints.txt bash /perfmine/docker_build.sh && bash /perfmine/seal.sh modules && "${PERFMINE_PYTHON:-python3}" /perfmine/perfmine_lock.py check /perfmine/lock.json',
      '',
    ]);
    expect(
      requirementsLock(lock, 't')
        .split('\n')
        .filter((l) => !l.startsWith('#')),
    ).toEqual(['numtheory==1.0 \\', `    --hash=sha256:${'b'.repeat(64)}`, '']);
    expect(buildConstraints(lock)).toBe('cython==3.0.0\nnumtheory==1.0\n');
    expect(taskDockerfile({ row, baseImage: 'b', pythonVersion: null, perfmineFiles, lock: null })).not.toContain('PERFMINE_PYTHON=');
    // a repository with a package tier of its own: its base image and its Debian packages, not the tier's local tag
    const tiered = taskDockerfile({
      row,
      baseImage: 'perfmine/pkgs-acme-fastlib:0123456789abcdef',
      pythonVersion: '3.13',
      perfmineFiles,
      lock: null,
      packageTier: { baseImage: 'perfmine/base:trixie', debianPackages: ['libgeos-dev', 'cython3'] },
    });
    expect(tiered).not.toContain('perfmine/pkgs-');
    expect(tiered.split('\n').filter((l) => l.startsWith('FROM '))).toEqual([
      'FROM perfmine/base:trixie AS source',
      'FROM perfmine/base:trixie',
    ]);
    expect(tiered).toContain(' && apt-get install -y --no-install-recommends cython3 libgeos-dev \\');
  });

  it('lists every workload with its place in the suite, medians, speedup, p-value and both verdicts', () => {
    const rows = JSON.parse(workloadsJson(input.workloads)) as Record<string, unknown>[];
    expect(rows.map((r) => r['name'])).toEqual(['bench.Suite.time_a', 'bench.Suite.time_m', 'bench.Suite.time_z']);
    expect(rows[2]).toMatchObject({
      module: 'bench',
      class: 'Suite',
      function: 'time_x',
      unit: 'seconds',
      base_median: 2,
      expert_median: 0.5,
      speedup: 4,
      p_value: 0.001,
      asv_verdict: { mark: '-', change: 'improved' },
      perfmine_verdict: { change: 'improved', normalized_median: 0.5, threshold: 1.2, pair_ratios: [0.5, 0.5] },
    });
  });
});
