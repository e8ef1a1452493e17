import { describe, expect, it } from 'vitest';
import { formatGithubTable, humanValue } from '../../../pipeline/concepts/asv/index.js';
import {
  formatExponent,
  formatFixed,
  formatGeneral,
  pythonFloatRepr,
  pythonRoundToInteger,
} from '../../../pipeline/concepts/asv/py-format.js';

describe("Python's float formatting", () => {
  // expected strings are what CPython 3.11 prints for the same calls
  it.each([
    [formatFixed(2.5, 0), '2'],
    [formatFixed(0.125, 2), '0.12'],
    [formatFixed(0.375, 2), '0.38'],
    [formatFixed(-0.001, 2), '-0.00'],
    [formatExponent(1234.5, 3), '1.234e+03'],
    [formatExponent(9.9996, 3), '1.000e+01'],
    [formatGeneral(1e-5), '1e-05'],
    [formatGeneral(0.55), '0.55'],
    [formatGeneral(1.0), '1'],
    [formatGeneral(123456789.0), '1.23457e+08'],
    [formatGeneral(0.00012345, 2), '0.00012'],
    [pythonFloatRepr(1e16), '1e+16'],
    [pythonFloatRepr(0.0001), '0.0001'],
    [pythonFloatRepr(1e-5), '1e-05'],
    [pythonFloatRepr(123456789012345), '123456789012345.0'],
    [pythonRoundToInteger(15, -1).toString(), '20'],
    [pythonRoundToInteger(25, -1).toString(), '20'],
  ])('%s is %s', (got, expected) => {
    expect(got).toBe(expected);
  });
});

describe("asv's human-readable values", () => {
  // expected strings are what asv.util.human_value prints for the same arguments
  it.each([
    [0.0014558729499981383, 'seconds', 0.00034147, '1.46±0.3ms'],
    [1.9597798986471903e-5, 'seconds', 3e-7, '19.6±0.3μs'],
    [1.41e-7, 'seconds', 1e-8, '141±10ns'],
    [0, 'seconds', null, '0s'],
    [7, 'seconds', null, '7.00s'],
    [120.5, 'seconds', 3, '2.01±0.05m'],
    [3.2e-10, 'seconds', null, '0.320ns'],
    [1536, 'bytes', null, '1.54k'],
    [2500000, 'bytes', 120000, '2.5±0.1M'],
    [12, 'count', null, '12'],
    [0.5, null, 0.0123, '0.5±0.012'],
    [null, 'seconds', null, 'failed'],
    [Number.NaN, 'seconds', null, 'n/a'],
  ] as const)('human_value(%s, %s, %s) = %s', (value, unit, err, expected) => {
    expect(humanValue(value, unit, err)).toBe(expected);
  });
});

describe('tabulate github tables', () => {
  it('left-aligns text columns and decimal-aligns numeric ones, reformatting floats with %g', () => {
    const text = formatGithubTable(
      ['Name', 'Ratio'],
      [
        ['a', '0.50'],
        ['bb', '1.25'],
        ['c', '1.00'],
      ],
    );
    expect(text).toBe(
      ['| Name   |   Ratio |', '|--------|---------|', '| a      |    0.5  |', '| bb     |    1.25 |', '| c      |    1    |'].join('\n'),
    );
  });

  it('treats a column with any non-number as text, unchanged', () => {
    const text = formatGithubTable(['Ratio'], [['~1.10'], ['0.50']]);
    expect(text).toBe(['| Ratio   |', '|---------|', '| ~1.10   |', '| 0.50    |'].join('\n'));
  });

  it('right-aligns an integer column without reformatting', () => {
    expect(formatGithubTable(['n'], [['7'], ['1200']])).toBe(['|    n |', '|------|', '|    7 |', '| 1200 |'].join('\n'));
  });
});
