import { describe, expect, it } from 'vitest';
import { classifyFailure, type StepResult } from '../../../pipeline/services/environments/failure.js';
import { PATCH_DOES_NOT_APPLY_EXIT } from '../../../pipeline/services/environments/verification.js';
import { readExpertAttempt } from '../../../stages/validate/protocol/expert-image.js';

const step = (s: StepResult['step'], ok: boolean, extra: Partial<StepResult> = {}): StepResult => ({
  step: s,
  ok,
  exitCode: ok ? 0 : 1,
  timedOut: false,
  stdout: '',
  stderr: '',
  durationMs: 10,
  ...extra,
});
const read = (steps: StepResult[]) => readExpertAttempt({ steps, failure: classifyFailure(steps) });

describe('reading the expert build (synthesize build and verification with the patch)', () => {
  it('is ok when every step passed', () => {
    expect(read(['script', 'build', 'tamper', 'import', 'asv', 'pytest'].map((s) => step(s as StepResult['step'], true)))).toEqual({
      ok: true,
    });
  });

  it('tells a patch that does not apply (the checkout step exits with its own code) from any other checkout failure', () => {
    const patch = read([
      step('script', true),
      step('checkout', false, {
        exitCode: PATCH_DOES_NOT_APPLY_EXIT,
        stderr: 'error: patch failed: core.py:3\nperfmine: the patch does not apply to abc',
      }),
    ]);
    expect(patch).toEqual({
      ok: false,
      reason: 'patch-does-not-apply',
      detail: 'error: patch failed: core.py:3\nperfmine: the patch does not apply to abc',
    });
    const fetch = read([step('script', true), step('checkout', false, { exitCode: 128, stderr: 'fatal: reference is not a tree: abc' })]);
    expect(fetch).toMatchObject({
      ok: false,
      reason: 'expert-build-failed',
      detail: expect.stringContaining('the expert build failed: checkout/checkout-failed: fatal: reference is not a tree'),
    });
  });

  it('names the build step or the verification step that failed on the expert', () => {
    const build = read([step('script', true), step('build', false, { stderr: 'src/x.c:3:1: error: unknown type name' })]);
    expect(build).toMatchObject({
      reason: 'expert-build-failed',
      detail: expect.stringMatching(/^the expert build failed: build\/compiler-error: src\/x\.c:3:1: error/),
    });
    const imports = read([
      step('script', true),
      step('build', true),
      step('tamper', true),
      step('import', false, { stderr: "ModuleNotFoundError: No module named 'numpy'" }),
    ]);
    expect(imports).toMatchObject({
      reason: 'expert-build-failed',
      detail: expect.stringMatching(/^the expert image failed verification \(import\): import\/missing-module/),
    });
    const timeout = read([step('script', true), step('build', false, { exitCode: null, timedOut: true, durationMs: 3_600_000 })]);
    expect(timeout).toMatchObject({ reason: 'expert-build-failed', detail: expect.stringContaining('killed at its time limit') });
  });
});
