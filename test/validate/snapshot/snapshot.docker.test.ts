import { describe, expect, it } from 'vitest';
import { DockerService } from '../../../pipeline/services/docker.js';
import { parseSnapshotComparison, parseSnapshotRecord } from '../../../stages/validate/correctness/snapshot.js';
import { harnessTarEntries, SNAPSHOT_CONTAINER_PATH } from '../../../pipeline/services/environments/harness-files.js';
import { writeFilesScript } from '../../../stages/validate/protocol/container-files.js';
import { parseFramedOutput } from '../../../stages/validate/protocol/framed-output.js';
import { snapshotScript } from '../../../stages/validate/protocol/snapshot-script.js';
import { toyProjectFiles } from './suite.js';

/**
 * The snapshot helper inside the base image (Debian's Python 3.11), through the foundation's
 * DockerService: nothing mounted, the files written by the container's own command.
 */
const BASE_IMAGE = process.env.PERFMINE_TEST_BASE_IMAGE ?? 'perfmine/base:bookworm';
const docker = new DockerService({ runLabel: `test-snapshot-${process.pid}` });
const limits = { cpus: 1, memoryMb: 512, pidsLimit: 256 };

function prefixed(root: string, files: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(files).map(([p, t]) => [`${root}/${p}`, t]));
}

describe('the snapshot helper in perfmine/base:bookworm', () => {
  it('records on the base and compares on the expert in fresh containers', async () => {
    const settings = {
      repoDir: '/work/base',
      python: 'python3',
      configPath: 'asv.conf.json',
      bench: null,
      perCallSeconds: 30,
      timeLimitSeconds: 120,
    };
    // the helper and the harness it reads the asv config with, copied in as the stage does
    const files = harnessTarEntries();

    const record = await docker.run({
      image: BASE_IMAGE,
      cmd: [
        'bash',
        '-c',
        snapshotScript(settings, {
          script: SNAPSHOT_CONTAINER_PATH,
          mode: 'record',
          prelude: writeFilesScript(prefixed('/work/base', toyProjectFiles())),
        }),
      ],
      files,
      timeoutMs: 180_000,
      limits,
      tailChars: 2_000_000,
    });
    expect(record.exitCode).toBe(0);
    const recorded = parseFramedOutput(record.stdout).files.find((f) => f.kind === 'snapshot')!.content;
    const base = parseSnapshotRecord(recorded);
    expect(base.python).toMatch(/^3\.11\./);
    expect(base.workloads).toHaveLength(13);

    const compare = await docker.run({
      image: BASE_IMAGE,
      cmd: [
        'bash',
        '-c',
        snapshotScript(
          { ...settings, repoDir: '/work/expert' },
          {
            script: SNAPSHOT_CONTAINER_PATH,
            mode: 'compare',
            baseline: '/perfmine/baseline.json',
            prelude: writeFilesScript({
              '/perfmine/baseline.json': recorded,
              ...prefixed('/work/expert', toyProjectFiles({ expert: true })),
            }),
          },
        ),
      ],
      files,
      timeoutMs: 180_000,
      limits,
      tailChars: 2_000_000,
    });
    const comparison = parseSnapshotComparison(parseFramedOutput(compare.stdout).files.find((f) => f.kind === 'snapshot')!.content);
    expect(comparison.counts).toEqual({ equal: 6, mismatch: 2, skipped: 5 });
    expect(comparison.results.filter((r) => r.outcome === 'mismatch').map((r) => r.name)).toEqual([
      'funcs.time_fragile',
      'funcs.time_total',
    ]);
  });
});
