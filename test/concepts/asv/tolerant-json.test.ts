import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseTolerantJson, TolerantJsonError } from '../../../pipeline/concepts/asv/index.js';

describe('tolerant JSON reader', () => {
  it('reads any standard JSON exactly as JSON.parse does', () => {
    fc.assert(
      fc.property(fc.json(), (text) => {
        expect(parseTolerantJson(text)).toEqual(JSON.parse(text));
      }),
      { numRuns: 300 },
    );
  });

  it('accepts NaN, Infinity and -Infinity as values', () => {
    expect(parseTolerantJson('[NaN, Infinity, -Infinity, {"x": NaN}]')).toEqual([
      Number.NaN,
      Number.POSITIVE_INFINITY,
      Number.NEGATIVE_INFINITY,
      { x: Number.NaN },
    ]);
  });

  it('never rewrites the tokens inside strings', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom('NaN', 'Infinity', '-Infinity', ' ', 'x', '"', '\\', 'é', ',', ']')), (pieces) => {
        const s = pieces.join('');
        expect(parseTolerantJson(JSON.stringify({ [s]: [s, NaN] }).replace('null', 'NaN'))).toEqual({ [s]: [s, Number.NaN] });
      }),
    );
  });

  it('keeps a "__proto__" key as data', () => {
    const value = parseTolerantJson('{"__proto__": {"polluted": true}}') as Record<string, unknown>;
    expect(Object.keys(value)).toEqual(['__proto__']);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });

  it.each([
    ['[1, nan]', '[1]', "unexpected token 'nan'"],
    ['{"a": {"b": -NaN}}', 'a.b', "unexpected token '-NaN'"],
    ['{"a": inf}', 'a', "unexpected token 'inf'"],
    ['{"a": [1 2]}', 'a[0]', "expected ',' or ']'"],
    ['{"a" 1}', 'a', "expected ':'"],
    ['{"a": "\\q"}', 'a', 'invalid escape'],
    ['{"a": 1} x', '(top level)', 'after the end of the document'],
    ['', '(top level)', 'unexpected end of input'],
  ])('rejects %j at %s', (text, field, detail) => {
    let caught: unknown;
    try {
      parseTolerantJson(text);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(TolerantJsonError);
    expect((caught as Error).message.startsWith(`${field}: `)).toBe(true);
    expect((caught as Error).message).toContain(detail);
  });

  it('reports line and column', () => {
    try {
      parseTolerantJson('{\n  "a": [1,\n    nan]\n}');
      expect.unreachable();
    } catch (error) {
      expect(error).toMatchObject({ line: 3, column: 5, path: ['a', 1] });
    }
  });
});
