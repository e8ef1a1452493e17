import type { TarEntry } from '../tar.js';
import { contentBytes } from './file-content.js';
import type { HarborFile } from './verifier-folder.js';

/**
 * A verifier's run in a task's environment, as Harbor runs a trial (`perfmine score`'s and
 * `perfmine replay`'s, so that every reward perfmine gives is the Harbor verifier's): one
 * container of the task's environment image, in which, in Harbor's order,
 *   1. the change is applied to /repo's working tree as the agent's user (what an agent leaves);
 *   2. the verifier's files arrive in /tests (copied from a staging folder root's alone, so that
 *      they arrive after the change, as Harbor copies them once the agent is done);
 *   3. tests/test.sh runs as root, its output in /logs/verifier/test-stdout.txt.
 * Pure: the script and the files put into the container.
 */

/** Where the change and the verifier's files wait in the container until their turn (root's alone). */
export const STAGING = '/var/tmp/perfmine-trial';
export const OUT_DIR = '/logs/verifier';
/** What the runner collects from the container afterwards. */
export const COLLECTED = ['reward.json', 'reward.txt', 'perfmine-verify.json', 'agent.patch', 'test-stdout.txt'].map(
  (f) => `${OUT_DIR}/${f}`,
);
/** The exit status the script gives when the change does not apply (nothing verified). */
export const NOT_APPLIED = 97;

/** The script the container runs (bash, as root). */
export function trialScript(options: { readonly rounds?: number; readonly detector?: 'enforce' | 'report' } = {}): string {
  const env = [
    ...(options.rounds ? [`PERFMINE_VERIFY_ROUNDS=${options.rounds}`] : []),
    ...(options.detector ? [`PERFMINE_VERIFY_DETECTOR=${options.detector}`] : []),
  ];
  return [
    'set -u',
    `chmod 700 ${STAGING}`,
    `mkdir -p ${OUT_DIR} /logs/agent && chmod 777 ${OUT_DIR} /logs/agent`,
    '# 1. the change, as the agent leaves it',
    `if [ -s ${STAGING}/change.patch ]; then`,
    `  install -m 644 ${STAGING}/change.patch /tmp/perfmine-change.patch`,
    '  if ! runuser -u agent -- git -C /repo apply --whitespace=nowarn /tmp/perfmine-change.patch; then',
    '    rm -f /tmp/perfmine-change.patch',
    `    exit ${NOT_APPLIED}`,
    '  fi',
    '  rm -f /tmp/perfmine-change.patch',
    'fi',
    "# 2. the verifier's files arrive once the agent is done",
    `cp -a ${STAGING}/tests/. /tests/`,
    '# 3. the verifier',
    `env ${env.join(' ')} bash /tests/test.sh > ${OUT_DIR}/test-stdout.txt 2>&1`,
    'exit 0',
    '',
  ].join('\n');
}

/** The files put into the container before it starts: the change and the verifier's folder, staged. */
export function trialEntries(tests: ReadonlyMap<string, HarborFile>, patch: string): TarEntry[] {
  const entries: TarEntry[] = [{ name: `${STAGING.slice(1)}/change.patch`, content: patch, mode: 0o600 }];
  for (const [path, file] of tests) {
    const bytes = contentBytes(file.content);
    entries.push({
      name: `${STAGING.slice(1)}/tests/${path}`,
      content: typeof bytes === 'string' ? bytes : Buffer.from(bytes),
      mode: file.mode,
    });
  }
  return entries;
}
