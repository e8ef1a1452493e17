import { createHash } from 'node:crypto';
import type { BlobRef } from '../../../cache/blobs.js';

/** A file's content: text, bytes, or a stored blob read when it is written (a task folder's files). */
export type FileContent = string | Uint8Array | BlobRef;

function isBlob(content: FileContent): content is BlobRef {
  return typeof content === 'object' && 'read' in content;
}

/** The bytes of a file's content (a blob is read from the store). */
export function contentBytes(content: FileContent): string | Uint8Array {
  return isBlob(content) ? content.read() : content;
}

/** A file's SHA-256 (a blob's is known without reading it). */
export function contentDigest(content: FileContent): string {
  return isBlob(content) ? content.sha256 : createHash('sha256').update(content).digest('hex');
}
