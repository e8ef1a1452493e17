import { resolve } from 'node:path';
import { checkDatabasePath } from '../../../cache/database-path.js';
import { Ledger } from '../../../cache/ledger.js';
import { openStore } from '../../../cache/store.js';
import { monthTasks } from '../../../stages/emit/index.js';
import { datasetFiles, type PublishedMonth } from '../../../tasks/publish/dataset-files.js';
import { writeDataset, type WriteReport } from '../../../tasks/publish/write-dataset.js';
import { gatedMonth, leftOutLine } from '../../../tasks/publish/task-replays.js';
import { harborDatasetFiles } from '../../../tasks/publish/harbor/harbor-dataset.js';
import { harborOptionsOf } from '../../services/verifier/options.js';
import { harborTaskInputs } from '../../services/verifier/task-inputs.js';
import { memorySource, readTaskFolderContents, TaskFolderError } from '../../../tasks/folder/index.js';
import { writeHarbor } from '../../../tasks/publish/harbor/write-harbor.js';
import { ConfigError, ItemError } from '../../errors.js';
import { repoFunnel } from '../../report/load.js';
import { costInputs } from '../../report/costs.js';
import { monthCosts } from '../../concepts/task-costs.js';
import { funnelTotals } from '../../report/render.js';
import { monthOf, monthWindow } from '../../window.js';
import { noteDb } from '../db-label.js';
import { containerLimits, DockerService } from '../../services/docker.js';
import { Metrics } from '../../metrics.js';
import { RegistryApi } from '../../services/registry/registry-api.js';
import { parseRegistry } from '../../services/registry/image-ref.js';
import { publishImages } from '../../../tasks/publish/images/publish-images.js';
import { openSession, print, printJson, type GlobalFlags } from '../session.js';

export interface PublishFlags {
  readonly to?: string;
  readonly months?: string[];
  /** `hf` (default): a Hugging Face dataset folder; `harbor`: one Harbor task folder per task. */
  readonly format?: string;
  /** Overrides emit.publish.minReplays (0: no replay gate). */
  readonly minReplays?: string;
  /** Overrides emit.publish.registry: push the tasks' images there and name them by digest. */
  readonly registry?: string;
}

export const PUBLISH_FORMATS = ['hf', 'harbor'] as const;

type LeftOut = { readonly instanceId: string; readonly month: string; readonly reason: string | null; readonly detail: string };

/**
 * The months without the tasks whose folders cannot be read (the one reader, tasks/folder) or, for
 * a Harbor export or a registry, cannot be exported (a folder from before the sealed format), each
 * named with why; publish goes on with the others.
 */
export function exportableMonths(months: readonly PublishedMonth[], harbor = true): { months: PublishedMonth[]; leftOut: LeftOut[] } {
  const leftOut: LeftOut[] = [];
  const kept = months.map((m) => ({
    ...m,
    tasks: m.tasks.filter((t) => {
      try {
        if (harbor) harborTaskInputs(t);
        else readTaskFolderContents(memorySource(t.row.instance_id, t.files, Object.keys(t.blobs)));
        return true;
      } catch (error) {
        if (!(error instanceof ItemError)) throw error;
        const reason = error instanceof TaskFolderError ? 'unreadable' : 'not-exportable';
        leftOut.push({ instanceId: t.row.instance_id, month: m.month, reason, detail: error.message });
        return false;
      }
    }),
  }));
  return { months: kept, leftOut };
}

/** What publish reaches with a registry; given by tests, made from the environment otherwise. */
export interface PublishDeps {
  readonly docker?: DockerService;
  readonly registryApi?: RegistryApi;
}

export interface PublishRun extends WriteReport {
  readonly format: (typeof PUBLISH_FORMATS)[number];
  readonly dir: string;
  readonly months: readonly { readonly month: string; readonly tasks: number }[];
  /** Emitted tasks the replay gate left out (emit.publish), with the reason. */
  /** Emitted tasks left out: by the replay gate, or (Harbor, registry) a folder that cannot be exported. */
  readonly leftOut: readonly LeftOut[];
  /** With a registry: the images pushed by this run, and those the registry already held whole (by digest). */
  readonly images: { readonly registry: string; readonly pushed: readonly string[]; readonly reused: readonly string[] } | null;
}

/** `perfmine publish`: the emitted months (all, or `--months`) as a Hugging Face dataset folder, or as Harbor tasks. */
export async function runPublish(flags: PublishFlags, globals: GlobalFlags, deps: PublishDeps = {}): Promise<PublishRun> {
  if (!flags.to) throw new ConfigError('publish: --to DIR is required', { reason: 'usage', fix: 'perfmine publish --to ./dataset' });
  const format = flags.format ?? 'hf';
  if (format !== 'hf' && format !== 'harbor')
    throw new ConfigError(`--format ${format}: not one of ${PUBLISH_FORMATS.join(', ')}`, { reason: 'usage' });
  const minReplays = flags.minReplays === undefined ? undefined : Number(flags.minReplays);
  if (minReplays !== undefined && !(Number.isInteger(minReplays) && minReplays >= 0))
    throw new ConfigError(`--min-replays ${flags.minReplays}: not a whole number of 0 or more`, { reason: 'usage' });
  if (flags.registry !== undefined && !parseRegistry(flags.registry))
    throw new ConfigError(`--registry ${flags.registry}: not a registry (host:port, optionally with a path)`, {
      reason: 'usage',
      fix: 'e.g. --registry 127.0.0.1:5000 or --registry registry.example.org/perfmine',
    });
  const session = openSession(globals, {
    ...(minReplays === undefined && flags.registry === undefined
      ? {}
      : {
          emit: {
            publish: {
              ...(minReplays === undefined ? {} : { minReplays }),
              ...(flags.registry === undefined ? {} : { registry: flags.registry }),
            },
          },
        }),
  });
  const path = session.config.db;
  if (checkDatabasePath(path, 'read') !== 'sqlite')
    throw new ConfigError(`db: no database at ${path}: nothing was emitted`, { reason: 'no-database' });
  for (const m of flags.months ?? [])
    if (!/^\d{4}-(0[1-9]|1[0-2])$/.test(m)) throw new ConfigError(`--months ${m}: not YYYY-MM`, { reason: 'usage' });
  if (!session.json) noteDb(path);
  const db = openStore(path, { readonly: true });
  try {
    const ledger = new Ledger(db);
    const emitted = [...new Set(ledger.list('emit', { statuses: ['done'] }).flatMap((r) => (r.at ? [monthOf(r.at)] : [])))].sort();
    const wanted = flags.months && flags.months.length > 0 ? [...new Set(flags.months)].sort() : emitted;
    const costs = costInputs(db);
    // only the tasks whose replays replicate (the gate, emit.publish); the others are listed
    let months: PublishedMonth[] = wanted.map((month) =>
      gatedMonth(
        db,
        session.config.out,
        {
          month,
          tasks: monthTasks({ ledger, log: session.log, db }, month),
          funnel: funnelTotals(repoFunnel(ledger, monthWindow(month))),
          costs: monthCosts(month, costs.candidates, costs.commits),
        },
        session.config.emit.publish,
      ),
    );
    const leftOut: LeftOut[] = months.flatMap((m) =>
      (m.gate?.decisions ?? [])
        .filter((d) => !d.published)
        .map(({ instanceId, month, reason, detail }) => ({ instanceId, month, reason, detail })),
    );
    const dir = resolve(flags.to);
    // with a registry, every image goes there first; the folder is written only once all are in place
    const registry = session.config.emit.publish.registry;
    // a task whose folder cannot be read, or cannot become a Harbor task (a folder from before the sealed format), is left out, named
    const kept = exportableMonths(months, format === 'harbor' || registry !== null);
    months = kept.months;
    leftOut.push(...kept.leftOut);
    let images: PublishRun['images'] = null;
    if (registry !== null) {
      const docker = deps.docker ?? new DockerService({ runLabel: 'publish', metrics: new Metrics() });
      const published = await publishImages(
        months.flatMap((m) => m.tasks),
        {
          docker,
          api: deps.registryApi ?? new RegistryApi(),
          log: session.log,
          registry,
          buildTimeoutMs: session.config.validate.buildTimeoutSeconds * 1000,
          limits: containerLimits(session.config.docker),
        },
      );
      const byId = new Map(published.tasks.map((t) => [t.row.instance_id, t]));
      months = months.map((m) => ({ ...m, tasks: m.tasks.map((t) => byId.get(t.row.instance_id) ?? t) }));
      images = { registry, pushed: published.pushed, reused: published.reused };
    }
    // both formats publish the same tasks: the months' tasks as assembled above
    const report =
      format === 'harbor'
        ? writeHarbor(
            dir,
            harborDatasetFiles(
              months.flatMap((m) => m.tasks),
              harborOptionsOf(session.config),
            ),
          )
        : writeDataset(dir, datasetFiles(months));
    return { ...report, format, dir, months: months.map((m) => ({ month: m.month, tasks: m.tasks.length })), leftOut, images };
  } finally {
    db.close();
  }
}

/** `perfmine publish`'s action: write the dataset folder (or the Harbor tasks) and say what changed. */
export async function publishCommand(flags: PublishFlags, globals: GlobalFlags): Promise<number> {
  const run = await runPublish(flags, globals);
  if (globals.json) printJson(run);
  else
    print(
      [
        `${run.dir}${run.format === 'harbor' ? ' (Harbor tasks)' : ''}: ${run.months.map((m) => `${m.month} (${m.tasks} task${m.tasks === 1 ? '' : 's'})`).join(', ') || 'no months'}`,
        `${run.written.length} file${run.written.length === 1 ? '' : 's'} written, ${run.unchanged} unchanged, ${run.removed.length} removed`,
        ...(run.images
          ? [
              `${run.images.registry}: ${run.images.pushed.length} image${run.images.pushed.length === 1 ? '' : 's'} pushed, ${run.images.reused.length} already there`,
              ...run.images.pushed.map((r) => `  pushed ${r}`),
            ]
          : []),
        ...run.leftOut.map(leftOutLine),
      ].join('\n'),
    );
  return 0;
}
