import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { checkDatabasePath } from '../../../cache/database-path.js';
import { ImageInventories } from '../../../cache/image-inventories.js';
import { ReplayStore } from '../../../cache/replays.js';
import { openStore } from '../../../cache/store.js';
import { machineLine, type ReplayRecord } from '../../concepts/records/replay-record.js';
import { replayTask, type TaskReplay } from '../../../tasks/replay/replay-task.js';
import { benchTaskOf, diskSource, readTaskFolderContents, taskFoldersOf, TaskFolderError } from '../../../tasks/folder/index.js';
import { ConfigError, EXIT, ItemError } from '../../errors.js';
import { perfmineVersion } from '../../package-root.js';
import { DockerService } from '../../services/docker.js';
import { startLocalIndex, type LocalIndex } from '../../services/package-index/local-index.js';
import { noteDb } from '../db-label.js';
import { openSession, print, printJson, type GlobalFlags } from '../session.js';

export interface ReplayFlags {
  readonly times?: string;
  readonly index?: string;
  /** `--no-cache` sets it false. */
  readonly cache?: boolean;
  readonly keepImages?: boolean;
  readonly note?: string;
}

export interface ReplayRun {
  readonly tasks: readonly TaskReplay[];
  /** Folders that could not be replayed at all (unreadable), with why. */
  readonly unreadable: readonly { readonly dir: string; readonly reason: string; readonly message: string }[];
  /** Stopped by SIGINT / SIGTERM (the replays recorded so far are kept). */
  readonly interrupted: boolean;
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** One replay in a few lines: the verdict, the times, the machine, and each judged workload. */
export function formatReplay(r: ReplayRecord, index: number, of: number): string {
  const share = r.replicated_share === null ? '' : ` (${r.replicated}/${r.judged} improved workloads replicate)`;
  const lines = [
    `${r.task.instance_id}  replay ${index}/${of}  ${r.verdict}${r.reason && r.verdict !== 'replicates' ? `: ${r.reason}` : ''}${share}`,
    `  ${r.build.reused ? 'build reused' : `build ${seconds(r.durations.build_ms)} (base ${seconds(r.build.base_ms ?? 0)}, expert ${seconds(r.build.expert_ms ?? 0)}), scan ${seconds(r.durations.scan_ms)}`}, measurement ${seconds(r.durations.measure_ms)}, machine time ${seconds(r.durations.machine_ms)}`,
    `  machine: ${machineLine(r.machine)}; cpuset ${r.machine.cpuset ?? 'none'}; governor ${r.machine.governor ?? 'n/a'}; SMT ${r.machine.smt ?? 'n/a'}; ${r.machine.image_python ?? 'python n/a'}; load ${r.machine.load_average.before?.join(' ') ?? 'n/a'} -> ${r.machine.load_average.after?.join(' ') ?? 'n/a'}`,
    ...r.workloads.filter((w) => w.outcome !== null).map((w) => `  ${w.outcome!.padEnd(18)} ${w.name}: ${w.why}`),
  ];
  if (r.verdict === 'failed' && r.detail) lines.push(...r.detail.split('\n').map((l) => `  ${l}`));
  return lines.join('\n');
}

/** `perfmine replay`: each task folder the path names, rebuilt from the folder alone and measured again, `--times` times. */
export async function runReplay(path: string, flags: ReplayFlags, globals: GlobalFlags): Promise<ReplayRun> {
  const times = flags.times === undefined ? 1 : Number(flags.times);
  if (!Number.isInteger(times) || times < 1 || times > 100)
    throw new ConfigError(`--times ${flags.times}: not a whole number from 1 to 100`, { reason: 'usage' });
  if (!existsSync(path) || !statSync(path).isDirectory())
    throw new ConfigError(`replay: ${path} is not a directory`, {
      reason: 'usage',
      fix: 'pass a task folder (out/YYYY-MM/<instance_id>) or a month directory (out/YYYY-MM)',
    });
  const folders = taskFoldersOf(path);
  if (folders.length === 0)
    throw new ConfigError(`replay: ${resolve(path)} is neither a task folder (metadata.json, Dockerfile) nor a directory of them`, {
      reason: 'usage',
    });
  // every folder read first (its JSON and texts; its files are hashed once, by the replay), before Docker or the store is touched: a single
  // folder that cannot be read is a user error; in a month directory it is listed and skipped
  const unreadable: { dir: string; reason: string; message: string }[] = [];
  const readable: string[] = [];
  for (const dir of folders) {
    try {
      benchTaskOf(readTaskFolderContents(diskSource(dir)));
      readable.push(dir);
    } catch (error) {
      if (!(error instanceof TaskFolderError)) throw error;
      if (folders.length === 1)
        throw new ConfigError(`replay: ${error.message}`, {
          reason: 'invalid-task',
          ...(error.fix ? { fix: error.fix } : {}),
          cause: error,
        });
      unreadable.push({ dir, reason: error.reason, message: error.message });
    }
  }
  const index = flags.index ?? null;
  if (index !== null && !/^(https?:\/\/.+|dir:.+)$/.test(index))
    throw new ConfigError(`--index ${index}: expected an index URL (http://…/simple/) or dir:PATH`, { reason: 'usage' });
  if (index?.startsWith('dir:') && !existsSync(index.slice(4)))
    throw new ConfigError(`--index ${index}: no such directory`, { reason: 'usage' });

  const session = openSession(globals);
  const dbPath = session.config.db;
  checkDatabasePath(dbPath, 'write');
  if (!session.json) noteDb(dbPath);
  const docker = new DockerService();
  await docker.ping();
  const db = openStore(dbPath);
  let local: LocalIndex | null = null;
  const controller = new AbortController();
  const stop = () => controller.abort();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  try {
    // dir:PATH: a loopback index over the directory, for this command only (builds reach it on the host's network)
    if (index?.startsWith('dir:')) local = await startLocalIndex({ dir: resolve(index.slice(4)) });
    const indexUrl = local?.url ?? index;
    const store = new ReplayStore(db);
    await docker.removeLeftovers().catch(() => undefined);
    const tasks: TaskReplay[] = [];
    if (!session.json) for (const u of unreadable) print(`${u.dir}: not replayed: ${u.message}`);
    for (const dir of readable) {
      if (controller.signal.aborted) break;
      let made = 0;
      try {
        tasks.push(
          await replayTask(
            dir,
            {
              docker,
              config: session.config,
              log: session.log,
              store,
              inventories: new ImageInventories(db),
              times,
              indexUrl,
              noCache: flags.cache === false,
              keepImages: flags.keepImages ?? false,
              note: flags.note ?? null,
              version: perfmineVersion(),
              onRecord: (r) => {
                made += 1;
                if (!session.json) print(formatReplay(r, made, times));
              },
            },
            controller.signal,
          ),
        );
      } catch (error) {
        if (controller.signal.aborted) break;
        if (!(error instanceof ItemError)) throw error;
        unreadable.push({ dir, reason: error.reason, message: error.message });
        if (!session.json) print(`${dir}: not replayed: ${error.message}`);
      }
    }
    return { tasks, unreadable, interrupted: controller.signal.aborted };
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
    await local?.close();
    db.close();
  }
}

/**
 * The command's action. Exit 0 when every folder was replayed as asked (whatever the verdicts), 1
 * when a folder could not be read or a replay failed (a build, the scan or the measurement broke:
 * the record says which), 130 when interrupted.
 */
export async function replayCommand(path: string, flags: ReplayFlags, globals: GlobalFlags): Promise<number> {
  const run = await runReplay(path, flags, globals);
  const records = run.tasks.flatMap((t) => t.records);
  if (globals.json) printJson(run);
  else {
    const count = (v: string) => records.filter((r) => r.verdict === v).length;
    print(
      `\n${records.length} replay${records.length === 1 ? '' : 's'} of ${run.tasks.length} task${run.tasks.length === 1 ? '' : 's'}: ${count('replicates')} replicate, ${count('does-not-replicate')} do not, ${count('inconclusive')} inconclusive, ${count('failed')} failed${run.unreadable.length > 0 ? `; ${run.unreadable.length} folder(s) not replayed` : ''}`,
    );
  }
  if (run.interrupted) return EXIT.interrupted;
  return run.unreadable.length > 0 || records.some((r) => r.verdict === 'failed') ? EXIT.itemsFailed : EXIT.ok;
}
