import { describe, expect, it } from 'vitest';
import { protectedCases, protectedTs, pythonAnswers } from './parity.js';

/**
 * What of a change both sides keep from the base: the verifier's pathspecs
 * (python/perfmine_verify.py protected_pathspecs, with the harness's reading of the asv config and
 * git's matching of them in a repository that holds every path) against validate's measured patch
 * (pipeline/concepts/measured-patch.ts isProtectedPath, with verification.ts's benchmarkDirOf).
 * Sixty paths near every rule's edge under sixteen layouts: asv's default benchmark_dir, the forms
 * it is written in (`./benchmarks/`, `benchmarks/`, a glob character), a config in a subfolder
 * with `..` in its benchmark_dir, the checkout itself as the benchmark directory (all of it is
 * kept), and one outside the checkout (nothing of the checkout is).
 */
describe("the verifier's protected paths are validate's", () => {
  it('keeps the same paths from the base in every layout', () => {
    const cases = protectedCases();
    const python = pythonAnswers<string[] | { error: string }>('protected', cases);
    for (const [i, c] of cases.entries()) expect(python[i], c.label).toEqual(protectedTs(c));
    // the layouts differ: a benchmark directory is protected in some, everything or nothing of it in others
    const kept = cases.map(protectedTs);
    expect(kept.some((k, i) => k.length === cases[i]!.paths.length)).toBe(true);
    expect(kept.some((k) => k.includes('benchmarks/bench_core.py'))).toBe(true);
    expect(kept.some((k) => k.includes('asv_bench/benchmarks/bench.py'))).toBe(true);
    expect(kept.every((k) => k.includes('tests/test_core.py') && k.includes('pkg/core_test.py'))).toBe(true);
  });
});
