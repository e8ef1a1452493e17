import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { packagePath } from '../../pipeline/package-root.js';
import { HISTORY_CHECK_SCRIPT, HISTORY_LEAK_EXIT, HISTORY_LEAK_MARKER, SEAL_SCRIPT } from '../../pipeline/services/environments/seal.js';
import {
  CHECKOUT_MARKER,
  PATCH_DOES_NOT_APPLY_EXIT,
  PREPARE_SCRIPT,
  REPO_DIR,
  TAMPER_CHECK_SCRIPT,
  TAMPER_MARKER,
} from '../../pipeline/services/environments/verification.js';
import { FAILURE_REWARD, REWARD_FORMULA } from '../../pipeline/services/verifier/reward-formula.js';
import { CODE_USER, TEST_SCRIPT_TEMPLATE, testScript } from '../../pipeline/services/verifier/verifier-folder.js';

/**
 * The shell scripts perfmine runs in its images and ships in its task folders are files beside
 * their modules (shellcheck reads them: test/foundation/scripts-lint.test.ts), read from the
 * package root; the constants the TypeScript side shares with them are written out in them, and
 * kept the same here.
 */
describe('shell scripts as files', () => {
  const environments = (name: string) => readFileSync(packagePath('pipeline', 'services', 'environments', name), 'utf8');

  it('are read from the package root, byte for byte', () => {
    expect(SEAL_SCRIPT).toBe(environments('perfmine_seal.sh'));
    expect(HISTORY_CHECK_SCRIPT).toBe(environments('perfmine_history_check.sh'));
    expect(PREPARE_SCRIPT).toBe(environments('perfmine_prepare.sh'));
    expect(TAMPER_CHECK_SCRIPT).toBe(environments('perfmine_tamper_check.sh'));
    expect(TEST_SCRIPT_TEMPLATE).toBe(readFileSync(packagePath('pipeline', 'services', 'verifier', 'perfmine_test.sh'), 'utf8'));
    for (const script of [SEAL_SCRIPT, HISTORY_CHECK_SCRIPT, PREPARE_SCRIPT, TAMPER_CHECK_SCRIPT, TEST_SCRIPT_TEMPLATE])
      expect(script.startsWith('#!/usr/bin/env bash\n')).toBe(true);
  });

  it("the history check prints seal.ts's marker and exits with its code", () => {
    expect(HISTORY_CHECK_SCRIPT).toContain(`leak() { echo "${HISTORY_LEAK_MARKER} $*"; found=1; }`);
    expect(HISTORY_CHECK_SCRIPT).toContain(`if [ "$found" = 1 ]; then exit ${HISTORY_LEAK_EXIT}; fi`);
    expect(HISTORY_CHECK_SCRIPT).toContain(`leak "HEAD names no commit"; exit ${HISTORY_LEAK_EXIT}; }`);
    expect(HISTORY_CHECK_SCRIPT).toContain(`cd ${REPO_DIR} ||`);
  });

  it("the checkout step and the tamper check use verification.ts's paths, marker and exit code", () => {
    expect(PREPARE_SCRIPT).toContain(`\ncd ${REPO_DIR}\n`);
    expect(PREPARE_SCRIPT).toContain(`exit ${PATCH_DOES_NOT_APPLY_EXIT}; }`);
    expect(PREPARE_SCRIPT).toContain(`\n: > ${CHECKOUT_MARKER}\n`);
    expect(TAMPER_CHECK_SCRIPT).toContain(`\ncd ${REPO_DIR} || exit 5\n`);
    expect(TAMPER_CHECK_SCRIPT).toContain(`  echo "${TAMPER_MARKER}"\n`);
  });

  it("test.sh gives the failure reward and runs the code as CODE_USER; the task's id and the formula fill its header", () => {
    expect(TEST_SCRIPT_TEMPLATE).toContain(`echo '{"reward": ${FAILURE_REWARD}, "correct": 0, "verifier_error": 1}' > "$out/reward.json"`);
    expect(TEST_SCRIPT_TEMPLATE).toContain(`echo ${FAILURE_REWARD} > "$out/reward.txt"`);
    expect(TEST_SCRIPT_TEMPLATE).toContain(` --user ${CODE_USER} `);
    // `$&` in an id is the id's own text, not a replacement pattern
    const script = testScript('demo__x-$&1');
    expect(script).not.toMatch(/@INSTANCE_ID@|@REWARD_FORMULA@/);
    expect(script.split('\n')[1]).toBe(
      "# perfmine's verifier of demo__x-$&1, Harbor's tests/test.sh: Harbor copies tests/ to /tests once the agent",
    );
    const header = script.slice(0, script.indexOf('\nset -u\n'));
    expect(header.split('\n').every((l) => l.startsWith('#'))).toBe(true);
    expect(header.replace(/\n# /g, ' ')).toContain(REWARD_FORMULA);
  });
});
