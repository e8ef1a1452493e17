import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { contentBytes, type FileContent } from '../../stages/emit/month-files.js';

/**
 * Writes the dataset folder: a file is written only when its bytes differ (publishing an unchanged
 * month again touches nothing), and files under `data/` and `tasks/` that the dataset no longer
 * has are removed. Anything else in the folder (a `.git`, `.gitattributes`) is left alone.
 */

export interface WriteReport {
  readonly written: readonly string[];
  readonly unchanged: number;
  readonly removed: readonly string[];
}

function filesUnder(root: string, dir: string): string[] {
  const full = join(root, dir);
  if (!existsSync(full)) return [];
  return readdirSync(full, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => relative(root, join(e.parentPath, e.name)));
}

function same(path: string, content: string | Uint8Array): boolean {
  if (!existsSync(path)) return false;
  const old = readFileSync(path);
  const next = typeof content === 'string' ? Buffer.from(content, 'utf8') : Buffer.from(content);
  return old.equals(next);
}

export function writeDataset(dir: string, files: ReadonlyMap<string, FileContent>): WriteReport {
  mkdirSync(dir, { recursive: true });
  const written: string[] = [];
  let unchanged = 0;
  for (const [path, stored] of files) {
    const full = join(dir, path);
    const content = contentBytes(stored);
    if (same(full, content)) {
      unchanged++;
      continue;
    }
    mkdirSync(dirname(full), { recursive: true });
    writeFileSync(full, content);
    written.push(path);
  }
  const removed = [...filesUnder(dir, 'data'), ...filesUnder(dir, 'tasks')].filter((p) => !files.has(p)).sort();
  for (const p of removed) rmSync(join(dir, p));
  return { written, unchanged, removed };
}
