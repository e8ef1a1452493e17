import { formatFixed } from './py-format.js';
import type { ResultStats } from './results.js';
import { isDifferent, P_THRESHOLD } from './stats.js';

/**
 * `asv compare`'s decision for one workload (asv/commands/compare.py, asv 0.6.5+): a mark, the
 * ratio after/before, and the `~` flag for a ratio beyond the factor that is not significant.
 *
 * | mark | change       | when                                                        |
 * | ---- | ------------ | ----------------------------------------------------------- |
 * | `x`  | incomparable | both sides have a benchmark version and they differ         |
 * | `!`  | failed       | it ran before and fails after                               |
 * | `*`  | fixed        | it failed before and runs after                             |
 * | `-`  | improved     | after < before / factor, and significant (when stats allow) |
 * | `+`  | worsened     | before < after / factor, and significant (when stats allow) |
 * | ` `  | unchanged    | anything else: within the factor, not significant, both     |
 * |      |              | failed, or skipped / missing on a side                      |
 */

export type Mark = '-' | '+' | ' ' | 'x' | '!' | '*';
export type Change = 'improved' | 'worsened' | 'unchanged' | 'incomparable' | 'failed' | 'fixed';
/** asv's colour groups, which `--split` prints as separate tables. */
export type Section = 'improved' | 'unchanged' | 'worsened' | 'incomparable';

export const MARKS: readonly Mark[] = ['-', '+', ' ', 'x', '!', '*'];

/** asv compare's default factor. */
export const DEFAULT_FACTOR = 1.1;

/** One side's measurement of a workload. */
export interface Measurement {
  /** The stored result: a number, `null` (failed) or NaN (skipped). */
  readonly value: number | null;
  readonly stats: ResultStats | null;
  readonly samples: readonly number[] | null;
  readonly version: string | null;
}

export interface DecideOptions {
  /** A ratio beyond this factor (either way) counts as a change. */
  readonly factor: number;
  /** false: decide on the factor alone, as `asv compare --no-stats`. */
  readonly useStats: boolean;
  readonly pThreshold: number;
}

export const DEFAULT_DECIDE_OPTIONS: DecideOptions = { factor: DEFAULT_FACTOR, useStats: true, pThreshold: P_THRESHOLD };

export interface Verdict {
  readonly mark: Mark;
  readonly change: Change;
  readonly section: Section;
  /** after / before; null when either side failed, was skipped or is missing, or before is 0. */
  readonly ratio: number | null;
  /** The ratio is beyond the factor but the difference is not significant. */
  readonly tilde: boolean;
  /** The ratio as asv prints it: `0.55`, `~1.11`, `n/a`. */
  readonly ratioText: string;
}

const CHANGE_OF: Record<Mark, Change> = {
  '-': 'improved',
  '+': 'worsened',
  ' ': 'unchanged',
  x: 'incomparable',
  '!': 'failed',
  '*': 'fixed',
};
const SECTION_OF: Record<Change, Section> = {
  improved: 'improved',
  fixed: 'improved',
  worsened: 'worsened',
  failed: 'worsened',
  unchanged: 'unchanged',
  incomparable: 'incomparable',
};

/** Failed (null) or skipped / missing (NaN). */
function isNa(value: number | null): boolean {
  return value === null || Number.isNaN(value);
}

/**
 * Whether result `a` is better (smaller) than `b` by the factor (asv's `_is_result_better`).
 * With statistics on both sides and more than one sample each, the difference must first be
 * significant by {@link isDifferent}; a missing confidence bound counts as unbounded.
 */
export function isResultBetter(
  a: number,
  b: number,
  aSide: Measurement | null,
  bSide: Measurement | null,
  options: DecideOptions,
): boolean {
  if (options.useStats && aSide?.stats && bSide?.stats && (aSide.stats.repeat ?? 0) !== 1 && (bSide.stats.repeat ?? 0) !== 1) {
    const ci = (s: ResultStats) => ({ ciLower: s.ciLower ?? Number.NEGATIVE_INFINITY, ciUpper: s.ciUpper ?? Number.POSITIVE_INFINITY });
    if (!isDifferent(aSide.samples, bSide.samples, ci(aSide.stats), ci(bSide.stats), options.pThreshold)) return false;
  }
  return a < b / options.factor;
}

function verdict(mark: Mark, ratio: number | null, tilde: boolean): Verdict {
  const change = CHANGE_OF[mark];
  const text = ratio === null ? 'n/a' : formatFixed(ratio, 2);
  return { mark, change, section: SECTION_OF[change], ratio, tilde, ratioText: tilde ? `~${text}` : text };
}

/**
 * asv compare's verdict on one workload. `before` / `after` undefined: the workload is missing on
 * that side (asv treats it as NaN).
 */
export function decideWorkload(
  before: Measurement | undefined,
  after: Measurement | undefined,
  options: DecideOptions = DEFAULT_DECIDE_OPTIONS,
): Verdict {
  const t1 = before === undefined ? Number.NaN : before.value;
  const t2 = after === undefined ? Number.NaN : after.value;
  const ratio = t1 === null || t2 === null || Number.isNaN(t1) || Number.isNaN(t2) || t1 === 0 ? null : t2 / t1;
  const v1 = before?.version ?? null;
  const v2 = after?.version ?? null;

  if (v1 !== null && v2 !== null && v1 !== v2) return verdict('x', ratio, false);
  if (t1 !== null && t2 === null) return verdict('!', ratio, false);
  if (t1 === null && t2 !== null) return verdict('*', ratio, false);
  if (t1 === null || t2 === null || isNa(t1) || isNa(t2)) return verdict(' ', ratio, false);
  if (isResultBetter(t2, t1, after ?? null, before ?? null, options)) return verdict('-', ratio, false);
  if (isResultBetter(t1, t2, before ?? null, after ?? null, options)) return verdict('+', ratio, false);
  // Mark differences beyond the factor that are not statistically significant
  const plain = { ...options, useStats: false };
  const tilde = isResultBetter(t1, t2, null, null, plain) || isResultBetter(t2, t1, null, null, plain);
  return verdict(' ', ratio, tilde);
}
