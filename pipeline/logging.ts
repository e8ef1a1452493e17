import type { Logger, LevelWithSilent, DestinationStream } from 'pino';
import { lazyRequire } from './services/lazy-require.js';
import type { StatusLine } from './terminal.js';

export type { Logger } from 'pino';

/** pino, loaded by the first logger made: commands that never log (`status`, `--help`) start without it. */
const loadPino = lazyRequire<typeof import('pino')>('pino');

export interface LogOptions {
  readonly level: LevelWithSilent;
  /** `json`: one JSON object per line (cron, CI); `pretty`: short readable lines. */
  readonly format: 'json' | 'pretty';
  /** Credential values; any occurrence in a log line is replaced by `[redacted]`. */
  readonly secrets?: readonly string[];
  /** Where lines go; default stderr (fd 2), synchronously. */
  readonly destination?: { write(line: string): void };
  /** On a terminal, lines are written above the progress bars. */
  readonly statusLine?: StatusLine;
}

/** Keys whose values are replaced wherever they appear in a logged object. */
const REDACT_PATHS = [
  'token',
  'tokens',
  'apiKey',
  'authorization',
  'password',
  'secret',
  '*.token',
  '*.tokens',
  '*.apiKey',
  '*.authorization',
  '*.password',
  '*.secret',
  'headers.authorization',
  '*.headers.authorization',
  'request.headers.authorization',
  '*.request.headers.authorization',
];

/** Structured logger (pino): stage and item travel as bound fields; credentials never get out. */
export function createLogger(options: LogOptions): Logger {
  const scrub = makeScrubber(options.secrets ?? []);
  const sink = options.destination ?? stderrSink(options.statusLine);
  const stream: DestinationStream = {
    write(line: string) {
      const clean = scrub(line);
      sink.write(options.format === 'pretty' ? prettyLine(clean) : clean);
    },
  };
  const { pino } = loadPino();
  return pino(
    {
      level: options.level,
      base: null,
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      formatters: { level: (label) => ({ level: label }) },
    },
    stream,
  );
}

function stderrSink(statusLine: StatusLine | undefined): { write(line: string): void } {
  if (statusLine) return { write: (line) => statusLine.writeAbove(line) };
  return {
    write(line: string) {
      process.stderr.write(line);
    },
  };
}

/** Replaces every occurrence of every secret (also JSON-escaped) with `[redacted]`. */
export function makeScrubber(secrets: readonly string[]): (text: string) => string {
  const needles = [...new Set(secrets.filter((s) => s.length >= 4).flatMap((s) => [s, JSON.stringify(s).slice(1, -1)]))];
  if (needles.length === 0) return (text) => text;
  needles.sort((a, b) => b.length - a.length);
  return (text) => {
    let out = text;
    for (const needle of needles) if (out.includes(needle)) out = out.split(needle).join('[redacted]');
    return out;
  };
}

const LEVEL_TAGS: Record<string, string> = {
  trace: 'TRACE',
  debug: 'DEBUG',
  info: 'INFO ',
  warn: 'WARN ',
  error: 'ERROR',
  fatal: 'FATAL',
};

/** `12:04:33 INFO  collect owner/name#12: message key=value` */
export function prettyLine(jsonLine: string): string {
  let record: Record<string, unknown>;
  try {
    record = JSON.parse(jsonLine) as Record<string, unknown>;
  } catch {
    return jsonLine;
  }
  const { time, level, msg, stage, item, ...rest } = record;
  const clock = typeof time === 'string' ? time.slice(11, 19) : '';
  const where = [stage, item].filter((x) => typeof x === 'string' && x).join(' ');
  const extras = Object.entries(rest)
    .map(([k, v]) => `${k}=${typeof v === 'string' ? (/\s/.test(v) ? JSON.stringify(v) : v) : JSON.stringify(v)}`)
    .join(' ');
  const tag = LEVEL_TAGS[String(level)] ?? String(level).toUpperCase();
  return `${clock} ${tag} ${where ? `${where}: ` : ''}${String(msg ?? '')}${extras ? ` ${extras}` : ''}\n`;
}
