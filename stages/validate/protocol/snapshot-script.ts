import { FRAME, emitFileLines } from './framed-output.js';
import { shellJoin, shellQuote } from './shell.js';

/** The snapshot helper in a fresh container: record on the base, compare on the expert. Pure. */

export interface SnapshotSettings {
  readonly repoDir: string;
  readonly python: string;
  /** asv.conf.json relative to the checkout. */
  readonly configPath: string;
  readonly bench: string | null;
  /** Seconds per benchmark call. */
  readonly perCallSeconds: number;
  /** Seconds for the whole helper. */
  readonly timeLimitSeconds: number;
}

export function snapshotCommand(
  settings: SnapshotSettings,
  script: string,
  mode: 'record' | 'compare',
  out: string,
  baseline?: string,
): string[] {
  return [
    'timeout',
    '-s',
    'KILL',
    String(Math.max(1, Math.round(settings.timeLimitSeconds))),
    settings.python,
    script,
    mode,
    '--repo',
    '.',
    '--config',
    settings.configPath,
    ...(settings.bench === null ? [] : ['--bench', settings.bench]),
    '--timeout',
    String(settings.perCallSeconds),
    '--out',
    out,
    ...(baseline === undefined ? [] : ['--baseline', baseline]),
  ];
}

/**
 * Runs the helper (already at `script` in the container, or written there by `prelude`) and
 * hands its JSON back framed as `snapshot`.
 */
export function snapshotScript(
  settings: SnapshotSettings,
  options: { script: string; mode: 'record' | 'compare'; baseline?: string; prelude?: string },
): string {
  const out = '/tmp/perfmine-snapshot.json';
  return [
    'set -u',
    options.prelude ?? '',
    `cd ${shellQuote(settings.repoDir)} || exit 90`,
    `${shellJoin(snapshotCommand(settings, options.script, options.mode, out, options.baseline))} >/tmp/perfmine-snapshot.log 2>&1`,
    'rc=$?',
    `printf '%s\\n' "${FRAME} rc $rc"`,
    emitFileLines('snapshot', 'snapshot.json', out),
    emitFileLines('log', 'snapshot.log', '/tmp/perfmine-snapshot.log', 20_000),
    'exit 0',
  ]
    .filter((l) => l !== '')
    .join('\n');
}
