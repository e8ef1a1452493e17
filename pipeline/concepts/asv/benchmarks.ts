import { z } from 'zod';
import { asvSchemaError } from './asv-file-error.js';
import { checkSchemaVersion, parseAsvJson } from './results.js';

/**
 * asv's `benchmarks.json`: every discovered benchmark with its type, unit, parameters and version
 * (it lists all discovered benchmarks, not only those that ran).
 */

/** The schema version of benchmarks.json this reader understands (asv's `Benchmarks.api_version`). */
export const BENCHMARKS_SCHEMA_VERSION = 2;

/** The benchmark kinds asv knows; others (custom benchmark types) are kept as written. */
export type BenchmarkType = 'time' | 'timeraw' | 'mem' | 'peakmem' | 'track' | (string & {});

/** One benchmark as discovered by asv. */
export interface BenchmarkInfo {
  readonly name: string;
  readonly type: BenchmarkType;
  /** `seconds`, `bytes`, or a track benchmark's own unit; null when not given. */
  readonly unit: string | null;
  readonly params: readonly (readonly string[])[];
  readonly paramNames: readonly string[];
  readonly version: string | null;
}

/** One benchmark as asv's benchmarks.json describes it (perfmine's harness speaks the same, plus a few fields). */
export const benchmarkEntrySchema = z.looseObject({
  name: z.string(),
  type: z.string(),
  unit: z.string().nullable().optional(),
  params: z.array(z.array(z.string())).optional(),
  param_names: z.array(z.string()).optional(),
  version: z.string().nullable().optional(),
});

/**
 * Parses benchmarks.json into a map by benchmark name. Throws an ItemError naming the file and
 * field for an unknown schema version or a malformed entry.
 */
export function parseBenchmarksFile(text: string, source: string): ReadonlyMap<string, BenchmarkInfo> {
  const data = parseAsvJson(text, source);
  checkSchemaVersion(data, source, BENCHMARKS_SCHEMA_VERSION);
  const out = new Map<string, BenchmarkInfo>();
  for (const [key, value] of Object.entries(data as Record<string, unknown>)) {
    if (key === 'version') continue;
    const parsed = benchmarkEntrySchema.safeParse(value);
    if (!parsed.success) throw asvSchemaError(source, [key], parsed.error);
    const e = parsed.data;
    out.set(key, {
      name: e.name,
      type: e.type,
      unit: e.unit ?? null,
      params: e.params ?? [],
      paramNames: e.param_names ?? [],
      version: e.version ?? null,
    });
  }
  return out;
}
