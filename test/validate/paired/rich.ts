import { parseResultsFile, resultSetOf, splitAppendedSamples, type ResultSet } from '../../../pipeline/concepts/asv/index.js';
import type { PairedInput } from '../../../stages/validate/paired/index.js';
import { readReference, RICH_DIR } from '../../concepts/asv/reference.js';

/**
 * The rich #3399 runs as perfmine would have kept them: one result set per invocation, split out
 * of the `--append-samples` files (10 samples per invocation in r2x2, 20 in r4x4; see the
 * README). ab/ alternates base, expert; aa1/ and aa2/ alternate the same way (calibration).
 */
export const RICH_PROTOCOLS = { r2x2: 10, r4x4: 20 } as const;
export type RichProtocol = keyof typeof RICH_PROTOCOLS;
export const RICH_BASE = '349042fd';
export const RICH_EXPERT = '577def22';

export function richFile(protocol: RichProtocol, run: 'ab' | 'aa1' | 'aa2', commit: string): ResultSet {
  const path = `${RICH_DIR}${protocol}/${run}/${commit}-existing-py_usr_bin_python3.json`;
  return resultSetOf(parseResultsFile(readReference(path), path));
}

export function richInvocations(protocol: RichProtocol, run: 'ab' | 'aa1' | 'aa2', commit: string): ResultSet[] {
  return splitAppendedSamples(richFile(protocol, run, commit), RICH_PROTOCOLS[protocol]);
}

export function richInput(protocol: RichProtocol): PairedInput {
  return {
    base: richInvocations(protocol, 'ab', RICH_BASE),
    expert: richInvocations(protocol, 'ab', RICH_EXPERT),
    calibration: { first: richInvocations(protocol, 'aa1', RICH_BASE), second: richInvocations(protocol, 'aa2', RICH_BASE) },
  };
}

/** A copy of the sets with the named workloads' values and samples multiplied by `factor`. */
export function scaled(sets: readonly ResultSet[], names: ReadonlySet<string>, factor: number): ResultSet[] {
  return sets.map((set) => ({
    ...set,
    workloads: set.workloads.map((w) =>
      names.has(w.name) && typeof w.value === 'number'
        ? { ...w, value: w.value * factor, samples: w.samples?.map((s) => s * factor) ?? null, stats: w.stats }
        : w,
    ),
  }));
}
