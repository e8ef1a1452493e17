/**
 * Sharding of a code search by file size (pure). GitHub returns at most 1,000 results per
 * query; a query whose total is larger is split into two size ranges, until each range fits or
 * is one byte wide.
 */
export interface SizeRange {
  readonly min: number;
  readonly max: number;
}

/** `filename:asv.conf.json size:100..200` */
export function shardQuery(filename: string, range: SizeRange): string {
  return `filename:${filename} size:${range.min}..${range.max}`;
}

/** Two halves of a range, or null when it cannot be split. */
export function splitRange(range: SizeRange): [SizeRange, SizeRange] | null {
  if (range.max <= range.min) return null;
  const mid = Math.floor((range.min + range.max) / 2);
  return [
    { min: range.min, max: mid },
    { min: mid + 1, max: range.max },
  ];
}

export type ShardDecision =
  | { readonly kind: 'split'; readonly ranges: [SizeRange, SizeRange] }
  | { readonly kind: 'read'; readonly pages: number; readonly unreachable: number };

/** What to do with a range whose first page says `total` results. */
export function decideShard(range: SizeRange, total: number, cap: number, perPage: number): ShardDecision {
  if (total > cap) {
    const halves = splitRange(range);
    if (halves) return { kind: 'split', ranges: halves };
  }
  const reachable = Math.min(total, cap);
  return { kind: 'read', pages: Math.max(1, Math.ceil(reachable / perPage)), unreachable: total - reachable };
}
