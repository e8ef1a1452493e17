import { formatExponent, formatFixed, formatGeneral, pythonJsonNumber, pythonRoundToInteger } from './py-format.js';

/**
 * asv's human-readable values (`asv_runner.util.human_float` / `human_time`,
 * `asv.util.human_file_size` / `human_value`), reproduced character for character.
 */

/** A float with `significant` digits; `truncateSmall` counts leading zeros of values < 1 as significant. */
export function humanFloat(value: number, significant = 3, truncateSmall?: number, significantZeros = false): string {
  if (value === 0) return '0';
  if (!Number.isFinite(value)) return Number.isNaN(value) ? 'nan' : value > 0 ? 'inf' : '-inf';
  let sign = '';
  let v = value;
  if (v < 0) {
    sign = '-';
    v = -v;
  }
  let magnitude = Math.floor(Math.log10(v)) + 1;
  if (truncateSmall !== undefined) magnitude = Math.max(magnitude, -truncateSmall + 1);
  const numDigits = significant - magnitude;

  let body: string;
  let fixed = false;
  if (magnitude <= -5 || magnitude >= 9) {
    body = formatExponent(v, significant);
  } else if (v === Math.trunc(v) || numDigits <= 0) {
    body = pythonRoundToInteger(v, numDigits).toString();
  } else {
    body = formatFixed(v, numDigits);
    fixed = true;
  }
  let formatted = sign + body;
  if (!significantZeros && formatted.includes('.') && fixed) {
    formatted = formatted.replace(/0+$/, '');
    if (formatted.endsWith('.')) formatted = formatted.slice(0, -1);
  }
  if (significantZeros && !formatted.includes('.') && formatted.length < significant) {
    formatted += `.${'0'.repeat(significant - formatted.length)}`;
  }
  return formatted;
}

const TIME_UNITS: readonly (readonly [string, number])[] = [
  ['ns', 0.000000001],
  ['μs', 0.000001],
  ['ms', 0.001],
  ['s', 1],
  ['m', 60],
  ['h', 60 * 60],
  ['d', 60 * 60 * 24],
  ['w', 60 * 60 * 24 * 7],
  ['y', 60 * 60 * 24 * 7 * 52],
  ['C', 60 * 60 * 24 * 7 * 52 * 100],
];

/** A duration in seconds in the largest unit below it, e.g. `1.46±0.3ms`. */
export function humanTime(seconds: number, err: number | null = null): string {
  let units = TIME_UNITS;
  let scale = seconds;
  if (scale === 0 && err !== null) scale = err;
  if (scale === 0) {
    units = [
      ['s', 1],
      ['m', 60],
    ];
  }
  if (Number.isNaN(scale)) return 'n/a';
  for (let i = 0; i < units.length - 1; i++) {
    const [name, size] = units[i]!;
    if (scale < units[i + 1]![1]) {
      const str = humanFloat(seconds / size, 3, undefined, true);
      if (err === null) return `${str}${name}`;
      return `${str}±${humanFloat(err / size, 1, 2)}${name}`;
    }
  }
  return '~0';
}

/** A size in bytes with a k/M/G/… suffix, e.g. `64k`. */
export function humanFileSize(size: number, err: number | null = null): string {
  let s = size;
  if (s < 1) s = 0;
  const suffixes = ' kMGTPEH';
  const numScale = s === 0 ? 0 : Math.floor(Math.log(s) / Math.log(1000));
  const suffix = numScale > 7 ? '?' : suffixes[numScale]!.trim();
  const scale = Math.trunc(1000 ** numScale);
  const str = humanFloat(s / scale, 3);
  if (err === null) return `${str}${suffix}`;
  return `${str}±${humanFloat(err / scale, 1, 2)}${suffix}`;
}

/**
 * A benchmark value in its unit: `seconds` and `bytes` are humanized, other units print the
 * number (with `±err` to 2 significant digits); `null` (a failure) prints `failed`, NaN `n/a`.
 */
export function humanValue(value: number | null, unit: string | null, err: number | null = null): string {
  if (value === null) return 'failed';
  if (Number.isNaN(value)) return 'n/a';
  if (unit === 'seconds') return humanTime(value, err);
  if (unit === 'bytes') return humanFileSize(value, err);
  const display = pythonJsonNumber(value);
  return err === null ? display : `${display}±${formatGeneral(err, 2)}`;
}
