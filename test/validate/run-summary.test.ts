import { expect, it } from 'vitest';
import { calibrationSummaryLine } from '../../stages/validate/run-summary.js';

it('reports the pooled calibration false-positive rate of a run, and nothing when validate measured nothing', () => {
  expect(calibrationSummaryLine({ 'validate.calibrationCompared': 64, 'validate.calibrationFlagged': 1 })).toBe(
    'validate: paired-verdict false positives on base/base calibration: 1 of 64 workloads (1.6%)',
  );
  expect(calibrationSummaryLine({ 'llm.calls': 3 })).toBeNull();
});
