import { describe, expect, it } from 'vitest';
import { formatCases, formatTs, pythonAnswers, type FormatCase } from './parity.js';

/**
 * perfmine-bench's values as text (python/perfmine_bench_format.py) against validate's and the
 * reports' (pipeline/concepts/asv/human-value.ts), both asv's human_float / human_time /
 * human_file_size / human_value: character for character on edge values (rounding ties, unit and
 * exponent boundaries, NaN, the infinities, subnormals, negative zero) and 400 seeded values over
 * 40 orders of magnitude, through every function and option.
 */
describe("perfmine-bench's value formatting is validate's", () => {
  it('writes every case as the TypeScript does', () => {
    const cases = formatCases();
    expect(cases.length).toBeGreaterThan(5000);
    const python = pythonAnswers<string | { error: string }>('format', cases);
    const differ = cases.flatMap((c: FormatCase, i) => {
      const ts = formatTs(c);
      return ts === python[i] ? [] : [`${JSON.stringify(c)}: ${JSON.stringify(ts)} vs ${JSON.stringify(python[i])}`];
    });
    expect(differ).toEqual([]);
    // the cases reach every unit and form (asv never writes its last time unit, C: a time past it is ~0)
    const answers = new Set(python.map(String));
    for (const s of ['0', 'nan', 'inf', '-inf', 'n/a', 'failed', '~0']) expect(answers.has(s), s).toBe(true);
    for (const suffix of ['ns', 'μs', 'ms', 's', 'm', 'h', 'd', 'w', 'y', 'k', 'M', 'G', 'T', 'P', 'E', 'H', '?'])
      expect(
        python.some((a) => typeof a === 'string' && new RegExp(`\\d${suffix === '?' ? '\\?' : suffix}$`).test(a)),
        suffix,
      ).toBe(true);
    expect(python.some((a) => typeof a === 'string' && /e[+-]\d\d/.test(a))).toBe(true);
    expect(python.some((a) => typeof a === 'string' && a.includes('±'))).toBe(true);
  });
});
