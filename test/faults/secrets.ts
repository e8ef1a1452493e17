/**
 * Where a credential could leak, and how to look there: text, files, a database, image layers
 * (`docker save`), containers' environments. Each check returns the secrets it found (an empty
 * list is the pass), so a test can list every sink it covers:
 *
 *   expect(foundIn(stderr, SECRETS)).toEqual([]);
 *   expect(await foundInImages(docker, ids, SECRETS)).toEqual([]);
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type Docker from 'dockerode';

/** The secrets that occur in a text or in bytes. */
export function foundIn(haystack: string | Buffer, secrets: readonly string[]): string[] {
  const bytes = typeof haystack === 'string' ? Buffer.from(haystack, 'utf8') : haystack;
  return secrets.filter((s) => needles(s).some((n) => bytes.includes(n)));
}

function needles(secret: string): Buffer[] {
  return [Buffer.from(secret, 'utf8')];
}

/** Every regular file under a directory (recursively). */
export function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    const st = statSync(path);
    if (st.isDirectory()) out.push(...filesUnder(path));
    else if (st.isFile()) out.push(path);
  }
  return out;
}

/** `path: secret` for each secret found in any file under the directories. */
export function foundInFiles(dirs: readonly string[], secrets: readonly string[]): string[] {
  return dirs.flatMap((dir) => filesUnder(dir).flatMap((file) => foundIn(readFileSync(file), secrets).map((s) => `${file}: ${s}`)));
}

/**
 * Streams `docker save` of the images (one tarball: every layer and config once) and searches its
 * bytes; `markers` are strings that must be found (to show the search sees the layers' files).
 */
export async function foundInImages(
  docker: Docker,
  images: readonly string[],
  secrets: readonly string[],
  markers: readonly string[] = [],
): Promise<{ secrets: string[]; markers: string[]; bytes: number }> {
  const all = [
    ...new Set([...secrets.flatMap(needles), ...markers.map((m) => Buffer.from(m, 'utf8'))].map((b) => b.toString('latin1'))),
  ].map((s) => Buffer.from(s, 'latin1'));
  const longest = Math.max(...all.map((n) => n.length));
  const hits = new Set<string>();
  let carry = Buffer.alloc(0);
  let bytes = 0;
  // GET /images/get?names=...: dockerode has it (getImages) but its types do not.
  const save = (docker as unknown as { getImages(opts: { names: string[] }): Promise<NodeJS.ReadableStream> }).getImages.bind(docker);
  const stream = await save({ names: [...images] });
  await new Promise<void>((resolve, reject) => {
    stream.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      const window = Buffer.concat([carry, chunk]);
      for (const n of all) if (window.includes(n)) hits.add(n.toString('latin1'));
      carry = window.subarray(Math.max(0, window.length - longest + 1));
    });
    stream.on('end', resolve);
    stream.on('error', reject);
  });
  const found = (s: string) => needles(s).some((n) => hits.has(n.toString('latin1')));
  return { secrets: secrets.filter(found), markers: markers.filter((m) => hits.has(m)), bytes };
}

/** Secrets in the environment the engine holds for an image (its Config.Env). */
export async function foundInImageEnv(docker: Docker, images: readonly string[], secrets: readonly string[]): Promise<string[]> {
  const out: string[] = [];
  for (const image of images) {
    const info = await docker.getImage(image).inspect();
    out.push(...foundIn((info.Config?.Env ?? []).join('\n'), secrets).map((s) => `${image}: ${s}`));
  }
  return out;
}
