import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { hashOf, stableStringify } from '../../pipeline/hash.js';

/** The reference: normalize (sort keys, drop undefined), then JSON.stringify. */
function reference(value: unknown): unknown {
  if (Array.isArray(value)) return value.map((v) => (v === undefined ? null : reference(v)));
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
        .map((k) => [k, reference((value as Record<string, unknown>)[k])]),
    );
  }
  if (typeof value === 'number' && !Number.isFinite(value)) return String(value);
  if (Object.is(value, -0)) return 0; // JSON has no negative zero
  return value;
}

describe('stable JSON', () => {
  const anything = fc.anything({
    withNullPrototype: false,
    withBigInt: false,
    withDate: false,
    withMap: false,
    withSet: false,
    withTypedArray: false,
    withSparseArray: false,
    withBoxedValues: false,
  });

  it('is JSON that reads back as the value (undefined dropped, non-finite numbers as strings)', () => {
    fc.assert(
      fc.property(anything, (value) => {
        expect(JSON.parse(stableStringify(value))).toEqual(reference(value) ?? null);
      }),
    );
  });

  it('writes every object with its keys in sorted order, integer-like keys included', () => {
    expect(stableStringify({ '0': 'a', '': 'b', b: 1, a: 2 })).toBe('{"":"b","0":"a","a":2,"b":1}');
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.integer()), (dict) => {
        const reversed = Object.fromEntries(Object.entries(dict).reverse());
        expect(stableStringify(reversed)).toBe(stableStringify(dict));
        const keys = [...stableStringify(dict).matchAll(/"((?:[^"\\]|\\.)*)":-?\d/g)].map((m) => JSON.parse(`"${m[1]}"`) as string);
        expect(keys).toEqual(Object.keys(dict).sort());
      }),
    );
  });

  it('does not depend on key order, and tells NaN from null', () => {
    expect(hashOf({ a: 1, b: [1, { y: 2, x: 3 }] })).toBe(hashOf({ b: [1, { x: 3, y: 2 }], a: 1 }));
    expect(stableStringify({ b: undefined, a: [undefined, NaN, Infinity] })).toBe('{"a":[null,"NaN","Infinity"]}');
    expect(hashOf([null])).not.toBe(hashOf([NaN]));
  });
});
