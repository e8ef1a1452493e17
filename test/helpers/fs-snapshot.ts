import { createHash } from 'node:crypto';
import { lstatSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { join, relative } from 'node:path';

/** Every entry under `root` (relative path -> kind, mode and, for files, the SHA-256 of the bytes). */
export function snapshotTree(root: string): Map<string, string> {
  const entries = new Map<string, string>();
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      const path = join(dir, name);
      const st = lstatSync(path);
      const mode = (st.mode & 0o7777).toString(8);
      const key = relative(root, path);
      if (st.isDirectory()) {
        entries.set(key, `dir ${mode}`);
        walk(path);
      } else if (st.isSymbolicLink()) {
        entries.set(key, `link ${readlinkSync(path)}`);
      } else {
        entries.set(key, `file ${mode} ${contentOf(path, st.size, st.mtimeMs)}`);
      }
    }
  };
  walk(root);
  return entries;
}

/** What differs between two snapshots: `+path` added, `-path` removed, `~path` changed. Sorted. */
export function treeChanges(before: ReadonlyMap<string, string>, after: ReadonlyMap<string, string>): string[] {
  const changes: string[] = [];
  for (const [path, what] of before) {
    if (!after.has(path)) changes.push(`-${path}`);
    else if (after.get(path) !== what) changes.push(`~${path}`);
  }
  for (const path of after.keys()) if (!before.has(path)) changes.push(`+${path}`);
  return changes.sort((a, b) => a.slice(1).localeCompare(b.slice(1)));
}

/** The bytes' SHA-256; for a file this user cannot read (a test's chmod 000), its size and mtime. */
function contentOf(path: string, size: number, mtimeMs: number): string {
  try {
    return createHash('sha256').update(readFileSync(path)).digest('hex');
  } catch {
    return `unreadable ${size} ${mtimeMs}`;
  }
}
