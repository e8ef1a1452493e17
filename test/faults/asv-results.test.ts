import { describe, expect, it } from 'vitest';
import { parseResultsFile, unrollResults } from '../../pipeline/concepts/asv/index.js';

/**
 * asv results with awkward values. Most of this is covered in test/concepts/asv/results.test.ts
 * (bare NaN / Infinity / -Infinity tokens, null and NaN results, unknown schema versions, missing
 * required columns, unknown columns, truncated JSON, trailing nulls restored on the real networkx
 * files); here only what is not: a file that stores fewer columns than asv 0.6 writes, with the
 * bare tokens inside the raw samples.
 */
describe('asv results: fewer columns, bare tokens inside samples', () => {
  const text = `{"commit_hash": "abcdef0123456789", "env_name": "existing-py", "date": 1, "params": {"machine": "lab"},
    "python": "3.11", "requirements": {}, "result_columns": ["result", "params", "samples"],
    "results": {
      "m.time_a": [[0.5, NaN], [["1", "2"]], [[0.5, 0.51, Infinity], null]],
      "m.time_b": [[0.25], []],
      "m.time_c": [null, [], [[NaN, -Infinity]]]
    },
    "version": 2}`;

  it('reads every row: missing columns are null, NaN / Infinity stay numbers inside samples', () => {
    const file = parseResultsFile(text, 'results/lab/abcdef01-existing-py.json');
    expect(file.benchmarks.map((b) => [b.key, b.version, b.startedAt, b.duration])).toEqual([
      ['m.time_a', null, null, null],
      ['m.time_b', null, null, null],
      ['m.time_c', null, null, null],
    ]);
    const a = file.benchmarks[0]!;
    expect(a.samples).toEqual([[0.5, 0.51, Number.POSITIVE_INFINITY], null]);
    expect(a.stats).toEqual([null, null]);
    expect(file.benchmarks[1]!.samples).toEqual([null]);
    expect(file.benchmarks[2]!.values).toEqual([null]);
    expect(file.benchmarks[2]!.samples).toEqual([[Number.NaN, Number.NEGATIVE_INFINITY]]);
    const unrolled = unrollResults(file);
    expect(unrolled.map((w) => w.name)).toEqual(['m.time_a(1)', 'm.time_a(2)', 'm.time_b', 'm.time_c']);
    expect(Number.isNaN(unrolled[1]!.value)).toBe(true);
  });
});
