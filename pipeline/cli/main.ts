import { Command, Option } from 'commander';
import { EXIT } from '../errors.js';
import { perfmineVersion } from '../package-root.js';
import { defineCommands } from './define-commands.js';
import { reportError } from './report-error.js';
import type { Registry } from '../registry.js';
import type { ServiceOverrides } from '../services/index.js';

/** What the program is built from; tests pass their own stages, or adapters of their own (a Docker adapter with a test's label). */
export interface ProgramDeps {
  readonly registry?: Registry;
  readonly services?: ServiceOverrides;
}

export { perfmineVersion };

export function buildProgram(deps: ProgramDeps = {}): Command {
  const program = new Command('perfmine')
    .description('Mine performance-optimization benchmark tasks (asv workloads + expert patches) from GitHub pull requests.')
    .version(perfmineVersion(), '-V, --version', "print perfmine's version")
    .option('--db <path>', 'SQLite store (default ./perfmine.db; env PERFMINE_DB)')
    .option('--config <path>', 'config file (default ./perfmine.config.json when present)')
    .addOption(
      new Option('--log-level <level>', 'log level (env PERFMINE_LOG_LEVEL)').choices([
        'fatal',
        'error',
        'warn',
        'info',
        'debug',
        'trace',
        'silent',
      ]),
    )
    .option('--json', 'machine-readable output on stdout')
    .addOption(new Option('--llm <mode>', '"none": rules only, no LLM call (env PERFMINE_LLM)').choices(['none', 'openai']))
    .option('--base-image <image>', 'image every environment starts from (env PERFMINE_BASE_IMAGE; default perfmine/base:bookworm)')
    .option('--out <dir>', 'where datasets are written (default ./out)')
    .addOption(
      new Option(
        '--executor <kind>',
        '"slurm": the items of synthesize and validate, and the measurements of perfmine score, as Slurm jobs (config executor.slurm); default local',
      ).choices(['local', 'slurm']),
    )
    .showHelpAfterError()
    .exitOverride()
    .addHelpText(
      'after',
      `
Credentials come only from the environment: GITHUB_TOKEN or GITHUB_TOKENS (comma-separated),
OPENAI_API_KEY, OPENAI_BASE_URL, PERFMINE_MODEL, PERFMINE_FALLBACK_MODEL,
GOOGLE_APPLICATION_CREDENTIALS and BIGQUERY_PROJECT, DOCKER_HOST.

Exit codes: 0 ok; 1 some items failed (recorded, see perfmine status); 2 usage, configuration,
credentials or a busy database; 3 a bug; 130 interrupted.`,
    );
  defineCommands(program, { registry: deps.registry, services: deps.services });
  for (const command of program.commands) command.exitOverride();
  return program;
}

/** Parses argv, runs the command, and maps every error to its exit code in one place. */
export async function main(argv: readonly string[], deps: ProgramDeps = {}): Promise<number> {
  const program = buildProgram(deps);
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return typeof process.exitCode === 'number' ? process.exitCode : EXIT.ok;
  } catch (error) {
    return reportError(error);
  }
}

export { reportError } from './report-error.js';
