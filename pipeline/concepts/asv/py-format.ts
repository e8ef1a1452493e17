/**
 * Python's float formatting, reproduced exactly, because asv's tables are made by Python's
 * `format()`: `'{:.2f}'`, `'{:.3e}'`, `'{:g}'`, `repr()` and `round()` all round the exact binary
 * value half-to-even, while JavaScript's `toFixed` rounds ties away from zero and writes exponents
 * differently. Everything here works on the exact decimal expansion of the double (BigInt).
 */

interface ExactDecimal {
  /** |x| = digits * 10^exp10, exactly. */
  readonly digits: bigint;
  readonly exp10: number;
  readonly negative: boolean;
}

const view = new DataView(new ArrayBuffer(8));

/** The exact decimal value of a finite double. */
function exactDecimal(x: number): ExactDecimal {
  view.setFloat64(0, x);
  const hi = view.getUint32(0);
  const lo = view.getUint32(4);
  const negative = hi >>> 31 === 1;
  const biased = (hi >>> 20) & 0x7ff;
  let mantissa = (BigInt(hi & 0xfffff) << 32n) | BigInt(lo);
  let exp2: number;
  if (biased === 0) {
    exp2 = -1074;
  } else {
    mantissa |= 1n << 52n;
    exp2 = biased - 1075;
  }
  if (exp2 >= 0) return { digits: mantissa << BigInt(exp2), exp10: 0, negative };
  // m * 2^-k = m * 5^k / 10^k
  return { digits: mantissa * 5n ** BigInt(-exp2), exp10: exp2, negative };
}

/** round(digits * 10^(exp10 + k)) half-to-even, as a non-negative BigInt. */
function roundScaled(d: ExactDecimal, k: number): bigint {
  const shift = d.exp10 + k;
  if (shift >= 0) return d.digits * 10n ** BigInt(shift);
  const divisor = 10n ** BigInt(-shift);
  const q = d.digits / divisor;
  const twice = 2n * (d.digits % divisor);
  if (twice > divisor || (twice === divisor && q % 2n === 1n)) return q + 1n;
  return q;
}

function nonFinite(x: number): string {
  if (Number.isNaN(x)) return 'nan';
  return x > 0 ? 'inf' : '-inf';
}

function isNegative(x: number): boolean {
  return x < 0 || Object.is(x, -0);
}

/** Python's `format(x, '.{k}f')`. */
export function formatFixed(x: number, k: number): string {
  if (!Number.isFinite(x)) return nonFinite(x);
  const n = roundScaled(exactDecimal(Math.abs(x)), k).toString();
  const padded = n.padStart(k + 1, '0');
  const body = k === 0 ? padded : `${padded.slice(0, padded.length - k)}.${padded.slice(padded.length - k)}`;
  return (isNegative(x) ? '-' : '') + body;
}

/** Significant digits of |x| rounded to `significant` digits, and the decimal exponent of the first. */
function roundSignificant(x: number, significant: number): { digits: string; exponent: number } {
  const d = exactDecimal(Math.abs(x));
  if (d.digits === 0n) return { digits: '0'.repeat(significant), exponent: 0 };
  let exponent = d.digits.toString().length - 1 + d.exp10;
  let digits = roundScaled(d, significant - 1 - exponent).toString();
  if (digits.length > significant) {
    // 9.99… rounded up to 10.0…
    exponent += 1;
    digits = digits.slice(0, significant);
  }
  return { digits, exponent };
}

function exponentSuffix(exponent: number): string {
  const sign = exponent < 0 ? '-' : '+';
  return `e${sign}${String(Math.abs(exponent)).padStart(2, '0')}`;
}

/** Python's `format(x, '.{p}e')`. */
export function formatExponent(x: number, p: number): string {
  if (!Number.isFinite(x)) return nonFinite(x);
  const { digits, exponent } = roundSignificant(x, p + 1);
  const mantissa = p === 0 ? digits : `${digits[0]}.${digits.slice(1)}`;
  return (isNegative(x) ? '-' : '') + mantissa + exponentSuffix(exponent);
}

function stripZeros(s: string): string {
  if (!s.includes('.')) return s;
  const t = s.replace(/0+$/, '');
  return t.endsWith('.') ? t.slice(0, -1) : t;
}

/** Python's `format(x, '.{p}g')` (default precision 6, as `format(x, 'g')`). */
export function formatGeneral(x: number, precision = 6): string {
  if (!Number.isFinite(x)) return nonFinite(x);
  const p = precision === 0 ? 1 : precision;
  if (x === 0) return isNegative(x) ? '-0' : '0';
  const { exponent } = roundSignificant(x, p);
  if (exponent >= -4 && exponent < p) return stripZeros(formatFixed(x, p - 1 - exponent));
  const e = formatExponent(x, p - 1);
  const at = e.indexOf('e');
  return stripZeros(e.slice(0, at)) + e.slice(at);
}

/** Python's `repr(float)`: the shortest round-tripping digits, fixed for 1e-4 <= |x| < 1e16. */
export function pythonFloatRepr(x: number): string {
  if (Number.isNaN(x)) return 'nan';
  if (!Number.isFinite(x)) return x > 0 ? 'inf' : '-inf';
  if (x === 0) return isNegative(x) ? '-0.0' : '0.0';
  const sign = x < 0 ? '-' : '';
  const [mant = '', exp = '0'] = Math.abs(x).toExponential().split('e');
  const digits = mant.replace('.', '');
  const exponent = Number(exp);
  if (exponent < -4 || exponent >= 16) {
    const m = digits.length === 1 ? digits : `${digits[0]}.${digits.slice(1)}`;
    return sign + m + exponentSuffix(exponent);
  }
  if (exponent < 0) return `${sign}0.${'0'.repeat(-exponent - 1)}${digits}`;
  const intPart = digits.slice(0, exponent + 1).padEnd(exponent + 1, '0');
  const frac = digits.slice(exponent + 1);
  return `${sign}${intPart}.${frac === '' ? '0' : frac}`;
}

/** Python's `json.dumps` of a number parsed from JSON: integral values print as integers. */
export function pythonJsonNumber(x: number): string {
  if (Number.isNaN(x)) return 'NaN';
  if (!Number.isFinite(x)) return x > 0 ? 'Infinity' : '-Infinity';
  // JSON parsing loses the int/float distinction; integral values in asv results are ints
  // (track_* benchmarks), timings never are.
  if (Number.isInteger(x) && Math.abs(x) < 2 ** 53) return String(x);
  return pythonFloatRepr(x);
}

/** `int(round(x, ndigits))` in Python, for finite x (half-to-even on the exact value). */
export function pythonRoundToInteger(x: number, ndigits: number): bigint {
  const d = exactDecimal(Math.abs(x));
  // round to ndigits decimals, then int() truncates toward zero
  const n = ndigits >= 0 ? roundScaled(d, ndigits) / 10n ** BigInt(ndigits) : roundScaled(d, ndigits) * 10n ** BigInt(-ndigits);
  return isNegative(x) ? -n : n;
}
