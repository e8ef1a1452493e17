import { posix } from 'node:path';
import { FRAME, emitFileLines, framedInt, parseFramedOutput } from './framed-output.js';
import { shellJoin, shellQuote } from './shell.js';

/**
 * One asv invocation in a fresh container of the candidate's image: the command lines, the
 * environment, the script that runs them and hands the results file back on stdout, and the
 * reading of what came back. Pure.
 */

export interface AsvRunSettings {
  /** The machine name results are filed under (`asv machine --yes --machine NAME`). */
  readonly machine: string;
  /** `--bench` regular expression; null runs every benchmark. */
  readonly bench: string | null;
  /** `-a rounds=N`. */
  readonly rounds: number;
  /** Further `-a key=value` overrides (repeat, number, warmup_time, timeout, ...). */
  readonly attributes: Readonly<Record<string, string | number>>;
  /** `--cpu-affinity LIST` (e.g. `0` or `0-1`); null leaves it unset. */
  readonly cpuAffinity: string | null;
}

export interface AsvLayout {
  /** The checkout inside the image. */
  readonly repoDir: string;
  /** asv.conf.json, relative to the checkout. */
  readonly configPath: string;
  /** asv's results_dir resolved against the config's directory, relative to the checkout. */
  readonly resultsDir: string;
  /** asv's benchmark_dir, relative to the checkout (default `benchmarks` beside the config). */
  readonly benchmarkDir?: string;
}

/** `asv machine --yes --machine NAME --config CONF` */
export function asvMachineCommand(layout: AsvLayout, machine: string): string[] {
  return ['asv', 'machine', '--yes', '--machine', machine, '--config', layout.configPath];
}

/**
 * `asv run --python=same --set-commit-hash SHA --record-samples --machine NAME --no-pull
 * [--bench REGEX] -a rounds=N [-a k=v …] [--cpu-affinity L] --config CONF`. The commit hash is
 * the checkout's HEAD, resolved in the container (`"$sha"`).
 */
export function asvRunCommand(layout: AsvLayout, settings: AsvRunSettings, commit: string): string[] {
  const cmd = ['asv', 'run', '--python=same', '--set-commit-hash', commit, '--record-samples', '--machine', settings.machine, '--no-pull'];
  if (settings.bench !== null) cmd.push('--bench', settings.bench);
  cmd.push('-a', `rounds=${settings.rounds}`);
  for (const [k, v] of Object.entries(settings.attributes).sort(([a], [b]) => (a < b ? -1 : 1))) cmd.push('-a', `${k}=${v}`);
  if (settings.cpuAffinity !== null) cmd.push('--cpu-affinity', settings.cpuAffinity);
  cmd.push('--config', layout.configPath);
  return cmd;
}

/** Threads pinned to one so that a benchmark's time does not depend on what else runs. */
export const THREAD_ENV: Readonly<Record<string, string>> = {
  OMP_NUM_THREADS: '1',
  MKL_NUM_THREADS: '1',
  OPENBLAS_NUM_THREADS: '1',
  NUMEXPR_NUM_THREADS: '1',
  VECLIB_MAXIMUM_THREADS: '1',
};

/** asv's results directory for a config at `configPath` with `results_dir` (default `results`). */
export function resolveResultsDir(configPath: string, resultsDir: string | undefined): string {
  return posix.normalize(posix.join(posix.dirname(configPath), resultsDir ?? 'results'));
}

/** Bytes of asv's log kept for the record. */
export const LOG_TAIL_BYTES = 20_000;

/**
 * The script of one invocation: clear stale results, register the machine, run asv on HEAD,
 * then print the exit code, the commit, the results file(s), benchmarks.json and the log tail
 * framed on stdout.
 */
export function asvInvocationScript(layout: AsvLayout, settings: AsvRunSettings): string {
  const machineDir = `${layout.resultsDir}/${settings.machine}`;
  return [
    'set -u',
    `cd ${shellQuote(layout.repoDir)} || exit 90`,
    'out=/tmp/perfmine-asv; mkdir -p "$out"',
    `rm -rf ${shellQuote(layout.resultsDir)}`,
    'sha=$(git rev-parse HEAD)',
    `${shellJoin(asvMachineCommand(layout, settings.machine))} >"$out/machine.log" 2>&1`,
    `printf '%s\\n' "${FRAME} machine-rc $?"`,
    `${shellJoin(asvRunCommand(layout, settings, '@SHA@')).replace('@SHA@', '"$sha"')} >"$out/asv.log" 2>&1`,
    'rc=$?',
    `printf '%s\\n' "${FRAME} rc $rc" "${FRAME} sha $sha"`,
    `for f in ${shellQuote(machineDir)}/*.json; do`,
    '  [ -f "$f" ] || continue',
    '  name=$(basename "$f")',
    '  [ "$name" = machine.json ] && continue',
    `  printf '%s\\n' "${FRAME} file results $name $(base64 -w0 "$f")"`,
    'done',
    emitFileLines('benchmarks', 'benchmarks.json', `${shellQuote(layout.resultsDir)}/benchmarks.json`),
    emitFileLines('log', 'machine.log', '"$out/machine.log"', LOG_TAIL_BYTES),
    emitFileLines('log', 'asv.log', '"$out/asv.log"', LOG_TAIL_BYTES),
    'exit 0',
  ].join('\n');
}

/** asv's message when discovery cannot import the suite (asv/benchmarks.py). */
export const SUITE_IMPORT_FAILURE = 'Failed to build the project and import the benchmark suite';

export interface InvocationOutput {
  /** asv run's exit code (0 ok, 2 some benchmark failed, 1 an error); null when the script did not get that far. */
  readonly asvExitCode: number | null;
  readonly commit: string | null;
  /** The results file text, when asv wrote one. */
  readonly results: string | null;
  readonly benchmarks: string | null;
  readonly log: string;
  /** Discovery could not import the benchmark suite. */
  readonly suiteNotImportable: boolean;
}

/** Reads an invocation's framed stdout. */
export function readInvocationOutput(stdout: string): InvocationOutput {
  const framed = parseFramedOutput(stdout);
  const file = (kind: string) => framed.files.find((f) => f.kind === kind) ?? null;
  const log = framed.files
    .filter((f) => f.kind === 'log')
    .map((f) => `== ${f.name}\n${f.content}`)
    .join('\n');
  const results = file('results');
  return {
    asvExitCode: framedInt(framed, 'rc'),
    commit: framed.values.get('sha') ?? null,
    results: results?.content ?? null,
    benchmarks: file('benchmarks')?.content ?? null,
    log,
    suiteNotImportable: results === null && log.includes(SUITE_IMPORT_FAILURE),
  };
}
