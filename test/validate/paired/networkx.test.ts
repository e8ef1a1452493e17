import { describe, expect, it } from 'vitest';
import { parseResultsFile, resultSetOf } from '../../../pipeline/concepts/asv/index.js';
import { pairedOptionsSchema } from '../../../stages/validate/paired/index.js';
import { twoVerdicts } from '../../../stages/validate/two-verdicts.js';
import { NETWORKX_BASE, NETWORKX_HEAD, readReference } from '../../concepts/asv/reference.js';

const load = (path: string) => resultSetOf(parseResultsFile(readReference(path), path));

describe('paired verdict on networkx #7971 (one base and one expert invocation, no calibration)', () => {
  const input = { base: [load(NETWORKX_BASE)], expert: [load(NETWORKX_HEAD)] };

  it('gives no verdict from a single pair: every workload is incomparable, where asv flags 4 improved', () => {
    const report = twoVerdicts(input);
    expect(report.asv.rows.filter((r) => r.verdict.mark === '-')).toHaveLength(4);
    expect(report.paired.pairs).toBe(1);
    expect(report.paired.counts).toEqual({ improved: 0, worsened: 0, unchanged: 0, incomparable: 28 });
    expect(new Set(report.workloads.map((w) => w.paired.reason))).toEqual(new Set(['too-few-pairs']));
    expect(report.paired.calibration.calibrated).toBe(false);
  });

  it('cannot be forced to decide on one pair: one pair has no noise of its own to be held to', () => {
    expect(pairedOptionsSchema.safeParse({ minPairs: 1 }).success).toBe(false);
    const report = twoVerdicts(input, { paired: pairedOptionsSchema.parse({ minPairs: 2 }) });
    expect(report.paired.machineFactors[0]).toBeCloseTo(0.885, 3);
    expect(report.paired.counts.improved).toBe(0);
    expect(report.workloads.filter((w) => w.asv.mark === '-')).toHaveLength(4);
  });
});
