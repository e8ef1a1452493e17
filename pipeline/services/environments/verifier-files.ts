import { readFileSync } from 'node:fs';
import { packagePath } from '../../package-root.js';
import type { TarEntry } from '../tar.js';
import { BENCH_SCRIPTS, HARNESS_SCRIPT, SNAPSHOT_SCRIPT } from './harness-files.js';
import { SEAL_SCRIPT } from './seal.js';

/**
 * perfmine's verifier of an agent's change (perfmine_verify.py: its docstring is its manual) and
 * everything it runs, as files of a verifier's folder (a Harbor task's `tests/`): `perfmine/verify.py`
 * and `perfmine/seal.sh` (the sealed history into each side's copy), and under `perfmine/bench/`
 * perfmine-bench's modules (the sides, the interleaved measurement, validate's verdict, the
 * accounts from outside), the harness, the snapshot helper and the verifier's own modules. These are this perfmine's files, not the environment's copy of
 * perfmine-bench, which the agent could have edited.
 */

export const VERIFY_SCRIPT = packagePath('python', 'perfmine_verify.py');

/** The verifier's own modules: its checks and credit, the channel, the probe, the pytest plugin, the hack detector. */
export const VERIFIER_MODULES: readonly string[] = [
  'perfmine_verify_checks.py',
  'perfmine_verify_credit.py',
  'perfmine_channel.py',
  'perfmine_probe.py',
  'perfmine_pytest_channel.py',
  'perfmine_detect.py',
].map((name) => packagePath('python', name));

/** The verifier's files, relative to the folder they go in. */
export function verifierFiles(): TarEntry[] {
  const bench = [...BENCH_SCRIPTS, HARNESS_SCRIPT, SNAPSHOT_SCRIPT, ...VERIFIER_MODULES].map((file) => ({
    name: `perfmine/bench/${file.slice(file.lastIndexOf('/') + 1)}`,
    content: readFileSync(file),
    mode: 0o755,
  }));
  return [
    { name: 'perfmine/verify.py', content: readFileSync(VERIFY_SCRIPT), mode: 0o755 },
    { name: 'perfmine/seal.sh', content: SEAL_SCRIPT, mode: 0o755 },
    ...bench,
  ];
}
