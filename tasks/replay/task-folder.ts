import { folderDigest } from '../../pipeline/concepts/replay-files.js';
import type { TarEntry } from '../../pipeline/services/tar.js';
import { benchTaskOf, diskSource, hashedFiles, readTaskFolderContents, type FolderFile } from '../folder/index.js';
import type { RecordedWorkload } from './rule.js';

/**
 * A task folder as a replay reads it, from the folder alone (no store): what the task is
 * (metadata.json), what validate recorded per workload (workloads.json), how it measured
 * (`perfmine/bench/task.json`: asv config, interpreter, protocol), the Dockerfile and the expert
 * patch; every file with its mode, for the build context; and the folder's digest. Read by the
 * one reader (tasks/folder): anything missing or malformed is a TaskFolderError naming the file.
 */

export interface TaskFolder {
  readonly dir: string;
  readonly instanceId: string;
  readonly repo: string;
  readonly pullNumber: number;
  readonly month: string | null;
  readonly baseCommit: string;
  /**
   * The image the Dockerfile starts from (metadata.json environment.base_image; in a published
   * folder, that image by digest in its registry): what the outside scan compares with.
   */
  readonly baseImage: string;
  readonly engine: string;
  /** The recorded protocol (task.json's, else metadata.json's). */
  readonly protocol: Readonly<Record<string, unknown>>;
  readonly asvConfig: string;
  /** The interpreter validate measured with (`python3.11`). */
  readonly python: string;
  readonly workloads: readonly RecordedWorkload[];
  readonly dockerfile: string;
  readonly expertPatch: string;
  /** Every file but replays/, sorted by path. */
  readonly files: readonly FolderFile[];
  readonly digest: string;
}

/** A task folder as a replay reads it (the one reader, tasks/folder): a TaskFolderError naming the file when it cannot. */
export function readTaskFolder(path: string): TaskFolder {
  const source = diskSource(path);
  const folder = readTaskFolderContents(source);
  const task = benchTaskOf(folder);
  const { metadata } = folder;
  const pythonVersion = metadata.environment.python_version ?? null;
  const files = hashedFiles(source.files);
  return {
    dir: source.dir,
    instanceId: metadata.instance_id,
    repo: metadata.repo,
    pullNumber: metadata.pull_number,
    month: metadata.month ?? null,
    baseCommit: metadata.base_commit,
    baseImage: metadata.images?.bases[metadata.environment.base_image] ?? metadata.environment.base_image,
    engine: metadata.measurement.engine,
    protocol: Object.keys(task.protocol).length > 0 ? task.protocol : (metadata.measurement.protocol ?? {}),
    asvConfig: task.asv_config,
    python: task.python ?? (pythonVersion ? `python${pythonVersion}` : 'python3'),
    workloads: folder.workloads.map((w) => ({
      name: w.name,
      change: w.perfmine_verdict.change,
      normalizedMedian: w.perfmine_verdict.normalized_median ?? null,
      noise: w.perfmine_verdict.noise ?? null,
      usablePairs: w.perfmine_verdict.usable_pairs ?? 0,
      mds: w.perfmine_verdict.minimum_detectable_speedup ?? null,
    })),
    dockerfile: folder.dockerfile,
    expertPatch: folder.expertPatch,
    files,
    digest: folderDigest(files.map((f) => [f.path, f.sha256] as const)),
  };
}

/** The build context: every file of the folder (streamed from disk) with its mode, the Dockerfile given. */
export function buildContext(folder: TaskFolder, dockerfile: string, extra: readonly TarEntry[] = []): TarEntry[] {
  return [
    ...folder.files
      .filter((f) => f.path !== 'Dockerfile')
      .map((f): TarEntry => ({ name: f.path, content: { file: f.absolute }, mode: f.mode })),
    ...extra,
    { name: 'Dockerfile', content: dockerfile },
  ];
}
