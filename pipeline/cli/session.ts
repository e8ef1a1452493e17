import { loadConfig, setPath } from '../config/load.js';
import type { Config } from '../config/schema.js';
import { readCredentials, secretValues, type Credentials } from '../credentials.js';
import { createLogger, type Logger } from '../logging.js';
import { StatusLine } from '../terminal.js';

/** Options every command accepts (see `perfmine --help`). */
export interface GlobalFlags {
  readonly db?: string;
  readonly config?: string;
  readonly logLevel?: string;
  readonly json?: boolean;
  readonly llm?: string;
  readonly baseImage?: string;
  readonly out?: string;
  readonly executor?: string;
}

export interface Session {
  readonly config: Config;
  readonly configFile: string | null;
  readonly credentials: Credentials;
  readonly log: Logger;
  /** Set when stderr is a terminal and logs are pretty: progress bars live there. */
  readonly statusLine: StatusLine | null;
  /** `--json`: machine-readable output on stdout. */
  readonly json: boolean;
}

/** Global flags as the top configuration layer. */
export function flagLayer(flags: GlobalFlags): Record<string, unknown> {
  const layer: Record<string, unknown> = {};
  if (flags.db !== undefined) setPath(layer, ['db'], flags.db);
  if (flags.out !== undefined) setPath(layer, ['out'], flags.out);
  if (flags.logLevel !== undefined) setPath(layer, ['logLevel'], flags.logLevel);
  if (flags.llm !== undefined) setPath(layer, ['llm', 'mode'], flags.llm);
  if (flags.baseImage !== undefined) setPath(layer, ['docker', 'baseImage'], flags.baseImage);
  if (flags.executor !== undefined) setPath(layer, ['executor', 'kind'], flags.executor);
  return layer;
}

export function openSession(flags: GlobalFlags, extraLayer: Record<string, unknown> = {}, env: NodeJS.ProcessEnv = process.env): Session {
  const layer = { ...flagLayer(flags) };
  for (const [k, v] of Object.entries(extraLayer)) layer[k] = v;
  const { config, file } = loadConfig({ configPath: flags.config, flags: layer, env });
  const credentials = readCredentials(env);
  const tty = Boolean(process.stderr.isTTY);
  const format = config.logFormat === 'auto' ? (tty ? 'pretty' : 'json') : config.logFormat;
  const statusLine = tty && format === 'pretty' ? new StatusLine(2) : null;
  let log: Logger | undefined;
  return {
    config,
    configFile: file,
    credentials,
    // Made on first use: a command that never logs (status) starts without the logger's library.
    get log(): Logger {
      return (log ??= createLogger({
        level: config.logLevel,
        format,
        secrets: secretValues(credentials),
        ...(statusLine ? { statusLine } : {}),
      }));
    },
    statusLine,
    json: flags.json ?? false,
  };
}

/** Writes a command's result on stdout. */
export function print(text: string): void {
  process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
}

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}
