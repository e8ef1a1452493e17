import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Ledger } from '../../../cache/ledger.js';
import { loadPullRequest } from '../../../cache/pull-requests.js';
import type { Db } from '../../../cache/store.js';
import { ConfigError } from '../../../pipeline/errors.js';
import { parseAsvConfig } from '../../../pipeline/concepts/asv-config.js';
import { emitOutputSchema, type EmitOutput } from '../../../pipeline/concepts/records/emit-output.js';
import { synthesizeOutputSchema } from '../../../pipeline/concepts/records/synthesize-output.js';
import { benchmarkDirOf, REPO_DIR } from '../../../pipeline/services/environments/verification.js';
import type { ValidateConfig } from '../config.js';
import { pythonOf } from '../index.js';
import { commitKey } from '../../../pipeline/concepts/keys.js';
import type { MeasuredCandidate } from '../measured.js';
import { resolveResultsDir } from '../protocol/asv-invocation.js';

/**
 * The emitted tasks scoring can run, read from the store: each one's row (the expert patch) and
 * the environment validate measured it in (synthesize's verified image of the base commit, which
 * the runner rebuilds from the cached script when it is gone), with the asv layout.
 */

export interface ScoreTask {
  readonly instanceId: string;
  readonly expertPatch: string;
  /** validate's candidate without its patch: the scored side's patch goes in. */
  readonly candidate: Omit<MeasuredCandidate, 'patch'>;
}

/** Every emitted task in the store by instance id (done emit items whose candidate validate still keeps). */
export function emittedRows(ledger: Ledger): Map<string, EmitOutput> {
  const out = new Map<string, EmitOutput>();
  for (const row of ledger.list('emit', { statuses: ['done'] })) {
    if (ledger.get('validate', row.key)?.status !== 'done') continue;
    const parsed = emitOutputSchema.safeParse(row.output);
    if (parsed.success) out.set(parsed.data.row.instance_id, parsed.data);
  }
  return out;
}

/** `--task ID|DIR`: an instance id, or an emitted task folder (its metadata.json names the instance). */
export function resolveTaskArgument(arg: string): string {
  if (existsSync(arg) && statSync(arg).isDirectory()) {
    const meta = join(arg, 'metadata.json');
    if (!existsSync(meta))
      throw new ConfigError(`--task ${arg}: no metadata.json in the folder; is it an emitted task folder?`, { reason: 'invalid-task' });
    const parsed = JSON.parse(readFileSync(meta, 'utf8')) as { instance_id?: unknown };
    if (typeof parsed.instance_id !== 'string')
      throw new ConfigError(`--task ${arg}: metadata.json has no instance_id`, { reason: 'invalid-task' });
    return parsed.instance_id;
  }
  return arg;
}

/** The environment and layout of an emitted task, as validate's run assembles them; a ConfigError when the store lacks what it needs. */
export function loadScoreTask(
  db: Db,
  ledger: Ledger,
  emitted: EmitOutput,
  config: ValidateConfig,
  /** The repository's own pytest arguments (`repositories."owner/name".pytestArgs`). */
  pytestArgs: readonly string[] = [],
): ScoreTask {
  const row = emitted.row;
  const key = `${row.repo}#${row.pull_number}`;
  const missing = (what: string) =>
    new ConfigError(`${row.instance_id}: ${what} is not in the store`, {
      reason: 'task-incomplete',
      fix: `run \`perfmine stage validate --pr ${row.pull_number} --repo ${row.repo}\` first`,
    });
  const synth = ledger.get('synthesize', commitKey(row.repo, row.base_commit));
  const synthesize = synthesizeOutputSchema.safeParse(synth?.output);
  if (synth?.status !== 'done' || !synthesize.success) throw missing('its verified environment');
  const pr = loadPullRequest(db, row.repo, row.pull_number);
  if (!pr?.asvConfig) throw missing('its collected record with the asv config');
  const asvConfig = parseAsvConfig(pr.asvConfig.text);
  const resultsDir = asvConfig.ok ? (asvConfig.config as Record<string, unknown>)['results_dir'] : undefined;
  const s = synthesize.data;
  return {
    instanceId: row.instance_id,
    expertPatch: row.patch,
    candidate: {
      key,
      environment: {
        key,
        number: row.pull_number,
        baseImage: s.imageTag,
        synthesized: s,
        repoDir: REPO_DIR,
        python: pythonOf(config, s),
        env: config.env,
        network: config.networkRepos.includes(row.repo),
        pytestArgs,
      },
      layout: {
        repoDir: REPO_DIR,
        configPath: s.asvConfigPath,
        resultsDir: resolveResultsDir(s.asvConfigPath, typeof resultsDir === 'string' ? resultsDir : undefined),
        benchmarkDir: benchmarkDirOf(s.asvConfigPath, pr.asvConfig.text) ?? 'benchmarks',
      },
    },
  };
}
