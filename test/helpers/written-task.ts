import { createHash } from 'node:crypto';
import type { BlobRef } from '../../cache/blobs.js';
import type { StoredValidation, StoredWorkloadVerdict } from '../../cache/measurements.js';
import type { EnvironmentLock } from '../../pipeline/services/environments/lock.js';
import { sourceTierFiles } from '../../pipeline/services/environments/source-tier.js';
import type { MonthTask } from '../../stages/emit/month-files.js';
import { assembleRow } from '../../stages/emit/row.js';
import { taskFiles } from '../../stages/emit/task-files.js';

/**
 * A month of tasks like the demo's, assembled with emit's own functions (task-files.ts, the source
 * tier's files with perfmine-bench's task.json, a lock with an index distribution and a build
 * requirement, a sealed-history bundle): what the one writer produces, for the tests of its
 * readers (the Harbor export, the task folder layer) without a pipeline run.
 */

export const BASE = '4805bd9f70779794d6dfb7eb019b1c8824e37207';
export const NAMES = [
  'bench_core.TimeIsPrime.time_is_prime(1000003)',
  'bench_core.TimeIsPrime.time_is_prime(100003)',
  'bench_core.time_fib',
  'bench_core.time_sum_of_squares',
];
export const PATCH = [
  'diff --git a/fastmath/core.py b/fastmath/core.py',
  '--- a/fastmath/core.py',
  '+++ b/fastmath/core.py',
  '@@ -1,4 +1,6 @@',
  ' def fib(n):',
  '-    if n < 2:',
  '-        return n',
  '-    return fib(n - 1) + fib(n - 2)',
  '+    a, b = 0, 1',
  '+    for _ in range(n):',
  '+        a, b = b, a + b',
  '+    return a',
  '',
].join('\n');

function verdict(name: string, improved: boolean): StoredWorkloadVerdict {
  const [module, ...rest] = name.replace(/\(.*$/, '').split('.');
  const fn = rest.pop()!;
  return {
    workload: name,
    benchmark: name.replace(/\(.*$/, ''),
    module: module!,
    className: rest[0] ?? null,
    function: fn,
    params: name.includes('(') ? name.slice(name.indexOf('(')) : null,
    unit: 'seconds',
    baseMedian: improved ? 9e-4 : 1e-3,
    expertMedian: improved ? 6.4e-7 : 1e-3,
    speedup: improved ? 1393.37 : 1.01,
    asv: { mark: improved ? '-' : ' ', change: improved ? 'better' : 'same', ratio: improved ? 0.0007 : 0.99, tilde: false, pValue: 0.001 },
    paired: {
      change: improved ? 'improved' : 'unchanged',
      reason: improved ? null : 'not-significant',
      pairRatios: [],
      normalizedRatios: [],
      normalizedMedian: improved ? 0.0007 : 0.99,
      usablePairs: 20,
      fasterPairs: improved ? 20 : 9,
      threshold: 1.05,
      mds: 1.08,
      pValue: improved ? 1e-6 : 0.4,
      noise: 0.02,
      settled: null,
    },
  };
}

const validation: StoredValidation = {
  key: 'demo/fastmath#101',
  decision: 'kept',
  detail: '',
  pairs: 20,
  calibrationPairs: 20,
  machineFactors: [],
  calibrationFactors: [],
  calibrated: true,
  threshold: 1.05,
  falsePositives: { flagged: 0, compared: 6, rate: 0 },
  asvCalibrationFlags: 0,
  engine: 'perfmine',
  protocol: { engine: 'perfmine', rounds: 20, samples: 5, measuredMs: 38_893 },
  pairedOptions: { alpha: 0.0085 },
  mdsMedian: 1.08,
  selection: null,
};

const lock: EnvironmentLock = {
  python: '3.11.2',
  cutoff: '2025-03-22T10:00:00.000Z',
  upstream: 'http://127.0.0.1:40747/simple/',
  distributions: [
    { name: 'numtheory', version: '1.0', source: 'index', filename: 'numtheory-1.0-py3-none-any.whl', sha256: 'b'.repeat(64) },
    { name: 'fastmath', version: '0.1.0', source: 'editable', filename: null, sha256: null },
  ],
  build: [{ name: 'flit-core', version: '3.9.0', filename: 'flit_core-3.9.0.tar.gz', sha256: 'c'.repeat(64) }],
};

function blob(bytes: Buffer): BlobRef {
  return { sha256: createHash('sha256').update(bytes).digest('hex'), size: bytes.length, read: () => bytes };
}

/** A task of the month as emit writes it. */
export function writtenTask(number: number, improved: readonly string[]): MonthTask {
  const workloads = NAMES.map((n) => verdict(n, improved.includes(n)));
  const row = assembleRow({
    repo: 'demo/fastmath',
    number,
    baseSha: BASE,
    mergeSha: 'd'.repeat(40),
    createdAt: '2025-04-03T08:00:00Z',
    mergedAt: '2025-04-03T10:00:00Z',
    problemStatement: '# Task\n\nMake `fib` faster. "Quotes", a tab\tand a backslash \\ stay as they are.\n',
    patch: PATCH,
    imageName: `perfmine/demo__fastmath:${number}`,
    buildScript:
      '#!/usr/bin/env bash\nset -euo pipefail\ncd /repo\n"${PERFMINE_PYTHON:-python3}" -m pip install --no-build-isolation -e .\n',
    workloads,
    category: number === 101 ? 'use_better_algorithm' : null,
    difficulty: 'easy',
    classifier: 'heuristic',
  });
  const bundle = Buffer.from(`# v2 git bundle\nfake ${number}\n`);
  const perfmineFiles = sourceTierFiles({
    baseCommit: BASE,
    asvConfig: 'asv.conf.json',
    python: 'python3.11',
    protocol: validation.protocol ?? {},
  });
  const files = taskFiles({
    row,
    workloads,
    validation,
    baseImage: 'perfmine/base:bookworm',
    verifiedImage: 'perfmine/env-demo-fastmath:4805bd9f7077',
    scriptSource: 'template',
    pythonVersion: '3.11',
    repoUrl: 'https://github.com/demo/fastmath.git',
    provenance: { categorySource: 'heuristic', categoryReason: null, statementSource: 'measured', leakCheckBasis: 'base-tree' },
    perfmineFiles,
    sealedHistory: { 'source/repo.bundle': blob(bundle).sha256 },
    measuringTool: 'The environment has `perfmine-bench`.',
    lock,
  });
  return { row, files, blobs: { 'source/repo.bundle': blob(bundle) } };
}

export const IMPROVED: Readonly<Record<number, readonly string[]>> = {
  101: ['bench_core.time_fib'],
  107: NAMES.slice(0, 2),
  108: ['bench_core.time_sum_of_squares'],
};
export const MONTH_TASKS = Object.entries(IMPROVED).map(([n, improved]) => writtenTask(Number(n), improved));
