import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type TarStream from 'tar-stream';
import { lazyRequire } from '../lazy-require.js';
import {
  absolutePath,
  keepsText,
  needsMd5,
  TEXT_LIMIT,
  type EntryType,
  type ImageTree,
  type TreeEntry,
} from '../../concepts/image-tree.js';

const loadTar = lazyRequire<typeof TarStream>('tar-stream');

export interface TreeReadStats {
  /** Archive members read (files, links, directories, devices). */
  readonly filesRead: number;
  /** Content bytes read (and hashed). */
  readonly bytesRead: number;
}

function entryType(type: string | null | undefined): EntryType | 'link' {
  switch (type) {
    case 'file':
    case 'contiguous-file':
      return 'file';
    case 'link':
      return 'link';
    case 'symlink':
      return 'symlink';
    case 'directory':
      return 'directory';
    default:
      return 'other';
  }
}

/**
 * Reads an image's filesystem from a tar stream (a container export): every member's type, mode,
 * size and time, a SHA-256 of every regular file, and the text of the files the rules read. With
 * `compareTo` (the base's entries), also an MD5 (dpkg's hash) of each file that is not the base's
 * file in type, size and time. A hard link is the file it links to (its hashes). Nothing else of
 * the contents is kept.
 */
export async function readImageTree(
  archive: NodeJS.ReadableStream,
  env: readonly string[],
  compareTo: ReadonlyMap<string, TreeEntry> | null,
): Promise<{ tree: ImageTree; stats: TreeReadStats }> {
  const entries = new Map<string, TreeEntry>();
  const texts = new Map<string, string>();
  const cutTexts = new Set<string>();
  let filesRead = 0;
  let bytesRead = 0;
  const extract = loadTar().extract();
  const consume = (async () => {
    for await (const member of extract) {
      const header = member.header;
      const path = absolutePath(header.name);
      const type = entryType(header.type);
      const mtime = Math.floor((header.mtime?.getTime() ?? 0) / 1000);
      const mode = (header.mode ?? 0) & 0o7777;
      filesRead += 1;
      if (type === 'file') {
        const size = header.size ?? 0;
        const sha = createHash('sha256');
        const md5 = compareTo && needsMd5(compareTo.get(path), { type, size, mtime }) ? createHash('md5') : null;
        const keep = keepsText(path) ? ([] as Buffer[]) : null;
        let kept = 0;
        for await (const chunk of member as AsyncIterable<Buffer>) {
          bytesRead += chunk.length;
          sha.update(chunk);
          md5?.update(chunk);
          if (keep && kept < TEXT_LIMIT) {
            const part = chunk.subarray(0, TEXT_LIMIT - kept);
            keep.push(part);
            kept += part.length;
          }
        }
        if (keep) {
          texts.set(path, Buffer.concat(keep).toString('utf8'));
          if (size > TEXT_LIMIT) cutTexts.add(path);
        }
        entries.set(path, { type, mode, size, mtime, sha256: sha.digest('hex'), ...(md5 ? { md5: md5.digest('hex') } : {}) });
        continue;
      }
      // Members other than files have no content; drain whatever there is.
      for await (const _chunk of member as AsyncIterable<Buffer>) void _chunk;
      if (type === 'link') {
        const target = entries.get(absolutePath(header.linkname ?? ''));
        const text = texts.get(absolutePath(header.linkname ?? ''));
        if (text !== undefined && keepsText(path)) texts.set(path, text);
        entries.set(path, { ...(target ?? { type: 'file', size: 0 }), mode, mtime });
        continue;
      }
      entries.set(path, {
        type,
        mode,
        size: 0,
        mtime,
        ...(type === 'symlink' ? { target: header.linkname ?? '' } : {}),
      });
    }
  })().catch((error: unknown) => {
    extract.destroy(error as Error);
    throw error;
  });
  await Promise.all([pipeline(archive as Readable, extract), consume]);
  entries.delete('/');
  return { tree: { entries, texts, cutTexts, env: [...env] }, stats: { filesRead, bytesRead } };
}
