import type { Command } from 'commander';
import type { Registry } from '../registry.js';
import type { ServiceOverrides } from '../services/index.js';
import type { CompareFlags } from './commands/compare.js';
import type { DemoFlags } from './commands/demo.js';
import type { ReportFlags } from './commands/report.js';
import type { RunFlags } from './commands/run.js';
import type { StatusFlags } from './commands/status.js';
import type { PublishFlags } from './commands/publish.js';
import type { ReplayFlags } from './commands/replay.js';
import type { ScoreFlags } from './commands/score.js';
import type { TasksFlags } from './commands/tasks.js';
import type { GlobalFlags } from './session.js';

/**
 * Every command's name, arguments, options and help, and nothing else: each action imports its
 * command module (and through it the stages, clients and schemas it needs) only when it runs, so
 * `perfmine --help`, `--version` and `status` start without loading the pipeline.
 */
export interface CommandDeps {
  /** A test's own stages; without them, this version's: `run` and `stage` load each by name when they reach it, `demo` and `worker` all of them. */
  readonly registry?: Registry | undefined;
  readonly services?: ServiceOverrides | undefined;
}

async function stagesOf(deps: CommandDeps): Promise<Registry> {
  return deps.registry ?? (await import('../registry.js')).registry;
}

const collect = (value: string, previous: string[] = []) => [...previous, value];

export function addScopeOptions(command: Command): Command {
  return command
    .option('--month <YYYY-MM>', 'the calendar month of merged_at to process (default: the previous full month)')
    .option('--since <date>', 'start of the window, inclusive (YYYY-MM-DD or ISO 8601, UTC)')
    .option('--until <date>', 'end of the window, exclusive')
    .option('--repo <owner/name>', 'only this repository (repeatable)', collect)
    .option('--source <github|git:PATH>', 'pull requests from the GitHub API (default) or a local clone');
}

export function defineCommands(program: Command, deps: CommandDeps): void {
  defineRun(program, deps);
  defineStatus(program);
  defineDemo(program, deps);
  defineCompare(program);
  defineDoctor(program);
  defineCache(program);
  defineTasks(program);
  defineReport(program);
  defineScore(program);
  definePublish(program);
  defineReplay(program);
  defineWorker(program, deps);
}

function defineRun(program: Command, deps: CommandDeps): void {
  addScopeOptions(program.command('run'))
    .description('run every stage in order for a window (default: the previous full calendar month)')
    .option('--pr <N>', 'only this pull request (repeatable)', collect)
    .option('--until-stage <stage>', 'stop after this stage')
    .option(
      '--dry-run',
      'make every check the run would (paths, credentials, Docker engine and images) and count what each stage would do; no LLM call, no build, nothing written',
    )
    .option('--force', 'run items again even when already done with the same input')
    .action(async (flags: RunFlags, command: Command) => {
      const { runCommand } = await import('./commands/run.js');
      process.exitCode = await runCommand('run', undefined, flags, command.optsWithGlobals<GlobalFlags>(), deps.registry, deps.services);
    });

  addScopeOptions(program.command('stage'))
    .description('run one stage for a window')
    .argument('<name>', 'discover | collect | filter | classify | synthesize | validate | emit')
    .option('--pr <N>', 'only this pull request (repeatable)', collect)
    .option('--dry-run', 'check as the stage would, plan and count; run, build and write nothing')
    .option('--force', 'run items again even when already done with the same input')
    .action(async (name: string, flags: RunFlags, command: Command) => {
      const { runCommand } = await import('./commands/run.js');
      // this version's stages unless a test gave its own: each loaded when it is needed
      process.exitCode = await runCommand('stage', name, flags, command.optsWithGlobals<GlobalFlags>(), deps.registry, deps.services);
    });
}

function defineStatus(program: Command): void {
  program
    .command('status')
    .description('the funnel so far: per stage, items done / dropped / failed / pending, with reasons')
    .option('--month <YYYY-MM>', 'only items of this month (repositories always count)')
    .option('--stage <stage>', 'only this stage')
    .option('--items', "with --stage: list every item with its status and reason (validate: where each measurement's time went)")
    .option('--clear-run <id>', 'mark a run left "running" by a host that is gone as crashed (releases the database)')
    .action(async (flags: StatusFlags, command: Command) => {
      const { statusCommand } = await import('./commands/status.js');
      process.exitCode = statusCommand(flags, command.optsWithGlobals<GlobalFlags>());
    });
}

function defineDemo(program: Command, deps: CommandDeps): void {
  program
    .command('demo')
    .description('run the main job on the embedded default: a generated sample repository, no credentials, local SQLite')
    .option('--dir <dir>', 'where the sample repository, database and dataset go', 'perfmine-demo')
    .option('--fresh', 'remove what an earlier demo put in the directory and start over (never anything it did not create)')
    .action(async (flags: DemoFlags, command: Command) => {
      const { demoCommand } = await import('./commands/demo.js');
      process.exitCode = await demoCommand(flags, command.optsWithGlobals<GlobalFlags>(), await stagesOf(deps));
    });
}

function defineCompare(program: Command): void {
  program
    .command('compare')
    .description(
      "compare two asv results files as `asv compare` does (same marks, ratios and table); with directories of per-invocation files, also perfmine's paired verdict",
    )
    .argument('<base>', 'baseline results file (results/<machine>/<hash>-<env>.json), or a directory of per-invocation results files')
    .argument('<head>', 'patched results file, or a directory of per-invocation results files')
    .option(
      '--benchmarks <benchmarks.json>',
      'benchmark units and types (default: benchmarks.json beside the results files or one directory up)',
    )
    .option('--factor <F>', 'ratio that counts as a change', '1.1')
    .option('--only-changed', 'only rows marked -, +, ! or * (no titles)')
    .option('--split', 'one table per group: improved, unchanged, worse, not comparable')
    .option('--no-stats', 'decide on the factor alone, without the significance test')
    .option('--calibration <paths...>', 'two files or directories: base/base calibration invocations (first, second), paired in time order')
    .option('--split-samples <N>', 'results files hold several invocations appended (--append-samples): N samples each')
    .option('--min-pairs <N>', 'paired verdict: usable pairs a workload needs (default 3, at least 2)')
    .option('--alpha <P>', 'paired verdict: chance that any untouched workload is flagged, controlled over all of them (default 0.01)')
    .option('--consistency <Q>', "paired verdict: share of pairs that must point the verdict's way (default 0.75)")
    .option('--safety-factor <F>', 'paired verdict: multiplier on the bias allowance from the calibration (default 1.5)')
    .addHelpText(
      'after',
      `
Marks: - improved, + worse, ! now fails, * now passes, x not comparable (benchmark changed),
blank unchanged; ~ before the ratio: beyond the factor but not statistically significant.
With --json: {"benchmarks": [{name, mark, change, before, after, ratio, tilde, ...}], ...}.

Per-invocation sides: when <base> or <head> is a directory (each file one asv invocation, ordered
by the started_at times inside the files, then by name), or with --calibration / --split-samples,
asv's table is computed on the pooled samples of each side, and perfmine's paired verdict follows:
pair i = (i-th base invocation, i-th head invocation), each pair normalized by its machine-speed
factor; each workload is held to its own noise (its pairs and the base/base pairs of
--calibration, pooled with the others as far as it has few), Holm's procedure keeps the chance of
flagging any untouched workload under --alpha, at least --consistency of its pairs must point the
same way, and never under a 1.05 change. Each workload's minimum detectable speedup is printed.
--json then adds "paired" to the output and to each row.`,
    )
    .action(async (base: string, head: string, flags: CompareFlags, command: Command) => {
      const { compareCommand } = await import('./commands/compare.js');
      process.exitCode = await compareCommand(base, head, flags, command.optsWithGlobals<GlobalFlags>());
    });
}

function defineDoctor(program: Command): void {
  program
    .command('doctor')
    .description(
      'check the Docker engine, base image, what the measurement engine needs in it (Python for the harness, asv for the asv engine), credentials, LLM endpoint and database schema; with --executor slurm also sbatch/squeue/sacct, the spool from a compute node (a probe job) and the registry',
    )
    .action(async (_flags: unknown, command: Command) => {
      const { doctorCommand } = await import('./commands/doctor.js');
      process.exitCode = await doctorCommand(command.optsWithGlobals<GlobalFlags>());
    });
}

function defineCache(program: Command): void {
  const cache = program.command('cache').description('inspect the build-script cache (every build attempt of the synthesize stage)');

  cache
    .command('scripts')
    .description('list build-script attempts, newest first')
    .option('--repo <owner/name>', 'only this repository')
    .option('--limit <n>', 'at most this many attempts', '200')
    .action(async (flags: { repo?: string; limit: string }, command: Command) => {
      const { cacheScriptsCommand } = await import('./commands/cache.js');
      cacheScriptsCommand(flags, command.optsWithGlobals<GlobalFlags>());
    });

  cache
    .command('show')
    .argument('<owner/name@sha>')
    .description("print a commit's verified build script, its last failure, and what is needed to rebuild it")
    .action(async (key: string, _flags: unknown, command: Command) => {
      const { cacheShowCommand } = await import('./commands/cache.js');
      cacheShowCommand(key, command.optsWithGlobals<GlobalFlags>());
    });

  cache
    .command('stats')
    .description('per repository: success rate, reuse rate (cached or neighbouring scripts), LLM calls and tokens')
    .option('--repo <owner/name>', 'only this repository')
    .action(async (flags: { repo?: string }, command: Command) => {
      const { cacheStatsCommand } = await import('./commands/cache.js');
      cacheStatsCommand(flags, command.optsWithGlobals<GlobalFlags>());
    });

  cache
    .command('rebuild')
    .argument('<owner/name@sha>')
    .description("rebuild a commit's environment from its stored verified script, verify it, and record the attempt")
    .action(async (key: string, _flags: unknown, command: Command) => {
      const { cacheRebuildCommand } = await import('./commands/cache.js');
      await cacheRebuildCommand(key, command.optsWithGlobals<GlobalFlags>());
    });
}

function defineTasks(program: Command): void {
  program
    .command('tasks')
    .description(
      'list the emitted tasks: instance id, month, workloads improved, expert speedup, replays (verdicts, machines, replicated workloads) and whether publish includes them, folder',
    )
    .option('--month <YYYY-MM>', 'only this month')
    .action(async (flags: TasksFlags, command: Command) => {
      const { tasksCommand } = await import('./commands/tasks.js');
      process.exitCode = tasksCommand(flags, command.optsWithGlobals<GlobalFlags>());
    });
}

function defineReport(program: Command): void {
  program
    .command('report')
    .description(
      'write one static HTML page for a month: funnel per repository, expert speedups, workloads per task, cost and time per stage, emitted tasks',
    )
    .option('--month <YYYY-MM>', 'the month (default: the previous full calendar month)')
    .addHelpText(
      'after',
      `
  --out <report.html>  where to write the page (required). For this command --out names the page;
                       the datasets directory it links to comes from the config (out, PERFMINE_OUT).`,
    )
    .action(async (flags: ReportFlags, command: Command) => {
      const { reportCommand } = await import('./commands/report.js');
      process.exitCode = reportCommand(flags, command.optsWithGlobals<GlobalFlags>());
    });
}

/** The default `--max-patch-bytes` (tasks/score/predictions.ts checks it; kept here so that help loads no stage). */
const MAX_PATCH_BYTES = 10 * 1024 * 1024;

function defineScore(program: Command): void {
  program
    .command('score')
    .description(
      "score agents' patches on emitted tasks with the Harbor verifier in each task's environment (checks over channels, the hack detector, the base, the patch and the expert's patch measured interleaved, counted from outside): reward, speedups, advantage (stratified, normalized) per prediction and by model",
    )
    .option('--task <ID|DIR>', 'the emitted task (instance id, or its folder)')
    .option('--patch <FILE>', "the agent's patch (with --task)")
    .option('--model <NAME>', 'the model name for --patch', 'patch')
    .option('--predictions <FILE>', 'SWE-bench predictions: JSON Lines or a JSON array of {instance_id, model_name_or_path, model_patch}')
    .option('--results <FILE>', 'where the JSONL results go (default: <out>/scores/<name>.jsonl, the summary table beside it)')
    .option('--max-patch-bytes <N>', 'reject a patch larger than this', String(MAX_PATCH_BYTES))
    .option('--force', 'measure again what is already scored')
    .option(
      '--index <URL|dir:PATH>',
      "the package index the tasks' environments build from (dir:PATH: served on loopback; the demo's index)",
    )
    .option(
      '--judge <MODE>',
      'the rubric judge on every patch the verifier passes (needs an LLM): off, report (its verdict in the row), enforce (a patch judged a hack fails, judged-hack)',
      'off',
    )
    .action(async (flags: ScoreFlags, command: Command) => {
      const { scoreCommand } = await import('./commands/score.js');
      process.exitCode = await scoreCommand(flags, command.optsWithGlobals<GlobalFlags>());
    });
}

function definePublish(program: Command): void {
  program
    .command('publish')
    .description(
      'write the emitted months as a Hugging Face dataset folder (data/YYYY-MM.parquet, the task folders, README.md with a config per month and the dataset card), or with --format harbor as Harbor tasks (one folder per task: task.toml, instruction.md, environment/, solution/solve.sh, tests/test.sh)',
    )
    .requiredOption('--to <DIR>', 'the dataset folder')
    .option('--months <YYYY-MM...>', 'only these months (default: every emitted month); the folder then holds exactly these')
    .option('--format <FORMAT>', 'hf (a Hugging Face dataset folder) or harbor (Harbor tasks)', 'hf')
    .option(
      '--min-replays <N>',
      'the replay gate: publish a task only when at least N replays of its folder replicate (default emit.publish.minReplays, 1; 0: no gate); the others are listed with the reason',
    )
    .option(
      '--registry <HOST:PORT[/PATH]>',
      "push each published task's environment image and the base image it starts from to this OCI registry, and name them by digest (task.toml docker_image, the Dockerfiles' FROM, the rows); default emit.publish.registry. Nothing is written unless every image is in place",
    )
    .action(async (flags: PublishFlags, command: Command) => {
      const { publishCommand } = await import('./commands/publish.js');
      process.exitCode = await publishCommand(flags, command.optsWithGlobals<GlobalFlags>());
    });
}

function defineReplay(program: Command): void {
  program
    .command('replay')
    .description(
      "rebuild emitted tasks from their folders alone (docker build of the folder, the expert patch applied), measure them again with the task's engine and protocol, and record per workload whether the recorded improvement replicates, with the machine",
    )
    .argument('<dir>', 'a task folder (out/YYYY-MM/<instance_id>) or a month directory of them (out/YYYY-MM)')
    .option('--times <N>', 'replays per task, each its own record (the two images are built once)', '1')
    .option(
      '--index <URL|dir:PATH>',
      "the package index the build installs the lock from (PIP_INDEX_URL; a loopback URL or dir:PATH, served on loopback for this command, builds on the host's network); default: the Dockerfile's own",
    )
    .option('--no-cache', "build every step again (docker build --no-cache): a fresh build, nothing from the engine's build cache")
    .option('--keep-images', 'keep the two replayed images (removed by default)')
    .option('--note <TEXT>', 'a note kept with each record (the conditions, e.g. "a CPU hog on every core")')
    .addHelpText(
      'after',
      `
Each replay is written to <task folder>/replays/<id>.json and to the store (--db); replays found in
a folder (made on other machines or against other stores) are added to the store too, so that they
add up. The record holds the machine (CPU model, CPUs, the cpuset used, frequency governor and SMT
where readable, kernel, OS, Docker's version and limits, the image's Python, the load average), the
protocol, the build and measurement times, and per workload the recorded and replayed speedups with
their 95% intervals.

The replication rule, for each workload validate found improved: it replicates when the replay
calls it improved (perfmine's keep verdict: same direction, beyond the replay's own noise, the
1.05 floor, 75% of the pairs faster) and the recorded and replayed speedup intervals overlap,
each widened by 10% of its log speedup; it does not replicate when the replay calls it worsened or
incomparable, or unchanged although its minimum detectable speedup is at most the recorded
interval's low end, or improved by a speedup that does not agree; otherwise (unchanged but
underpowered, too few pairs) it is inconclusive. A replay replicates when every such workload does,
does not replicate when any does not, else it is inconclusive; a build, scan or measurement that
breaks makes it failed (the environment refused by the outside scan, or an expert patch that does
not apply or build, does not replicate). Only the perfmine engine is replayed.

Exit codes: 0 every folder replayed (whatever the verdicts); 1 a folder could not be read or a
replay failed; 2 usage; 130 interrupted (the replays recorded so far are kept).`,
    )
    .action(async (dir: string, flags: ReplayFlags, command: Command) => {
      const { replayCommand } = await import('./commands/replay.js');
      process.exitCode = await replayCommand(dir, flags, command.optsWithGlobals<GlobalFlags>());
    });
}

function defineWorker(program: Command, deps: CommandDeps): void {
  program
    .command('worker')
    .description(
      "run one Slurm job of the slurm executor: read its input from the spool, run the item against this node's Docker engine, write its result (internal: sbatch scripts call it)",
    )
    .requiredOption('--spool <dir>', 'the shared spool directory (executor.slurm.spool)')
    .requiredOption('--job <name>', "the job's name (its directory under <spool>/jobs)")
    .action(async (flags: { spool: string; job: string }) => {
      const { workerCommand } = await import('./commands/worker.js');
      process.exitCode = await workerCommand(flags, await stagesOf(deps));
    });
}
