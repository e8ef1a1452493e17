import { createHash } from 'node:crypto';
import { contentDigest, type FileContent, type MonthTask } from '../../month-files.js';
import type { TarEntry } from '../../../../pipeline/services/tar.js';
import { taskIdentity } from '../../row.js';
import { harborInstruction } from './instruction.js';
import { FAILURE_REWARD, FLOOR_REWARD, REWARD_FORMULA } from './reward-formula.js';
import { AGENT_USER, agentUserLines, solveScript, testScript } from './scripts.js';
import { HARBOR_FLOAT_KEYS, HARBOR_SCHEMA_VERSION, harborTaskConfigSchema, type HarborTaskConfig } from './task-config.js';
import { harborTaskInputs, HarborExportError, type HarborTaskInputs } from './task-inputs.js';
import { tomlDocument } from './toml.js';

/**
 * One perfmine task as a Harbor task folder (Harbor's documented layout: task.toml, instruction.md,
 * environment/, solution/solve.sh, tests/test.sh), from the task folder's own files:
 *
 * - `environment/`: the task's Dockerfile (sealed history, lock, build script) with its whole
 *   build context (source/, perfmine/, usr/, docker_build.sh, the lock's files), plus the lines
 *   that make the agent the unprivileged user `agent`, owner of /repo.
 * - `solution/`: solve.sh and expert.patch (Harbor copies it to /solution for the oracle).
 * - `tests/`: test.sh, perfmine's verifier (perfmine/verify.py and what it runs), its spec
 *   (perfmine/verify.json: base commit, asv config, protocol, validate's time limits, every
 *   workload's expert speedup and verdict, the seed of its perturbed inputs), the expert's patch
 *   (perfmine/expert.patch, mode 0600: measured beside the agent's change), the trusted inputs of
 *   the base side (source/ bundles, docker_build.sh, constraints.txt) and MANIFEST.sha256 over all
 *   of them. The folder is written 0700 and the environment makes /tests root's alone.
 * - `task.toml`: Harbor's schema (task-config.ts), timeouts from the measured compare time, CPUs,
 *   memory, storage, no network, the agent's and the verifier's users, the task's metadata.
 *
 * Pure: the verifier's files are given (verifier-files.ts), blobs stay references.
 */

export interface HarborOptions {
  /** The environment's limits: perfmine's container limits (docker.cpus, memoryMb, diskMb). */
  readonly cpus: number;
  readonly memoryMb: number;
  readonly storageMb: number;
  /** validate's correctness settings, which the verifier repeats. */
  readonly testTimeoutSeconds: number;
  readonly pytestArgs: readonly string[];
  /** A repository's own pytest arguments, added after `pytestArgs` (`repositories."owner/name".pytestArgs`). */
  readonly repositoryPytestArgs?: (repo: string) => readonly string[];
  readonly snapshotTimeoutSeconds: number;
  readonly snapshotCallSeconds: number;
  /** A side's build time limit in the verifier, and the environment's build timeout. */
  readonly buildTimeoutSeconds: number;
  /** The verifier's files (verifierFiles()), placed under tests/. */
  readonly verifierFiles: readonly TarEntry[];
  /** `perfmine X.Y.Z`, for the metadata. */
  readonly producer: string;
}

/** A file of the export: its content and its mode. */
export interface HarborFile {
  readonly content: FileContent;
  readonly mode: number;
}

/** Seconds the agent, the verifier and the environment's build get (documented in the README). */
export function harborTimeouts(measuredMs: number | null, buildTimeoutSeconds: number): { agent: number; verifier: number; build: number } {
  const measured = (measuredMs ?? 600_000) / 1000;
  const minute = (s: number) => Math.ceil(s / 60) * 60;
  return {
    agent: minute(3600 + 5 * measured),
    verifier: minute(1800 + 2 * buildTimeoutSeconds + 3 * measured),
    build: minute(Math.max(1800, buildTimeoutSeconds)),
  };
}

function textOf(entry: TarEntry): string | Uint8Array {
  const { content } = entry;
  if (typeof content === 'string') return content;
  if (Buffer.isBuffer(content)) return new Uint8Array(content);
  throw new HarborExportError(`${entry.name}: a verifier file must be given by its content`);
}

function json(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

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
  };
}

export function harborTaskConfig(task: MonthTask, inputs: HarborTaskInputs, options: HarborOptions): HarborTaskConfig {
  const { row } = task;
  const improved = inputs.workloads.filter((w) => w.verdict === 'improved').map((w) => w.name);
  const timeouts = harborTimeouts(inputs.measuredMs, options.buildTimeoutSeconds);
  const config = {
    schema_version: HARBOR_SCHEMA_VERSION,
    source: 'perfmine',
    task: {
      name: `perfmine/${row.instance_id}`,
      description: `Make ${row.repo} faster where pull request #${row.pull_number} did (${improved.length} improved asv workload${improved.length === 1 ? '' : 's'}), without changing its behaviour.`,
      keywords: ['performance', 'optimization', 'python', 'asv', ...(row.category ? [row.category] : [])],
    },
    metadata: metadataOf(task, inputs, improved, options.producer),
    verifier: { timeout_sec: timeouts.verifier, user: 'root' },
    agent: { timeout_sec: timeouts.agent, user: AGENT_USER },
    environment: {
      build_timeout_sec: timeouts.build,
      os: 'linux' as const,
      cpus: options.cpus,
      memory_mb: options.memoryMb,
      storage_mb: options.storageMb,
      network_mode: 'no-network' as const,
      allow_internet: false,
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

/** The verifier's spec (tests/perfmine/verify.json), read by perfmine_verify.py. */
export function verifySpec(task: MonthTask, inputs: HarborTaskInputs, options: HarborOptions): string {
  return json({
    instance_id: task.row.instance_id,
    base_commit: inputs.baseCommit,
    asv_config: inputs.asvConfig,
    python: inputs.python,
    bundle: 'source/repo.bundle',
    build_script: 'docker_build.sh',
    constraints: inputs.constraints ? 'constraints.txt' : null,
    protocol: inputs.protocol,
    build_timeout_seconds: options.buildTimeoutSeconds,
    tests: {
      timeout_seconds: options.testTimeoutSeconds,
      args: [...options.pytestArgs, ...(options.repositoryPytestArgs?.(task.row.repo) ?? [])],
    },
    snapshot: { timeout_seconds: options.snapshotTimeoutSeconds, call_seconds: options.snapshotCallSeconds },
    expert_patch: 'perfmine/expert.patch',
    probe_seed: probeSeed(task),
    workloads: inputs.workloads.map((w) => ({ name: w.name, speedup: w.speedup, verdict: w.verdict, improved: w.verdict === 'improved' })),
    reward: { failure: FAILURE_REWARD, floor: FLOOR_REWARD, formula: REWARD_FORMULA },
  });
}

/**
 * The seed of the verifier's perturbed inputs: drawn from the expert's patch, which the agent never
 * sees, so the inputs cannot be known in advance; the same task gives the same seed (and bytes).
 */
export function probeSeed(task: MonthTask): string {
  return createHash('sha256')
    .update(`perfmine-probe\0${task.row.instance_id}\0${task.files['expert.patch'] ?? ''}`)
    .digest('hex')
    .slice(0, 32);
}

/** sha256sum's check file over the folder's files (paths relative to it, sorted by code point). */
export function manifest(files: ReadonlyMap<string, HarborFile>): string {
  const paths = [...files.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  for (const p of paths) if (/\s|\\/.test(p)) throw new HarborExportError(`${p}: a verifier file's path cannot hold spaces or backslashes`);
  return paths.map((p) => `${contentDigest(files.get(p)!.content)}  ${p}\n`).join('');
}

/** Every file of the Harbor task, by path relative to its folder. */
export function harborTaskFiles(task: MonthTask, options: HarborOptions): Map<string, HarborFile> {
  const { row } = task;
  const inputs = harborTaskInputs(task);
  const improved = inputs.workloads.filter((w) => w.verdict === 'improved').map((w) => w.name);
  const out = new Map<string, HarborFile>();
  const put = (path: string, content: FileContent, mode = 0o644) => out.set(path, { content, mode });
  const from = (name: string): FileContent => task.files[name] ?? task.blobs[name]!;
  const executable = (name: string) => name.startsWith('usr/') || /\.(py|sh)$/.test(name) || name === 'docker_build.sh';

  put('task.toml', harborTaskToml(harborTaskConfig(task, inputs, options), row.instance_id));
  put('instruction.md', harborInstruction({ row, rebuildWorking: inputs.rebuildWorking, improved }));
  for (const name of inputs.environmentFiles) {
    if (name === 'Dockerfile') continue;
    put(`environment/${name}`, from(name), executable(name) ? 0o755 : 0o644);
  }
  const dockerfile = task.files['Dockerfile']!;
  put('environment/Dockerfile', `${dockerfile.replace(/\n+$/, '')}\n${agentUserLines().join('\n')}\n`);
  put('solution/solve.sh', solveScript(row.instance_id), 0o755);
  put('solution/expert.patch', task.files['expert.patch']!);

  const tests = new Map<string, HarborFile>();
  const test = (path: string, content: FileContent, mode = 0o644) => tests.set(path, { content, mode });
  test('test.sh', testScript(row.instance_id), 0o755);
  test('docker_build.sh', task.files['docker_build.sh']!, 0o755);
  if (inputs.constraints) test('constraints.txt', task.files['constraints.txt']!);
  for (const bundle of inputs.bundles) test(bundle, task.blobs[bundle]!);
  for (const file of options.verifierFiles) test(file.name, textOf(file), file.mode ?? 0o644);
  test('perfmine/verify.json', verifySpec(task, inputs, options));
  // the reference side of the measurement; root's alone in /tests (the agent never gets tests/)
  test('perfmine/expert.patch', task.files['expert.patch']!, 0o600);
  for (const [path, file] of tests) out.set(`tests/${path}`, file);
  put('tests/MANIFEST.sha256', manifest(tests));
  return out;
}
