import { describe, expect, it } from 'vitest';
import type { StoredWorkloadVerdict } from '../../cache/measurements.js';
import { assembleRow, imageNameOf, instanceId, toJsonl, type RowInput } from '../../stages/emit/row.js';
import { taskDockerfile, workloadsJson } from '../../stages/emit/task-files.js';

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
    ]);
    expect(row).toMatchObject({
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

  it('rebuilds the environment with a Dockerfile from the base image: clone, checkout, build script', () => {
    const row = assembleRow(input);
    expect(
      taskDockerfile({ row, baseImage: 'perfmine/base:bookworm', repoUrl: 'https://github.com/{repo}.git', pythonVersion: '3.11' })
        .split('\n')
        .slice(3),
    ).toEqual([
      'FROM perfmine/base:bookworm',
      'ARG REPO_URL=https://github.com/acme/fastlib.git',
      `RUN git clone -q --no-checkout "$REPO_URL" /repo && git -C /repo checkout -q --detach ${'a'.repeat(40)}`,
      'ENV PERFMINE_PYTHON=python3.11',
      'COPY docker_build.sh /perfmine/docker_build.sh',
      'WORKDIR /repo',
      'RUN bash /perfmine/docker_build.sh',
      '',
    ]);
    expect(taskDockerfile({ row, baseImage: 'b', repoUrl: 'u', pythonVersion: null })).not.toContain('PERFMINE_PYTHON');
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
