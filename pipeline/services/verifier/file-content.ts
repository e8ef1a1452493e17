import { createHash } from 'node:crypto';
import type { BlobRef } from '../../../cache/blobs.js';
import { ItemError } from '../../errors.js';

/** A file's content: text, bytes, or a stored blob read when it is written (a task folder's files). */
export type FileContent = string | Uint8Array | BlobRef;

function isBlob(content: FileContent): content is BlobRef {
  return typeof content === 'object' && 'read' in content;
}

/**
 * The bytes of a file's content. A blob is read (from the store, or a task folder's file) and its
 * bytes must have the SHA-256 it is known by (a bundle's, a locked file's from the lock): anything
 * else is refused, so that no folder, export or build context is written with a file other than
 * the one recorded.
 */
export function contentBytes(content: FileContent, path?: string): string | Uint8Array {
  if (!isBlob(content)) return content;
  const bytes = content.read();
  const actual = createHash('sha256').update(bytes).digest('hex');
  if (actual !== content.sha256)
    throw new ItemError('file-hash-mismatch', `${path ?? 'a file'}: read as sha256:${content.sha256}, its bytes have sha256:${actual}`, {
      fix: 'the stored or copied file was changed: emit the task again (`perfmine stage emit --force`), or copy its folder again',
    });
  return bytes;
}

/** A file's SHA-256 (a blob's is known without reading it). */
export function contentDigest(content: FileContent): string {
  return isBlob(content) ? content.sha256 : createHash('sha256').update(content).digest('hex');
}
