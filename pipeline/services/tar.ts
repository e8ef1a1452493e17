import { createReadStream, statSync } from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type TarStream from 'tar-stream';
import { lazyRequire } from './lazy-require.js';

/** tar-stream (CommonJS), loaded the first time an archive is made or read: only Docker work needs it. */
const loadTar = lazyRequire<typeof TarStream>('tar-stream');

/** One file of a generated tar archive (a build context, or files put into a container). */
export interface TarEntry {
  /** Path inside the archive, relative (`Dockerfile`, `perfmine/docker_build.sh`). */
  readonly name: string;
  /** Text or bytes, or a file on the host streamed in (large git bundles). */
  readonly content: string | Buffer | { readonly file: string };
  /** Unix mode; default 0o644. */
  readonly mode?: number;
}

/** A tar stream of the entries, written lazily (host files are streamed, never read whole). */
export function packEntries(entries: readonly TarEntry[]): Readable {
  const pack = loadTar().pack();
  const fixed = new Date(0);
  void (async () => {
    try {
      for (const entry of entries) {
        const header = { name: entry.name, mode: entry.mode ?? 0o644, mtime: fixed };
        const { content } = entry;
        if (typeof content === 'string' || Buffer.isBuffer(content)) {
          await new Promise<void>((resolve, reject) => pack.entry(header, content, (e) => (e ? reject(e) : resolve())));
        } else {
          const size = statSync(content.file).size;
          const sink = pack.entry({ ...header, size });
          await pipeline(createReadStream(content.file), sink);
        }
      }
      pack.finalize();
    } catch (error) {
      pack.destroy(error as Error);
    }
  })();
  // tar-stream's packer is a streamx stream; hand out a Node stream (dockerode pipes it into HTTP).
  return Readable.from(pack);
}

/** Reads a tar stream into memory: regular files only, by path. Stops keeping bytes past `maxBytes`. */
export async function unpackToMap(stream: NodeJS.ReadableStream, maxBytes = 64 * 1024 * 1024): Promise<Map<string, Buffer>> {
  const files = new Map<string, Buffer>();
  let total = 0;
  const extract = loadTar().extract();
  const done = (async () => {
    for await (const entry of extract) {
      const chunks: Buffer[] = [];
      for await (const chunk of entry) {
        total += (chunk as Buffer).length;
        if (total <= maxBytes) chunks.push(chunk as Buffer);
      }
      if (entry.header.type === 'file' && total <= maxBytes) files.set(entry.header.name, Buffer.concat(chunks));
    }
  })();
  await pipeline(stream as Readable, extract);
  await done;
  return files;
}
