import { describe, expect, it } from 'vitest';
import { interleaveCases, interleaveTs, pythonAnswers, type InterleaveAnswer } from './parity.js';

/**
 * perfmine-bench's interleaved driver (python/perfmine_bench_interleave.py) against validate's
 * (stages/validate/harness/interleave.ts, mode `alternate`) with the same scripted workers and
 * clock: for every case the same batch commands to every side in the same order, the same
 * `workload:sides` order per round (mulberry32 draws), the same rounds, samples, failures
 * (status and round), settlements, batch count and budget stop. The cases: seeds with 1 to 5
 * workloads and 1 to 7 rounds of 1 to 3 per process; failures of every side in the warm-up and
 * part-way; missing workloads; a worker that cannot import the suite or start again; budgets;
 * interim looks. The verifier's additions (reference, accounts, extend) are Python's alone
 * (test/verifier/interleave-extend.test.ts).
 */
describe("perfmine-bench's interleaved schedule is validate's", () => {
  it('runs every case as the TypeScript driver does', async () => {
    const cases = interleaveCases();
    const python = pythonAnswers<InterleaveAnswer>('interleave', cases);
    for (const [i, c] of cases.entries()) expect(python[i], c.label).toEqual(await interleaveTs(c));
    // the cases reach every way a measurement ends
    const ts = await Promise.all(cases.map(interleaveTs));
    expect(ts.some((a) => a.budgetExhausted)).toBe(true);
    expect(ts.some((a) => a.rounds === 0)).toBe(true);
    expect(ts.some((a) => a.workloads.some((w) => w.settled !== null))).toBe(true);
    const statuses = new Set(
      ts.flatMap((a) => a.workloads.flatMap((w) => [w.base, w.expert, w.calibration].map((s) => s?.failure?.status))),
    );
    for (const s of ['failed', 'timeout', 'crashed', 'skipped', 'missing']) expect(statuses.has(s), s).toBe(true);
  });
});
