import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { BlobRef } from '../../../cache/blobs.js';
import type { TarEntry } from '../tar.js';
import { contentDigest, type FileContent } from './file-content.js';
import { FAILURE_REWARD, FLOOR_REWARD, REWARD_FORMULA } from './reward-formula.js';
import { harborTaskInputs, HarborExportError, type HarborTaskInputs } from './task-inputs.js';
import { WHEELS_DIR } from '../../concepts/vendored-wheels.js';
import { packagePath } from '../../package-root.js';

/**
 * The verifier's folder of a perfmine task (Harbor's `tests/`) and the environment it runs in
 * (Harbor's `environment/`): made from the task's own files for the Harbor export and for every
 * run of the verifier perfmine makes itself (`perfmine score`, `perfmine replay`), so that all of
 * them judge by the same rules.
 *
 * - `tests/`: test.sh, perfmine's verifier (perfmine/verify.py and what it runs), its spec
 *   (perfmine/verify.json: base commit, asv config, protocol, validate's time limits, every
 *   workload's expert speedup and verdict, the seed of its perturbed inputs), the expert's patch
 *   (perfmine/expert.patch, mode 0600: measured beside the agent's change), the trusted inputs of
 *   the base side (source/ bundles, docker_build.sh, constraints.txt, the lock's files under wheels/
 *   when the task carries them) and MANIFEST.sha256 over all of them.
 * - `environment/`: the task's Dockerfile (sealed history, lock, build script) with its build
 *   context, plus the lines that make the agent the unprivileged user `agent`, owner of /repo, and
 *   /tests root's alone.
 *
 * Pure: the verifier's files are given (verifier-files.ts), blobs stay references; test.sh is
 * perfmine_test.sh beside this module, read from the package root.
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
  /**
   * Hosts the agent may reach while it works (its model's API: `emit.publish.agentAllowedHosts`):
   * Harbor's `[agent] network_mode = "allowlist"`; the verifier keeps no network. Empty: none.
   */
  readonly agentAllowedHosts?: readonly string[];
}

/** A file of the export: its content and its mode. */
export interface HarborFile {
  readonly content: FileContent;
  readonly mode: number;
}

/**
 * The rounds the verifier measures the task's improved workloads in, at the least (REWARD_ROUNDS in
 * perfmine_verify.py; test/verifier/interleave-extend.test.ts keeps the two the same): the rounds after the
 * protocol's measure those workloads alone, on three sides.
 */
export const REWARD_ROUNDS = 20;

/**
 * The task's time limits (seconds): the agent's (an hour and five of validate's measurements), the
 * verifier's (half an hour, two builds, three measurements, and the reward's extra rounds when the
 * protocol has fewer than REWARD_ROUNDS, counted as if every workload were improved), the build's.
 */
export function harborTimeouts(
  measuredMs: number | null,
  buildTimeoutSeconds: number,
  rounds: number | null = null,
): { agent: number; verifier: number; build: number } {
  const measured = (measuredMs ?? 600_000) / 1000;
  const minute = (s: number) => Math.ceil(s / 60) * 60;
  const extra = rounds !== null && rounds > 0 && rounds < REWARD_ROUNDS ? (0.75 * (REWARD_ROUNDS - rounds)) / rounds : 0;
  return {
    agent: minute(3600 + 5 * measured),
    verifier: minute(1800 + 2 * buildTimeoutSeconds + (3 + extra) * measured),
    build: minute(Math.max(1800, buildTimeoutSeconds)),
  };
}

/** The protocol's rounds, as the task's perfmine/bench/task.json records them (null when it does not). */
export function protocolRounds(protocol: Readonly<Record<string, unknown>>): number | null {
  const rounds = protocol['rounds'];
  return typeof rounds === 'number' && Number.isInteger(rounds) && rounds > 0 ? rounds : null;
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

/**
 * What a verifier's run needs of a task: its instance id and repository (for the pytest
 * arguments), its files and its blobs, as an emitted task holds them (a task folder read from
 * disk gives the same).
 */
export interface VerifiableTask {
  readonly row: { readonly instance_id: string; readonly repo: string };
  readonly files: Readonly<Record<string, string>>;
  readonly blobs: Readonly<Record<string, BlobRef>>;
}

/** The verifier's spec (tests/perfmine/verify.json), read by perfmine_verify.py. */
export function verifySpec(task: VerifiableTask, inputs: HarborTaskInputs, options: HarborOptions): string {
  return json({
    instance_id: task.row.instance_id,
    base_commit: inputs.baseCommit,
    asv_config: inputs.asvConfig,
    python: inputs.python,
    bundle: 'source/repo.bundle',
    build_script: 'docker_build.sh',
    constraints: inputs.constraints ? 'constraints.txt' : null,
    // the lock's files: every side's build finds them there, with no index (perfmine_verify.py pip_env)
    ...(inputs.wheels.length > 0 ? { wheels: WHEELS_DIR } : {}),
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
export function probeSeed(task: VerifiableTask): string {
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

const executable = (name: string) => name.startsWith('usr/') || /\.(py|sh)$/.test(name) || name === 'docker_build.sh';

/** The Harbor environment of a task, by path relative to environment/: its Dockerfile with the agent's user, and the build context. */
export function harborEnvironmentFiles(task: VerifiableTask): Map<string, HarborFile> {
  const inputs = harborTaskInputs(task);
  const out = new Map<string, HarborFile>();
  for (const name of inputs.environmentFiles) {
    if (name === 'Dockerfile') continue;
    out.set(name, { content: task.files[name] ?? task.blobs[name]!, mode: executable(name) ? 0o755 : 0o644 });
  }
  const dockerfile = task.files['Dockerfile']!;
  out.set('Dockerfile', { content: `${dockerfile.replace(/\n+$/, '')}\n${agentUserLines().join('\n')}\n`, mode: 0o644 });
  return out;
}

/** The verifier's folder of a task (Harbor's tests/), by path relative to it, MANIFEST.sha256 included. */
export function harborTestsFiles(task: VerifiableTask, options: HarborOptions): Map<string, HarborFile> {
  const inputs = harborTaskInputs(task);
  const tests = new Map<string, HarborFile>();
  const test = (path: string, content: FileContent, mode = 0o644) => tests.set(path, { content, mode });
  test('test.sh', testScript(task.row.instance_id), 0o755);
  test('docker_build.sh', task.files['docker_build.sh']!, 0o755);
  if (inputs.constraints) test('constraints.txt', task.files['constraints.txt']!);
  for (const bundle of inputs.bundles) test(bundle, task.blobs[bundle]!);
  for (const wheel of inputs.wheels) test(wheel, task.blobs[wheel]!);
  for (const file of options.verifierFiles) test(file.name, textOf(file), file.mode ?? 0o644);
  test('perfmine/verify.json', verifySpec(task, inputs, options));
  // the reference side of the measurement; root's alone in /tests (the agent never gets tests/)
  test('perfmine/expert.patch', task.files['expert.patch']!, 0o600);
  tests.set('MANIFEST.sha256', { content: manifest(tests), mode: 0o644 });
  return tests;
}

/** The unprivileged user the agent works as ([agent] user); it owns /repo. */
export const AGENT_USER = 'agent';
/** The user the verifier runs the code under test as (never the agent's). */
export const CODE_USER = 'nobody';

/**
 * Harbor's tests/test.sh of a task: perfmine_test.sh beside this module (read from the package
 * root) with the task's id for `@INSTANCE_ID@` (its first comment line) and the reward's formula
 * for the line `# @REWARD_FORMULA@`. The script itself takes no parameter: FAILURE_REWARD and CODE_USER are
 * written out in it (test/environments/shell-files.test.ts keeps them the same).
 */
export const TEST_SCRIPT_TEMPLATE: string = readFileSync(packagePath('pipeline', 'services', 'verifier', 'perfmine_test.sh'), 'utf8');

export function testScript(instanceId: string): string {
  const formula = wrap(REWARD_FORMULA, 100)
    .map((l) => `# ${l}`)
    .join('\n');
  return TEST_SCRIPT_TEMPLATE.replace('# @REWARD_FORMULA@', () => formula).replace('@INSTANCE_ID@', () => instanceId);
}

/** Lines appended to the task's Dockerfile: the agent's user, owner of /repo (the image's default user stays root). */
export function agentUserLines(): string[] {
  return [
    `# Harbor: the agent works as the unprivileged user ${AGENT_USER} ([agent] user in task.toml), who owns /repo; the verifier`,
    `# runs as root and runs the code under test as ${CODE_USER}, so that nothing the agent leaves can reach the base side,`,
    "# the image or the verifier. /tests, where Harbor copies the verifier's files (the expert's patch among them) once the",
    "# agent is done, is root's alone from the start: a process the agent left behind cannot read them.",
    `RUN useradd --create-home --user-group --shell /bin/bash ${AGENT_USER} && chown -R ${AGENT_USER}:${AGENT_USER} /repo && mkdir -m 700 /tests`,
  ];
}

/** Words of `text` in lines of at most `width` characters. */
export function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(line);
  return lines;
}
