import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, exitCodeOf, ItemError } from '../../../pipeline/errors.js';
import { BENCH_SCRIPT } from '../../../pipeline/services/environments/harness-files.js';
import type { MonthTask } from '../../../stages/emit/month-files.js';
import {
  BENCH_FEATURES,
  BENCH_TASK_FILE,
  diskSource,
  memorySource,
  readTaskFolderContents,
  TASK_FORMAT,
  TaskFolderError,
} from '../../../tasks/folder/index.js';
import { readTaskFolder } from '../../../tasks/replay/task-folder.js';
import { resolveTaskArgument } from '../../../tasks/score/task-source.js';
import { harborTaskInputs } from '../../../pipeline/services/verifier/task-inputs.js';
import { exportableMonths } from '../../../pipeline/cli/commands/publish.js';
import { runCli } from '../../helpers/cli.js';
import { tempDir } from '../../helpers/harness.js';
import { MONTH_TASKS } from '../../helpers/written-task.js';

/**
 * The task folder layer (tasks/folder): what emit's writer writes, its one reader reads, from disk
 * and from the store alike; every file a user can hand perfmine broken in each way is a named
 * TaskFolderError (an item error), which `score --task DIR` turns into a user error (exit 2,
 * before anything is built) and publish into a task left out with the reason.
 */

const dir = tempDir('task-folder-layer');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const TASK = MONTH_TASKS[0]!;

/** A task of the store written to disk as emit's finish writes it (texts, then the bundles' bytes). */
function writeFolder(name: string, task: MonthTask, edit: (files: Record<string, string>) => void = () => {}): string {
  const at = join(dir, name);
  rmSync(at, { recursive: true, force: true });
  const files = { ...task.files };
  edit(files);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(at, path, '..'), { recursive: true });
    writeFileSync(join(at, path), text);
  }
  for (const [path, ref] of Object.entries(task.blobs)) {
    mkdirSync(join(at, path, '..'), { recursive: true });
    writeFileSync(join(at, path), ref.read());
  }
  return at;
}

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  return null;
}

describe('what the writer writes, the one reader reads', () => {
  it('the same contents from disk and from the store: format, metadata, workloads, task.json, texts', () => {
    const fromStore = readTaskFolderContents(memorySource(TASK.row.instance_id, TASK.files, Object.keys(TASK.blobs)));
    const fromDisk = readTaskFolderContents(diskSource(writeFolder('same', TASK)));
    expect(fromStore.format).toBe(TASK_FORMAT);
    expect(fromStore.metadata.instance_id).toBe(TASK.row.instance_id);
    expect(fromStore.metadata.workloads?.improved).toEqual(['bench_core.time_fib']);
    expect(fromStore.workloads.map((w) => w.name)).toHaveLength(4);
    expect(fromStore.bench?.base_commit).toBe(TASK.row.base_commit);
    expect(fromStore.features).toEqual([...BENCH_FEATURES]);
    const { label: _a, ...store } = fromStore;
    const { label: _b, ...disk } = fromDisk;
    expect(disk).toEqual(store);
  });

  it("every feature task.json declares is one the folder's perfmine-bench has (its usage names it)", () => {
    const usage = execFileSync('python3', [BENCH_SCRIPT, 'compare', '--help'], { encoding: 'utf8' });
    for (const feature of BENCH_FEATURES) expect(usage, feature).toContain(`--${feature}`);
  });

  it('a folder of format 1 (no task_format) is read, its features from its perfmine-bench; a later format is refused, naming both', () => {
    const old = readTaskFolderContents(
      memorySource(
        'old',
        {
          ...TASK.files,
          'metadata.json': JSON.stringify({ ...JSON.parse(TASK.files['metadata.json']!), task_format: undefined }),
          [BENCH_TASK_FILE]: JSON.stringify({ ...JSON.parse(TASK.files[BENCH_TASK_FILE]!), features: undefined }),
        },
        [],
      ),
    );
    expect(old.format).toBe(1);
    expect(old.features).toEqual(['rebuild-working']);
    const later = thrown(() =>
      readTaskFolderContents(
        memorySource(
          'later',
          { ...TASK.files, 'metadata.json': JSON.stringify({ ...JSON.parse(TASK.files['metadata.json']!), task_format: TASK_FORMAT + 1 }) },
          [],
        ),
      ),
    );
    expect(later).toBeInstanceOf(TaskFolderError);
    expect((later as Error).message).toContain(
      `task format ${TASK_FORMAT + 1}, written by a newer perfmine (this one reads formats 1 to ${TASK_FORMAT})`,
    );
    expect((later as ItemError).fix).toMatch(/upgrade perfmine/);
  });
});

/** Each file of a folder, broken in the ways a copy, an edit or a truncated download breaks it, and what the error must name. */
const BROKEN: readonly (readonly [string, (files: Record<string, string>) => void, RegExp])[] = [
  ['metadata-truncated', (f) => (f['metadata.json'] = f['metadata.json']!.slice(0, 40)), /metadata\.json: not JSON/],
  ['metadata-array', (f) => (f['metadata.json'] = '[1, 2]'), /metadata\.json: \(top level\)/],
  ['metadata-no-id', (f) => (f['metadata.json'] = f['metadata.json']!.replace('"instance_id"', '"id"')), /metadata\.json: instance_id/],
  [
    'metadata-bad-commit',
    (f) => (f['metadata.json'] = f['metadata.json']!.replaceAll(TASK.row.base_commit, 'main')),
    /metadata\.json: base_commit/,
  ],
  ['metadata-missing', (f) => delete f['metadata.json'], /metadata\.json: missing/],
  ['workloads-truncated', (f) => (f['workloads.json'] = '[{"name": "a"'), /workloads\.json: not JSON/],
  ['workloads-object', (f) => (f['workloads.json'] = '{}'), /workloads\.json: \(top level\)/],
  ['workloads-no-verdict', (f) => (f['workloads.json'] = '[{"name": "a"}]'), /workloads\.json: 0\.perfmine_verdict/],
  ['task-json-truncated', (f) => (f[BENCH_TASK_FILE] = '{"base_commit'), /perfmine\/bench\/task\.json: not JSON/],
  [
    'task-json-other-commit',
    (f) => (f[BENCH_TASK_FILE] = f[BENCH_TASK_FILE]!.replace(TASK.row.base_commit, 'f'.repeat(40))),
    /task\.json: base_commit f{40} is not metadata\.json's/,
  ],
  ['dockerfile-missing', (f) => delete f['Dockerfile'], /Dockerfile: missing/],
  ['build-script-empty', (f) => (f['docker_build.sh'] = '\n'), /docker_build\.sh: empty/],
  ['expert-patch-missing', (f) => delete f['expert.patch'], /expert\.patch: missing/],
];

describe('a folder broken in each file', () => {
  it.each(BROKEN)('%s: a TaskFolderError naming the file, from disk and from the store alike', (name, edit, message) => {
    const files = { ...TASK.files };
    edit(files);
    for (const read of [
      () => readTaskFolderContents(memorySource(name, files, Object.keys(TASK.blobs))),
      () => readTaskFolder(writeFolder(name, TASK, edit)),
      () => harborTaskInputs({ row: TASK.row, files, blobs: TASK.blobs }),
    ]) {
      const error = thrown(read);
      expect(error, name).toBeInstanceOf(TaskFolderError);
      expect(error, name).toBeInstanceOf(ItemError);
      expect((error as Error).message, name).toMatch(message);
      expect((error as ItemError).fix, name).toMatch(/perfmine stage emit --force/);
    }
  });

  it.each(BROKEN.filter(([name]) => name !== 'metadata-missing'))(
    '%s: `score --task DIR` stops as a user error (exit 2) before anything is built, writing nothing',
    (name, edit, message) => {
      const folder = writeFolder(`score-${name}`, TASK, edit);
      const before = readdirSync(folder, { recursive: true }).sort();
      const error = thrown(() => resolveTaskArgument(folder));
      expect(error, name).toBeInstanceOf(ConfigError);
      expect(exitCodeOf(error), name).toBe(2);
      expect((error as Error).message, name).toMatch(message);
      expect((error as Error).message, name).toContain(`--task ${folder}`);
      expect(readdirSync(folder, { recursive: true }).sort()).toEqual(before);
    },
  );

  it('`score --task DIR` with no metadata.json says it is not a task folder; a sound folder gives its instance id', () => {
    const none = writeFolder('score-none', TASK, (f) => delete f['metadata.json']);
    expect(() => resolveTaskArgument(none)).toThrow(/no metadata\.json in the folder/);
    expect(resolveTaskArgument(writeFolder('score-ok', TASK))).toBe(TASK.row.instance_id);
    expect(resolveTaskArgument('o__n-2')).toBe('o__n-2');
    expect(existsSync(join(dir, 'o__n-2'))).toBe(false);
  });

  it('publish leaves out each broken task with the reason and keeps the sound ones (both formats)', () => {
    const funnel = { collected: 0, filtered: 0, classified: 0, built: 0, validated: 0, emitted: MONTH_TASKS.length };
    const broken = BROKEN.map(([name, edit]): MonthTask => {
      const files = { ...TASK.files };
      edit(files);
      return { ...TASK, row: { ...TASK.row, instance_id: `broken__${name}-1` }, files };
    });
    for (const harbor of [false, true]) {
      const kept = exportableMonths([{ month: '2025-04', tasks: [...MONTH_TASKS, ...broken], funnel }], harbor);
      expect(kept.months[0]!.tasks).toEqual(MONTH_TASKS);
      expect(kept.leftOut.map((l) => l.instanceId)).toEqual(broken.map((b) => b.row.instance_id));
      expect(kept.leftOut.every((l) => l.reason === 'unreadable')).toBe(true);
      for (const [i, [, , message]] of BROKEN.entries()) expect(kept.leftOut[i]!.detail).toMatch(message);
    }
  });

  it('the commands a user hands a folder to: `perfmine replay` and `perfmine score --task` exit 2 naming the file, and write no store', async () => {
    const folder = writeFolder('cli-broken', TASK, (f) => (f['workloads.json'] = '[{"name": "a"'));
    const db = join(dir, 'cli.db');
    const replay = await runCli(['replay', folder, '--db', db]);
    expect(replay.code, replay.stderr).toBe(2);
    expect(replay.stderr).toMatch(/workloads\.json: not JSON/);
    expect(replay.stderr).toMatch(/perfmine stage emit --force/);
    const score = await runCli(['score', '--task', folder, '--patch', join(folder, 'expert.patch'), '--db', db]);
    expect(score.code, score.stderr).toBe(2);
    expect(score.stderr).toMatch(/workloads\.json: not JSON/);
    expect(existsSync(db)).toBe(false);
  });
});
