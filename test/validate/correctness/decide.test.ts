import { describe, expect, it } from 'vitest';
import { decideSoFar, DROP_REASONS, type Evidence, type MeasurementEvidence } from '../../../stages/validate/decide.js';

const measured: MeasurementEvidence = {
  suiteNotImportable: null,
  baseMeasured: 30,
  expertMeasured: 30,
  pairs: 4,
  minPairs: 2,
  calibrated: true,
  improved: ['b.time_x'],
  problems: [],
};
const ok: Evidence['expertBuild'] = { ok: true };
const passing = { collected: true as const, report: { tests: new Map(), collectionErrors: [] }, hitTimeLimit: false, exitCode: 0 };
const cleanTests = {
  base: passing,
  comparison: { basePassed: 10, expertPassed: 10, regressions: [], baseHitTimeLimit: false, expertHitTimeLimit: false },
};
const cleanSnapshot = { baseImportErrors: [], expertImportErrors: [], equal: 3, skipped: 1, mismatches: [] };

describe('the keep / drop decision', () => {
  it('keeps a candidate that passes every check, and waits while evidence is missing', () => {
    expect(decideSoFar({ expertBuild: ok })).toBeNull();
    expect(decideSoFar({ expertBuild: ok, measurement: measured })).toBeNull();
    expect(decideSoFar({ expertBuild: ok, measurement: measured, tests: cleanTests })).toBeNull();
    expect(decideSoFar({ expertBuild: ok, measurement: measured, tests: cleanTests, snapshot: cleanSnapshot })).toEqual({
      kept: true,
      detail: '1 workload improved: b.time_x',
    });
  });

  it('names the first failing check, in the order the stage runs them', () => {
    const reason = (e: Evidence) => {
      const d = decideSoFar(e);
      return d && !d.kept ? d.reason : d;
    };
    expect(reason({ expertBuild: { ok: false, reason: 'patch-does-not-apply', detail: 'x' } })).toBe('patch-does-not-apply');
    expect(reason({ expertBuild: { ok: false, reason: 'expert-build-failed', detail: 'x' } })).toBe('expert-build-failed');
    expect(reason({ expertBuild: ok, measurement: { ...measured, suiteNotImportable: 'ImportError', baseMeasured: 0 } })).toBe(
      'suite-not-importable',
    );
    expect(reason({ expertBuild: ok, measurement: { ...measured, baseMeasured: 0 } })).toBe('benchmarks-fail-on-base');
    expect(reason({ expertBuild: ok, measurement: { ...measured, expertMeasured: 0 } })).toBe('benchmarks-fail-on-expert');
    expect(reason({ expertBuild: ok, measurement: { ...measured, pairs: 1 } })).toBe('measurement-incomplete');
    expect(reason({ expertBuild: ok, measurement: { ...measured, calibrated: false } })).toBe('measurement-incomplete');
    expect(reason({ expertBuild: ok, measurement: { ...measured, improved: [] } })).toBe('no-improvement');
    expect(reason({ expertBuild: ok, measurement: measured, tests: { base: { collected: false, why: 'no tests collected' } } })).toBe(
      'tests-not-collected',
    );
    const regressed = {
      ...cleanTests,
      comparison: { ...cleanTests.comparison, regressions: [{ test: 't::a', expert: 'failed' as const }] },
    };
    expect(reason({ expertBuild: ok, measurement: measured, tests: regressed })).toBe('tests-regressed');
    expect(
      reason({
        expertBuild: ok,
        measurement: measured,
        tests: cleanTests,
        snapshot: { ...cleanSnapshot, baseImportErrors: [{ module: 'b.x', error: 'E' }] },
      }),
    ).toBe('suite-not-importable');
    expect(
      reason({
        expertBuild: ok,
        measurement: measured,
        tests: cleanTests,
        snapshot: { ...cleanSnapshot, mismatches: [{ name: 'b.time_x', reason: 'base 1, expert 2' }] },
      }),
    ).toBe('snapshot-mismatch');
    expect(
      reason({
        expertBuild: ok,
        measurement: measured,
        tests: cleanTests,
        snapshot: { ...cleanSnapshot, expertImportErrors: [{ module: 'b.x', error: 'E' }] },
      }),
    ).toBe('snapshot-mismatch');
  });

  it('scoring (no improvement required) checks the tests and the snapshot first, then takes whatever the measurement finds', () => {
    const none = { ...measured, improved: [], nothingSelected: 'no workload runs the changed code' };
    const scoring = { requireImprovement: false };
    const regressed = {
      ...cleanTests,
      comparison: { ...cleanTests.comparison, regressions: [{ test: 't::a', expert: 'failed' as const }] },
    };
    const mismatched = { ...cleanSnapshot, mismatches: [{ name: 'b.time_x', reason: 'base 1, expert 2' }] };
    // the correctness checks decide without a measurement: a failed patch is never measured
    expect(decideSoFar({ expertBuild: ok }, scoring)).toBeNull();
    expect(decideSoFar({ expertBuild: ok, tests: cleanTests }, scoring)).toBeNull();
    expect(decideSoFar({ expertBuild: ok, tests: regressed }, scoring)).toMatchObject({ kept: false, reason: 'tests-regressed' });
    expect(decideSoFar({ expertBuild: ok, tests: cleanTests, snapshot: mismatched }, scoring)).toMatchObject({
      kept: false,
      reason: 'snapshot-mismatch',
    });
    // passed: the measurement is next, and any outcome of it but a broken one is scored
    expect(decideSoFar({ expertBuild: ok, tests: cleanTests, snapshot: cleanSnapshot }, scoring)).toBeNull();
    expect(decideSoFar({ expertBuild: ok, measurement: none, tests: cleanTests, snapshot: cleanSnapshot }, scoring)).toMatchObject({
      kept: true,
    });
    expect(
      decideSoFar({ expertBuild: ok, measurement: { ...none, calibrated: false }, tests: cleanTests, snapshot: cleanSnapshot }, scoring),
    ).toMatchObject({ kept: false, reason: 'measurement-incomplete' });
    // both wrong: the correctness failure is named (validate's order would name the measurement's)
    const both = { expertBuild: ok, measurement: { ...measured, calibrated: false }, tests: regressed };
    expect(decideSoFar(both, scoring)).toMatchObject({ reason: 'tests-regressed' });
    expect(decideSoFar(both)).toMatchObject({ reason: 'measurement-incomplete' });
  });

  it('has the closed set of drop reasons of the issue, and three more it needs', () => {
    expect(DROP_REASONS).toEqual(
      expect.arrayContaining([
        'patch-does-not-apply',
        'tests-not-collected',
        'benchmarks-fail-on-base',
        'suite-not-importable',
        'tests-regressed',
        'snapshot-mismatch',
        'no-improvement',
      ]),
    );
    expect(DROP_REASONS).toHaveLength(10);
  });
});
