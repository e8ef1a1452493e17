import { describeFailure, type Failure, type StepResult } from '../../../pipeline/services/environments/failure.js';
import { PATCH_DOES_NOT_APPLY_EXIT } from '../../../pipeline/services/environments/verification.js';

/**
 * The expert image is built by synthesize's machinery (pipeline/services/environments/environment.ts,
 * `buildAndVerify` with the patch): from the repository tier, the base commit checked out, the
 * pull request's diff applied to the working tree and the index, the verified build script rerun
 * (so compiled code is rebuilt), and the image verified like any environment, the tamper check
 * allowing exactly the patch. HEAD stays at the base commit. This file reads the outcome. Pure.
 */

export type ExpertBuildReading =
  { readonly ok: true } | { readonly ok: false; readonly reason: 'patch-does-not-apply' | 'expert-build-failed'; readonly detail: string };

export interface ExpertAttempt {
  readonly steps: readonly StepResult[];
  readonly failure: Failure | null;
}

function tailLines(text: string, n: number): string {
  return text.trimEnd().split('\n').slice(-n).join('\n');
}

/**
 * ok when every step passed; `patch-does-not-apply` when the checkout step stopped at the patch
 * (its own exit code); `expert-build-failed` for anything else: the build script, or a
 * verification step (tamper check, import, asv discovery, pytest collection) on the expert.
 */
export function readExpertAttempt(run: ExpertAttempt): ExpertBuildReading {
  if (run.failure === null) return { ok: true };
  const failed = run.steps.find((s) => !s.ok);
  const logs = failed ? tailLines(`${failed.stdout}\n${failed.stderr}`.trim(), 30) : '';
  if (run.failure.step === 'checkout' && failed?.exitCode === PATCH_DOES_NOT_APPLY_EXIT) {
    return { ok: false, reason: 'patch-does-not-apply', detail: tailLines(failed.stderr, 15) };
  }
  const where =
    run.failure.step === 'build' || run.failure.step === 'script' || run.failure.step === 'checkout'
      ? 'the expert build failed'
      : `the expert image failed verification (${run.failure.step})`;
  return { ok: false, reason: 'expert-build-failed', detail: `${where}: ${describeFailure(run.failure)}${logs ? `\n${logs}` : ''}` };
}
