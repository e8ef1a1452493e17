import { gunzipSync, gzipSync } from 'node:zlib';
import { z } from 'zod';
import type { EntryType, ImageTree, TreeEntry } from '../pipeline/concepts/image-tree.js';
import type { Db } from './store.js';
import { nowIso } from './store.js';

/**
 * Base images' inventories (table `image_inventories`, migration 0012): an image's tree as the
 * outside scan reads it (every path's type, mode, size, time and SHA-256 or link target, a few
 * small files' text, the configured environment), stored once per image id. One row per image:
 * the entries as rows of a JSON array, gzipped, in base64 text (a store slice travels as JSON).
 * A cache: `save` upserts; a row that does not parse, or of another format, reads as missing.
 */
export const INVENTORY_FORMAT = 1;

const TYPE_CODES: Readonly<Record<EntryType, string>> = { file: 'f', symlink: 'l', directory: 'd', other: 'o' };
const TYPES_BY_CODE = new Map(Object.entries(TYPE_CODES).map(([type, code]) => [code, type as EntryType]));

const encodedSchema = z
  .object({
    env: z.array(z.string()),
    // [path, type code, mode, size, mtime, sha256 (files) | target (links) | null]
    entries: z.array(z.tuple([z.string(), z.enum(['f', 'l', 'd', 'o']), z.number(), z.number(), z.number(), z.string().nullable()])),
    texts: z.array(z.tuple([z.string(), z.string()])),
    cut: z.array(z.string()),
  })
  .strict();

export interface InventoryStats {
  readonly files: number;
  readonly bytes: number;
  readonly durationMs: number;
}

export interface StoredInventory extends InventoryStats {
  readonly imageId: string;
  readonly tree: ImageTree;
  readonly createdAt: string;
}

/** The text stored for a tree (deterministic: paths in order). */
export function encodeInventory(tree: ImageTree): string {
  const entries = [...tree.entries]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([path, e]) => [path, TYPE_CODES[e.type], e.mode, e.size, e.mtime, e.type === 'symlink' ? (e.target ?? '') : (e.sha256 ?? null)]);
  const texts = [...tree.texts].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const json = JSON.stringify({ env: tree.env, entries, texts, cut: [...tree.cutTexts].sort() });
  return gzipSync(json, { level: 6 }).toString('base64');
}

/** The tree of a stored text. Throws when it does not parse. */
export function decodeInventory(text: string): ImageTree {
  const parsed = encodedSchema.parse(JSON.parse(gunzipSync(Buffer.from(text, 'base64')).toString('utf8')));
  const entries = new Map<string, TreeEntry>();
  for (const [path, code, mode, size, mtime, extra] of parsed.entries) {
    const type = TYPES_BY_CODE.get(code)!;
    entries.set(path, {
      type,
      mode,
      size,
      mtime,
      ...(type === 'file' && extra !== null ? { sha256: extra } : {}),
      ...(type === 'symlink' && extra !== null ? { target: extra } : {}),
    });
  }
  return { entries, texts: new Map(parsed.texts), cutTexts: new Set(parsed.cut), env: parsed.env };
}

interface Row {
  image_id: string;
  format: number;
  inventory: string;
  files: number;
  bytes: number;
  duration_ms: number;
  created_at: string;
}

export class ImageInventories {
  constructor(private readonly db: Db) {}

  /** The inventory of an image id, or null (none stored, another format, or a row that does not parse). */
  get(imageId: string): StoredInventory | null {
    const row = this.db.prepare<[string], Row>('SELECT * FROM image_inventories WHERE image_id = ?').get(imageId);
    if (!row || row.format !== INVENTORY_FORMAT) return null;
    try {
      return {
        imageId,
        tree: decodeInventory(row.inventory),
        files: row.files,
        bytes: row.bytes,
        durationMs: row.duration_ms,
        createdAt: row.created_at,
      };
    } catch {
      return null;
    }
  }

  /** Records (or replaces) an image's inventory. */
  save(imageId: string, tree: ImageTree, stats: InventoryStats): void {
    this.db
      .prepare(
        `INSERT INTO image_inventories (image_id, format, inventory, files, bytes, duration_ms, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (image_id) DO UPDATE SET format = excluded.format, inventory = excluded.inventory, files = excluded.files,
           bytes = excluded.bytes, duration_ms = excluded.duration_ms, created_at = excluded.created_at`,
      )
      .run(imageId, INVENTORY_FORMAT, encodeInventory(tree), stats.files, stats.bytes, Math.round(stats.durationMs), nowIso());
  }
}
