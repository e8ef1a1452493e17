import { createHash } from 'node:crypto';
import { prepared } from './prepared.js';
import type { Db } from './store.js';
import { nowIso } from './store.js';

/**
 * Content-addressed binary files (migration 0014): the sealed histories task folders carry. An
 * upsert by SHA-256 (the same bytes are stored once, whoever writes them); read back whole.
 */

/** A stored blob: its digest and size, and its bytes on demand (a month's bundles are not all held at once). */
export interface BlobRef {
  readonly sha256: string;
  readonly size: number;
  read(): Buffer;
}

export function blobDigest(data: Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

/** Stores the bytes (once per digest) and returns their SHA-256. */
export function saveBlob(db: Db, data: Uint8Array): string {
  const sha256 = blobDigest(data);
  prepared(db, 'INSERT INTO blobs (sha256, size, data, created_at) VALUES (?, ?, ?, ?) ON CONFLICT (sha256) DO NOTHING').run(
    sha256,
    data.length,
    Buffer.from(data.buffer, data.byteOffset, data.byteLength),
    nowIso(),
  );
  return sha256;
}

/** A reference to a stored blob, or null when the store lacks it. */
export function blobRef(db: Db, sha256: string): BlobRef | null {
  const row = prepared<[string], { size: number }>(db, 'SELECT size FROM blobs WHERE sha256 = ?').get(sha256);
  if (!row) return null;
  return {
    sha256,
    size: row.size,
    read: () => {
      const data = prepared<[string], { data: Buffer }>(db, 'SELECT data FROM blobs WHERE sha256 = ?').get(sha256)?.data;
      if (!data) throw new Error(`blob ${sha256} is gone from the store`);
      return data;
    },
  };
}
