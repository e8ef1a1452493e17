import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { configSchema } from '../../pipeline/config/schema.js';
import { REPO_ROOT } from '../helpers/index.js';

/**
 * The docs against the configuration schema: every key a table of docs/ names exists in the schema,
 * and every key of the schema is in a table (docs/configuration.md has them all; a stage's page its
 * own), itself or an object or map above it documented as a whole (`repositories."owner/name"`).
 */

type Def = { type: string; innerType?: z.ZodType; in?: z.ZodType; shape?: Record<string, z.ZodType> };
const defOf = (s: unknown): Def | undefined => (s as { _zod?: { def?: Def } } | undefined)?._zod?.def;
const WRAPPERS = new Set(['default', 'prefault', 'optional', 'nullable', 'catch', 'readonly', 'nonoptional']);

function unwrap(schema: z.ZodType): z.ZodType {
  let s = schema;
  for (let def = defOf(s); def; def = defOf(s)) {
    if (WRAPPERS.has(def.type) && def.innerType) s = def.innerType;
    else if (def.type === 'pipe' && def.in) s = def.in;
    else break;
  }
  return s;
}

/** Every key of the schema by dotted path, with whether it is an object (its keys listed too). */
function schemaKeys(schema: z.ZodType, prefix = '', out = new Map<string, 'object' | 'value'>()): Map<string, 'object' | 'value'> {
  const def = defOf(unwrap(schema));
  if (def?.type === 'object' && def.shape) {
    if (prefix) out.set(prefix, 'object');
    for (const [k, v] of Object.entries(def.shape)) schemaKeys(v, prefix ? `${prefix}.${k}` : k, out);
  } else out.set(prefix, 'value');
  return out;
}

/**
 * The keys the docs' tables name in their first column, from every page: a cell may name several,
 * the later ones short (`discover.minStars`, `maxInactiveYears`), read under the first one's parents.
 */
function documentedKeys(schema: ReadonlyMap<string, unknown>): { keys: Set<string>; unknown: string[] } {
  const keys = new Set<string>();
  const unknown: string[] = [];
  for (const page of readdirSync(join(REPO_ROOT, 'docs')).filter((f) => f.endsWith('.md'))) {
    for (const line of readFileSync(join(REPO_ROOT, 'docs', page), 'utf8').split('\n')) {
      if (!line.startsWith('| `')) continue;
      const names = [...line.split('|')[1]!.matchAll(/`([^`]+)`/g)].map((m) =>
        m[1]!.replace(/\."owner\/name".*$/, '').replace(/\.\*$/, ''),
      );
      const parents = names[0]!.split('.').map((_, i, parts) => parts.slice(0, parts.length - 1 - i).join('.'));
      for (const name of names) {
        const key = [name, ...parents.filter(Boolean).map((p) => `${p}.${name}`)].find((k) => schema.has(k));
        if (key) keys.add(key);
        else unknown.push(`${page}: ${name}`);
      }
    }
  }
  return { keys, unknown };
}

describe("the docs' configuration keys", () => {
  const schema = schemaKeys(configSchema);
  const { keys: documented, unknown } = documentedKeys(schema);

  it('name only keys the schema has', () => {
    expect(documented.size).toBeGreaterThan(100);
    expect(unknown).toEqual([]);
  });

  it('cover every key of the schema', () => {
    const covered = (key: string) => key.split('.').some((_, i, parts) => documented.has(parts.slice(0, parts.length - i).join('.')));
    const values = [...schema].filter(([, kind]) => kind === 'value').map(([k]) => k);
    expect(values.length).toBeGreaterThan(100);
    expect(values.filter((k) => !covered(k))).toEqual([]);
  });
});
