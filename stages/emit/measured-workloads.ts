import type { ImprovedWorkload } from '../../cache/improved-workloads.js';

/**
 * The observations of a rules-only problem statement: the workloads validate found improved, with
 * their parameters, their value at the base commit and the speedup the reference solution (the
 * expert patch) reached. Facts measured before and after the fix, none of its words. Pure.
 */

/** Rows shown at most; the rest are counted. */
export const MAX_WORKLOAD_ROWS = 50;

function significant(value: number): string {
  return String(Number(value.toPrecision(3)));
}

/** A measured value in its unit: seconds as ns/µs/ms/s, bytes as B/KiB/MiB/GiB, 3 significant digits. */
export function formatMeasure(value: number | null, unit: string | null): string {
  if (value === null || !Number.isFinite(value)) return 'not measured';
  if (unit === 'seconds') {
    const scaled: [number, string][] = [
      [1, 's'],
      [1e-3, 'ms'],
      [1e-6, 'µs'],
      [1e-9, 'ns'],
    ];
    const [factor, name] = scaled.find(([f]) => Math.abs(value) >= f) ?? scaled[scaled.length - 1]!;
    return `${significant(value / factor)} ${name}`;
  }
  if (unit === 'bytes') {
    const scaled: [number, string][] = [
      [2 ** 30, 'GiB'],
      [2 ** 20, 'MiB'],
      [2 ** 10, 'KiB'],
      [1, 'B'],
    ];
    const [factor, name] = scaled.find(([f]) => Math.abs(value) >= f) ?? scaled[scaled.length - 1]!;
    return `${significant(value / factor)} ${name}`;
  }
  return unit ? `${significant(value)} ${unit}` : significant(value);
}

/** The workload's name without its parameter part. */
export function benchmarkName(w: Pick<ImprovedWorkload, 'name' | 'params'>): string {
  const suffix = w.params === null ? '' : `(${w.params})`;
  return suffix && w.name.endsWith(suffix) ? w.name.slice(0, -suffix.length) : w.name;
}

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

export function measuredWorkloadsSection(workloads: readonly ImprovedWorkload[]): string {
  const sorted = [...workloads].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const shown = sorted.slice(0, MAX_WORKLOAD_ROWS);
  const rows = shown.map(
    (w) =>
      `| \`${benchmarkName(w)}\` | ${w.params === null ? '' : cell(w.params)} | ${formatMeasure(w.baseMedian, w.unit)} | ${w.speedup === null ? 'not measured' : `${w.speedup.toFixed(2)}x`} |`,
  );
  const more = sorted.length > shown.length ? [``, `... and ${sorted.length - shown.length} more improved workloads.`] : [];
  return [
    `These workloads of the repository's asv benchmarks are slow at this commit. They were measured here and with a reference solution, the two interleaved on the same machine; the reference made them faster by the speedups shown (the value at this commit divided by the value with the reference: time, or memory for \`mem_\` and \`peakmem_\` workloads). Your change is measured the same way, and these speedups are the ones to beat.`,
    '',
    '| workload | parameters | at this commit | reference speedup |',
    '| --- | --- | ---: | ---: |',
    ...rows,
    ...more,
  ].join('\n');
}
