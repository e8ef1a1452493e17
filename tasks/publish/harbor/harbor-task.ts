import { type MonthTask } from '../../../stages/emit/month-files.js';
import { taskIdentity } from '../../../stages/emit/row.js';
import { harborInstruction } from './instruction.js';
import { FAILURE_REWARD, FLOOR_REWARD, REWARD_FORMULA } from '../../../pipeline/services/verifier/reward-formula.js';
import { solveScript } from './scripts.js';
import { HARBOR_FLOAT_KEYS, HARBOR_SCHEMA_VERSION, harborTaskConfigSchema, type HarborTaskConfig } from './task-config.js';
import { harborTaskInputs, HarborExportError, type HarborTaskInputs } from '../../../pipeline/services/verifier/task-inputs.js';
import {
  AGENT_USER,
  harborEnvironmentFiles,
  harborTestsFiles,
  harborTimeouts,
  protocolRounds,
  type HarborFile,
  type HarborOptions,
} from '../../../pipeline/services/verifier/verifier-folder.js';
import type { FileContent } from '../../../pipeline/services/verifier/file-content.js';
import { tomlDocument } from './toml.js';

export { harborTimeouts, type HarborFile, type HarborOptions } from '../../../pipeline/services/verifier/verifier-folder.js';

/**
 * One perfmine task as a Harbor task folder (Harbor's documented layout: task.toml, instruction.md,
 * environment/, solution/solve.sh, tests/test.sh), from the task folder's own files: environment/
 * and tests/ as the verifier's folder makes them (pipeline/services/verifier/verifier-folder.ts),
 * solution/ (solve.sh and expert.patch: Harbor copies it to /solution for the oracle), and
 * task.toml in Harbor's schema (task-config.ts: timeouts from the measured compare time, CPUs,
 * memory, storage, no network, the agent's and the verifier's users, the task's metadata). Pure.
 */

/**
 * The Harbor a task needs, in its metadata and the export's README: Harbor honours `[agent] user`
 * only since its changes of 2026-03-24 (before, the agent runs as root, and the verifier's
 * isolation of the agent's processes and files rests on it not being root); its default agent
 * (terminus) needs tmux in the image, which perfmine's base image has.
 */
export const HARBOR_REQUIRES =
  'Harbor released on or after 2026-03-24 (one that runs the agent as [agent] user: an agent run as root could reach the verifier); task.toml schema 1.3';

/** The metadata table: the task's facts, as strings, numbers and lists (TOML has no null). */
function metadataOf(task: MonthTask, inputs: HarborTaskInputs, improved: readonly string[], producer: string): Record<string, unknown> {
  const { row } = task;
  const expert = row.expert_speedup;
  return {
    source: 'perfmine',
    producer,
    ...taskIdentity(row),
    category: row.category ?? undefined,
    difficulty: row.difficulty ?? undefined,
    image_name: row.image_name,
    workloads: inputs.workloads.length,
    improved_workloads: [...improved],
    expert_speedup_improved: expert.improved ?? undefined,
    expert_speedup_all: expert.all ?? undefined,
    measurement_engine: 'perfmine',
    measured_seconds: inputs.measuredMs === null ? undefined : Math.round(inputs.measuredMs / 100) / 10,
    reward_formula: REWARD_FORMULA,
    reward_failure: FAILURE_REWARD,
    reward_floor: FLOOR_REWARD,
    harbor_requires: HARBOR_REQUIRES,
  };
}

export function harborTaskConfig(task: MonthTask, inputs: HarborTaskInputs, options: HarborOptions): HarborTaskConfig {
  const { row } = task;
  const improved = inputs.workloads.filter((w) => w.verdict === 'improved').map((w) => w.name);
  const timeouts = harborTimeouts(inputs.measuredMs, options.buildTimeoutSeconds, protocolRounds(inputs.protocol));
  const hosts = [...(options.agentAllowedHosts ?? [])];
  const config = {
    schema_version: HARBOR_SCHEMA_VERSION,
    source: 'perfmine',
    task: {
      name: `perfmine/${row.instance_id}`,
      description: `Make ${row.repo} faster where pull request #${row.pull_number} did (${improved.length} improved asv workload${improved.length === 1 ? '' : 's'}), without changing its behaviour.`,
      keywords: ['performance', 'optimization', 'python', 'asv', ...(row.category ? [row.category] : [])],
    },
    metadata: metadataOf(task, inputs, improved, options.producer),
    verifier: { timeout_sec: timeouts.verifier, user: 'root', network_mode: 'no-network' as const },
    agent: {
      timeout_sec: timeouts.agent,
      user: AGENT_USER,
      // an agent that needs its model's API: those hosts only, while it runs (Harbor's phase override)
      ...(hosts.length > 0 ? { network_mode: 'allowlist' as const, allowed_hosts: hosts } : {}),
    },
    environment: {
      build_timeout_sec: timeouts.build,
      os: 'linux' as const,
      cpus: options.cpus,
      memory_mb: options.memoryMb,
      storage_mb: options.storageMb,
      // with allowed hosts, the environment's own network is open for Harbor's agent setup (installing the agent);
      // the agent's run is held to the allowlist and the verifier to none
      network_mode: hosts.length > 0 ? ('public' as const) : ('no-network' as const),
      allow_internet: hosts.length > 0,
      ...(row.docker_image ? { docker_image: row.docker_image } : {}),
    },
  };
  const checked = harborTaskConfigSchema.safeParse(config);
  if (!checked.success) throw new HarborExportError(`${row.instance_id}: task.toml: ${checked.error.issues[0]?.message ?? 'invalid'}`);
  return checked.data;
}

/** task.toml's text. */
export function harborTaskToml(config: HarborTaskConfig, instanceId: string): string {
  return tomlDocument(config as never, {
    floats: HARBOR_FLOAT_KEYS,
    comment: [
      `${instanceId}: a perfmine task in Harbor's task format (schema_version ${HARBOR_SCHEMA_VERSION}, https://harborframework.com/docs/tasks).`,
      'Written by `perfmine publish --format harbor`; the verifier is tests/test.sh, its reward formula is in [metadata].',
    ],
  });
}

/** Every file of the Harbor task, by path relative to its folder. */
export function harborTaskFiles(task: MonthTask, options: HarborOptions): Map<string, HarborFile> {
  const { row } = task;
  const inputs = harborTaskInputs(task);
  const improved = inputs.workloads.filter((w) => w.verdict === 'improved').map((w) => w.name);
  const out = new Map<string, HarborFile>();
  const put = (path: string, content: FileContent, mode = 0o644) => out.set(path, { content, mode });
  put('task.toml', harborTaskToml(harborTaskConfig(task, inputs, options), row.instance_id));
  put('instruction.md', harborInstruction({ row, rebuildWorking: inputs.rebuildWorking, improved }));
  for (const [path, file] of harborEnvironmentFiles(task)) out.set(`environment/${path}`, file);
  put('solution/solve.sh', solveScript(row.instance_id), 0o755);
  put('solution/expert.patch', task.files['expert.patch']!);
  for (const [path, file] of harborTestsFiles(task, options)) out.set(`tests/${path}`, file);
  return out;
}
