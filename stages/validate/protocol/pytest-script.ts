import { FRAME, emitFileLines } from './framed-output.js';
import { shellJoin, shellQuote } from './shell.js';

/**
 * pytest in a fresh container: the whole suite under a time limit (`timeout -s INT`, so that pytest
 * stops cleanly and still writes its JUnit report), the report and the log tail handed back
 * framed on stdout. Pure.
 */

export interface PytestSettings {
  readonly repoDir: string;
  readonly python: string;
  readonly timeLimitSeconds: number;
  /** Extra arguments (paths, -k, -m ...). */
  readonly args: readonly string[];
}

export const JUNIT_PATH = '/tmp/perfmine-junit.xml';

export function pytestCommand(settings: PytestSettings): string[] {
  return [
    'timeout',
    '-s',
    'INT',
    '-k',
    '30',
    String(Math.max(1, Math.round(settings.timeLimitSeconds))),
    settings.python,
    '-m',
    'pytest',
    '-p',
    'no:cacheprovider',
    '-q',
    '-o',
    'junit_family=xunit1',
    `--junitxml=${JUNIT_PATH}`,
    ...settings.args,
  ];
}

export function pytestScript(settings: PytestSettings): string {
  return [
    'set -u',
    `cd ${shellQuote(settings.repoDir)} || exit 90`,
    `rm -f ${JUNIT_PATH}`,
    `${shellJoin(pytestCommand(settings))} >/tmp/perfmine-pytest.log 2>&1`,
    'rc=$?',
    `printf '%s\\n' "${FRAME} rc $rc"`,
    emitFileLines('junit', 'junit.xml', JUNIT_PATH),
    emitFileLines('log', 'pytest.log', '/tmp/perfmine-pytest.log', 20_000),
    'exit 0',
  ].join('\n');
}
