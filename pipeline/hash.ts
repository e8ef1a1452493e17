import { createHash } from 'node:crypto';

/**
 * JSON with object keys sorted at every level, so that equal data always gives equal text.
 * `undefined` members are left out (as JSON.stringify does); non-finite numbers become strings
 * so that they survive a round trip and never collide with `null`.
 */
export function stableStringify(value: unknown): string {
  return JSON.stringify(normalize(value));
}

function normalize(value: unknown): unknown {
  if (value === null || typeof value !== 'object') {
    if (typeof value === 'number' && !Number.isFinite(value)) return String(value);
    if (typeof value === 'bigint') return value.toString();
    return value;
  }
  if (Array.isArray(value)) return value.map((v) => (v === undefined ? null : normalize(v)));
  if (value instanceof Date) return value.toISOString();
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) {
    const v = (value as Record<string, unknown>)[key];
    if (v !== undefined) out[key] = normalize(v);
  }
  return out;
}

export function sha256(text: string | Uint8Array): string {
  return createHash('sha256').update(text).digest('hex');
}

/** Content hash of any JSON-able value, independent of key order. */
export function hashOf(value: unknown): string {
  return sha256(stableStringify(value));
}
