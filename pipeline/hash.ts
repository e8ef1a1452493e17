import { createHash } from 'node:crypto';

/**
 * JSON with object keys sorted at every level, so that equal data always gives equal text.
 * `undefined` members are left out (as JSON.stringify does; in arrays they become null);
 * non-finite numbers become strings so that they survive a round trip and never collide with
 * `null`. Written directly, without building normalized copies: it hashes large records (diffs).
 */
export function stableStringify(value: unknown): string {
  return write(value) ?? 'null';
}

function write(value: unknown): string | undefined {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
      return Number.isFinite(value) ? JSON.stringify(value) : JSON.stringify(String(value));
    case 'boolean':
      return value ? 'true' : 'false';
    case 'bigint':
      return JSON.stringify(value.toString());
    case 'undefined':
    case 'function':
    case 'symbol':
      return undefined;
  }
  if (value === null) return 'null';
  if (Array.isArray(value)) return `[${value.map((v) => write(v) ?? 'null').join(',')}]`;
  if (value instanceof Date) return JSON.stringify(value.toISOString());
  const record = value as Record<string, unknown>;
  const parts: string[] = [];
  for (const key of Object.keys(record).sort()) {
    const v = write(record[key]);
    if (v !== undefined) parts.push(`${JSON.stringify(key)}:${v}`);
  }
  return `{${parts.join(',')}}`;
}

export function sha256(text: string | Uint8Array): string {
  return createHash('sha256').update(text).digest('hex');
}

/** Content hash of any JSON-able value, independent of key order. */
export function hashOf(value: unknown): string {
  return sha256(stableStringify(value));
}
