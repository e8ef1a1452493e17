import { readFileSync } from 'node:fs';
import { categorizeChanged, type ChangedKind } from '../../concepts/measured-patch.js';
import { markCut } from '../tail.js';
import type { TarEntry } from '../tar.js';
import { HARNESS_CONTAINER_PATH, harnessTarEntries } from './harness-files.js';
import type { Step } from './failure.js';
import { HISTORY_CHECK_SCRIPT } from './seal.js';
import { parseAsvConfig } from '../../concepts/asv-config.js';
import { packagePath } from '../../package-root.js';

export { categorizeChanged, type ChangedKind };

/**
 * The commands of a build and of its verification, as data (the environment runs them). Pure.
 *
 * Images: the repository is at /repo; perfmine's files are under /perfmine (the build script
 * `docker_build.sh`, the checkout preparation, an optional patch). The checkout preparation and the
 * tamper check are scripts beside this module (perfmine_prepare.sh, perfmine_tamper_check.sh),
 * read from the package root; the constants below that they use are written out in them
 * (test/environments/shell-files.test.ts keeps the two the same).
 */
export const REPO_DIR = '/repo';
export const SCRIPT_PATH = '/perfmine/docker_build.sh';
export const CHECKOUT_MARKER = '/perfmine/checkout-ok';
export const TAMPER_MARKER = 'perfmine-tampered:';

/** The exit code of the checkout step when the patch does not apply to the commit. */
export const PATCH_DOES_NOT_APPLY_EXIT = 97;

/**
 * The checkout step of a build: /repo (the source tier: the commit sealed and checked out, seal.ts)
 * must be at the commit and clean; an environment's lock, when the build is given one, is
 * installed first (hash-checked, without dependencies: exactly the measured distributions); a
 * patch is applied to the working tree only, so that nothing of it enters the object store (the
 * history check proves the store holds the commit's history only). perfmine_prepare.sh, run as
 * /perfmine/prepare.sh with PERFMINE_SHA the commit.
 */
export const PREPARE_SCRIPT: string = readFileSync(packagePath('pipeline', 'services', 'environments', 'perfmine_prepare.sh'), 'utf8');

/**
 * The build container's command: prepare, the script from the repository root, then the module
 * repositories a script fetched sealed at their gitlinked commits (seal.ts).
 */
export const BUILD_COMMAND = [
  'bash',
  '-c',
  `bash /perfmine/prepare.sh && cd ${REPO_DIR} && { if [ -s /perfmine/constraints.txt ]; then export PIP_CONSTRAINT=/perfmine/constraints.txt; fi; } && bash ${SCRIPT_PATH} && bash /perfmine/seal.sh modules`,
] as const;

export interface VerifySpec {
  readonly sha: string;
  readonly importName: string | null;
  readonly asvConfigPath: string | null;
  readonly asvDiscover: BenchmarkDiscovery;
  /** Whether the build applied a patch (then /perfmine-verify/patch.diff is provided, VERIFY_PATCH_PATH). */
  readonly patched: boolean;
  /** Added to `pytest --collect-only` (the repository's own pytest arguments). */
  readonly pytestArgs?: readonly string[];
}

export interface VerifyCommand {
  readonly step: Exclude<Step, 'script' | 'checkout' | 'build'>;
  readonly cmd: readonly string[];
  readonly workingDir: string;
  readonly env: Readonly<Record<string, string>>;
  /** Exit codes that count as success (pytest's 5: no tests collected). */
  readonly okExitCodes: readonly number[];
  /** Files put into the container before it starts. */
  readonly files?: readonly TarEntry[];
}

/**
 * How verification discovers the benchmarks: perfmine's harness (`discover`, only the image's
 * Python), or asv itself (`asv check`, or `asv run --bench just-discover`).
 */
export type BenchmarkDiscovery = 'harness' | 'check' | 'just-discover';

function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/** Where the verification container has the build's patch, when the build applied one. */
const VERIFY_PATCH_PATH = '/perfmine-verify/patch.diff';

/**
 * The tamper check: HEAD is still the commit, and the tree of tracked files as they are on disk
 * is exactly the commit's tree with the patch applied (the commit's tree without one). The patch
 * lives in the working tree only: the files it touches are added to the scratch index beside the
 * tracked ones (files it creates are untracked, files it deletes are gone). Both trees are
 * written with scratch indexes, so nothing in the checkout changes (the objects it writes stay in
 * the verification container). Prints the changed paths after a marker. Run as `bash -c`, with
 * PERFMINE_SHA the commit and PERFMINE_PATCH the patch's path when the build applied one:
 * perfmine_tamper_check.sh.
 */
export const TAMPER_CHECK_SCRIPT: string = readFileSync(
  packagePath('pipeline', 'services', 'environments', 'perfmine_tamper_check.sh'),
  'utf8',
);

export function verifyCommands(spec: VerifySpec): VerifyCommand[] {
  const env = { PERFMINE_SHA: spec.sha };
  const py = '"${PERFMINE_PYTHON:-python3}"';
  const commands: VerifyCommand[] = [
    // first: the checks after it write objects (the tamper check's scratch trees)
    { step: 'history', cmd: ['bash', '-c', HISTORY_CHECK_SCRIPT], workingDir: REPO_DIR, env, okExitCodes: [0] },
    {
      step: 'tamper',
      cmd: ['bash', '-c', TAMPER_CHECK_SCRIPT],
      workingDir: REPO_DIR,
      env: spec.patched ? { ...env, PERFMINE_PATCH: VERIFY_PATCH_PATH } : env,
      okExitCodes: [0],
    },
  ];
  const importName = spec.importName;
  commands.push({
    step: 'import',
    cmd: importName
      ? [
          'bash',
          '-c',
          `${py} -c 'import importlib, sys; m = importlib.import_module(sys.argv[1]); print("imported", m.__name__, "from", getattr(m, "__file__", None))' ${shellQuote(importName)}`,
        ]
      : ['bash', '-c', 'echo "the package import name is unknown (no package directory and no distribution name found)" >&2; exit 2'],
    workingDir: '/',
    env,
    okExitCodes: [0],
  });
  if (spec.asvConfigPath && spec.asvDiscover === 'harness') {
    commands.push({
      step: 'asv',
      cmd: [
        'bash',
        '-c',
        `${py} ${HARNESS_CONTAINER_PATH} --config ${shellQuote(spec.asvConfigPath)} discover --out /tmp/benchmarks.json && echo "perfmine harness: $(grep -o '"name"' /tmp/benchmarks.json | wc -l) benchmarks discovered"`,
      ],
      workingDir: REPO_DIR,
      env,
      okExitCodes: [0],
      files: harnessTarEntries(),
    });
  } else if (spec.asvConfigPath) {
    const slash = spec.asvConfigPath.lastIndexOf('/');
    const dir = slash < 0 ? REPO_DIR : `${REPO_DIR}/${spec.asvConfigPath.slice(0, slash)}`;
    const file = spec.asvConfigPath.slice(slash + 1);
    const config = file === 'asv.conf.json' ? '' : ` --config ${shellQuote(file)}`;
    const command =
      spec.asvDiscover === 'check'
        ? `asv check --python=same${config}`
        : `asv machine --yes --machine perfmine-verify >/dev/null && asv run --python=same --bench just-discover --machine perfmine-verify${config}`;
    commands.push({ step: 'asv', cmd: ['bash', '-c', command], workingDir: dir, env, okExitCodes: [0] });
  } else {
    commands.push({
      step: 'asv',
      cmd: ['bash', '-c', 'echo "no asv configuration (asv.conf.json) in the repository at this commit" >&2; exit 2'],
      workingDir: REPO_DIR,
      env,
      okExitCodes: [0],
    });
  }
  commands.push({
    step: 'pytest',
    cmd: [
      'bash',
      '-c',
      `${py} -m pytest --collect-only -q -p no:cacheprovider${(spec.pytestArgs ?? []).map((a) => ` ${shellQuote(a)}`).join('')}`,
    ],
    workingDir: REPO_DIR,
    env,
    okExitCodes: [0, 5],
  });
  return commands;
}

/** The paths a tamper check printed after its marker. */
export function tamperedPaths(stdout: string): string[] {
  const at = stdout.indexOf(TAMPER_MARKER);
  if (at < 0) return [];
  return stdout
    .slice(at + TAMPER_MARKER.length)
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
}

/**
 * `benchmark_dir` of an asv configuration, relative to the repository root, read with the config's
 * parser (JSON5: asv's own template carries a commented-out `// "benchmark_dir": "benchmarks"`
 * before any real one, which a text search would take); asv's default `benchmarks` when the config
 * does not set it or cannot be read.
 */
export function benchmarkDirOf(asvConfigPath: string | null, asvConfigText: string | null): string | null {
  if (!asvConfigPath) return null;
  const base = asvConfigPath.includes('/') ? asvConfigPath.slice(0, asvConfigPath.lastIndexOf('/')) : '';
  const parsed = asvConfigText === null ? null : parseAsvConfig(asvConfigText);
  const configured = parsed?.ok ? parsed.config.benchmark_dir : undefined;
  const dir = (configured ?? 'benchmarks').replace(/^\.\/+/, '').replace(/\/+$/, '') || '.';
  return base ? (dir === '.' ? base : `${base}/${dir}`) : dir;
}

/** Where the verification container keeps its driver, each step's script, and each step's output and status. */
export const VERIFY_RUN_DIR = '/perfmine-verify/run';
/** Seconds a step's processes get after SIGTERM at its time limit before SIGKILL. */
const KILL_AFTER_S = 5;

export interface PlannedStep {
  readonly command: VerifyCommand;
  readonly limitMs: number;
}

/**
 * The files of one container that runs the verification steps in order, each under its own time
 * limit (coreutils' `timeout`: SIGTERM at the limit, SIGKILL 5 s later), stopping at the first that
 * fails: a driver (`bash VERIFY_RUN_DIR/driver.sh`) and a script per step with its environment and
 * working directory. Each step leaves `N.out` and `N.err` (their last `tailBytes` bytes) and
 * `N.status` (`exit-code elapsed-ms output-bytes error-bytes`) in VERIFY_RUN_DIR. One container
 * instead of one per step: a container start was 0.3 to 0.4 s of a quiet machine, about 1.2 s of
 * each verified build's 2 s.
 */
export function verifyContainerFiles(steps: readonly PlannedStep[], tailBytes: number): TarEntry[] {
  const dir = VERIFY_RUN_DIR.slice(1);
  const entries: TarEntry[] = [];
  const driver = ['set -u', `run=${VERIFY_RUN_DIR}`];
  steps.forEach(({ command: c, limitMs }, i) => {
    const env = Object.entries(c.env).map(([k, v]) => `export ${k}=${shellQuote(v)}\n`);
    entries.push({
      name: `${dir}/${i}.sh`,
      content: `${env.join('')}cd ${shellQuote(c.workingDir)} || exit 126\nexec ${c.cmd.map(shellQuote).join(' ')}\n`,
    });
    const seconds = Math.max(0.001, limitMs / 1000).toFixed(3);
    driver.push(
      'start=$(date +%s%N)',
      `timeout --kill-after=${KILL_AFTER_S} ${seconds} bash "$run/${i}.sh" >"$run/${i}.full-out" 2>"$run/${i}.full-err" </dev/null`,
      'code=$?',
      'elapsed=$(( ($(date +%s%N) - start) / 1000000 ))',
      `out=$(wc -c <"$run/${i}.full-out"); err=$(wc -c <"$run/${i}.full-err")`,
      `tail -c ${tailBytes} "$run/${i}.full-out" >"$run/${i}.out"; tail -c ${tailBytes} "$run/${i}.full-err" >"$run/${i}.err"`,
      `rm -f "$run/${i}.full-out" "$run/${i}.full-err"`,
      `echo "$code $elapsed $out $err" >"$run/${i}.status"`,
      `case " ${c.okExitCodes.join(' ')} " in *" $code "*) ;; *) exit 0 ;; esac`,
    );
  });
  driver.push('exit 0');
  entries.push({ name: `${dir}/driver.sh`, content: `${driver.join('\n')}\n` });
  return entries;
}

/** The verification container's own time limit: every step's limit and the grace after it, and 30 s for the container. */
export function verifyContainerTimeoutMs(steps: readonly PlannedStep[]): number {
  return steps.reduce((sum, p) => sum + p.limitMs + KILL_AFTER_S * 1000, 30_000);
}

/** What one step of the verification container did; null for a step it never finished. */
export interface VerifyStepRun {
  readonly exitCode: number | null;
  readonly timedOut: boolean;
  readonly durationMs: number;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * The last `tailChars` characters of a step's output, headed by how many earlier bytes were cut
 * when some were: the container counted the output in bytes (`wc -c`), so the count is of bytes
 * (those the container cut, and those of the kept bytes not shown).
 */
function outputTail(kept: Buffer | undefined, totalBytes: number, tailChars: number): string {
  const bytes = kept ?? Buffer.alloc(0);
  const keptText = bytes.toString('utf8').slice(-tailChars);
  const shownBytes = Math.min(bytes.length, Buffer.byteLength(keptText, 'utf8'));
  return markCut(keptText, totalBytes - shownBytes, 'bytes');
}

/**
 * Each step's result from the files the container left in VERIFY_RUN_DIR (collected as `run/...`),
 * in order, up to the first step without a status (it did not finish: the container was killed).
 * A step that ended by `timeout`'s signal at or past its limit timed out (exit code null).
 */
export function readVerifyRun(
  files: ReadonlyMap<string, Buffer>,
  steps: readonly PlannedStep[],
  tailChars: number,
): (VerifyStepRun | null)[] {
  const base = VERIFY_RUN_DIR.slice(VERIFY_RUN_DIR.lastIndexOf('/') + 1);
  return steps.map(({ limitMs }, i) => {
    const status = files.get(`${base}/${i}.status`)?.toString('utf8').trim();
    if (!status) return null;
    const [code, elapsed, outBytes, errBytes] = status.split(/\s+/).map(Number) as [number, number, number, number];
    const timedOut = (code === 124 || code === 137) && elapsed >= limitMs;
    return {
      exitCode: timedOut ? null : code,
      timedOut,
      durationMs: elapsed,
      stdout: outputTail(files.get(`${base}/${i}.out`), outBytes, tailChars),
      stderr: outputTail(files.get(`${base}/${i}.err`), errBytes, tailChars),
    };
  });
}
