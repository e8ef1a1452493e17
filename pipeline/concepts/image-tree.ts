/**
 * An image's filesystem as read from outside (an export of a container never started): every
 * path with its type and identity, the text of the few small files the scan's rules read, and the
 * image's configured environment. Pure types and helpers over them.
 */

export type EntryType = 'file' | 'symlink' | 'directory' | 'other';

export interface TreeEntry {
  readonly type: EntryType;
  /** Permission bits. */
  readonly mode: number;
  /** Bytes (regular files). */
  readonly size: number;
  /** Modification time, whole seconds since the epoch, as the archive records it. */
  readonly mtime: number;
  /** Content hash (regular files; a hard link carries its target's). */
  readonly sha256?: string;
  /**
   * MD5 of the content, the hash dpkg records: computed only for a scanned file that is not the
   * base's at the same path in type, size and time (a base file kept as it was needs none).
   */
  readonly md5?: string;
  /** Symbolic link: its target as written (absolute, or relative to the link's directory). */
  readonly target?: string;
}

export interface ImageTree {
  /** Absolute paths (`/usr/bin/python3`), no trailing slash; the root itself is not listed. */
  readonly entries: ReadonlyMap<string, TreeEntry>;
  /** The text of each file `keepsText` names (UTF-8; cut at TEXT_LIMIT bytes, see `cutTexts`). */
  readonly texts: ReadonlyMap<string, string>;
  /** Paths whose text was longer than TEXT_LIMIT (only the first TEXT_LIMIT bytes are in `texts`). */
  readonly cutTexts: ReadonlySet<string>;
  /** The image's configured environment (`Config.Env`: `NAME=value`). */
  readonly env: readonly string[];
}

/** Bytes of a kept text file that are read; a longer file is refused where its whole text matters (a `.pth`). */
export const TEXT_LIMIT = 4 * 1024 * 1024;

/** The small files the rules read: `.pth` files, pyvenv.cfg, dpkg's records, the dynamic linker's configuration. */
export function keepsText(path: string): boolean {
  return (
    path.endsWith('.pth') ||
    path.endsWith('/pyvenv.cfg') ||
    /^\/var\/lib\/dpkg\/info\/[^/]+\.md5sums$/.test(path) ||
    path === '/var/lib/dpkg/status' ||
    path === '/etc/ld.so.preload' ||
    path === '/etc/ld.so.conf' ||
    /^\/etc\/ld\.so\.conf\.d\/[^/]+\.conf$/.test(path)
  );
}

/** An archive member's name as an absolute path: `./usr/bin/` -> `/usr/bin`. */
export function absolutePath(name: string): string {
  const parts = name.split('/').filter((p) => p !== '' && p !== '.');
  return `/${parts.join('/')}`;
}

export function dirnameOf(path: string): string {
  const slash = path.lastIndexOf('/');
  return slash <= 0 ? '/' : path.slice(0, slash);
}

export function basenameOf(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

/** `dir` joined with a relative or absolute `target`, `.` and `..` resolved lexically (never above `/`). */
export function joinPath(dir: string, target: string): string {
  const parts: string[] = target.startsWith('/') ? [] : dir.split('/').filter(Boolean);
  for (const p of target.split('/')) {
    if (p === '' || p === '.') continue;
    if (p === '..') parts.pop();
    else parts.push(p);
  }
  return `/${parts.join('/')}`;
}

const MAX_LINKS = 40;

/**
 * Where a path leads in the tree, every symbolic link on the way followed inside the tree (the
 * image's root, never the host's), as the kernel would inside a container: null when it leads
 * nowhere (a missing component, a loop). `followLast: false` keeps a final symbolic link itself.
 */
export function resolvePath(entries: ReadonlyMap<string, TreeEntry>, path: string, followLast = true): string | null {
  let pending = path.split('/').filter(Boolean);
  let current = '';
  let hops = 0;
  while (pending.length > 0) {
    const [head, ...rest] = pending as [string, ...string[]];
    pending = rest;
    if (head === '.') continue;
    if (head === '..') {
      current = current === '' ? '' : dirnameOf(current) === '/' ? '' : dirnameOf(current);
      continue;
    }
    const next = `${current}/${head}`;
    const entry = entries.get(next);
    if (!entry) return null;
    if (entry.type === 'symlink' && (pending.length > 0 || followLast)) {
      if (++hops > MAX_LINKS || entry.target === undefined) return null;
      const target = entry.target;
      pending = [...target.split('/').filter(Boolean), ...pending];
      if (target.startsWith('/')) current = '';
      continue;
    }
    current = next;
  }
  return current === '' ? '/' : current;
}

/** How a scanned path stands against the base: absent there, different, or the same. */
export type Change = 'new' | 'changed' | 'same';

/** Same type, and the same content (files), target (links) or nothing more (directories, devices). Modes do not count. */
export function changeOf(base: TreeEntry | undefined, image: TreeEntry): Change {
  if (!base) return 'new';
  if (base.type !== image.type) return 'changed';
  if (image.type === 'file') return base.sha256 === image.sha256 ? 'same' : 'changed';
  if (image.type === 'symlink') return base.target === image.target ? 'same' : 'changed';
  return 'same';
}

/** Whether a scanned file needs its MD5 (dpkg's hash): it is not the base's file in type, size and time. */
export function needsMd5(base: TreeEntry | undefined, image: { type: EntryType; size: number; mtime: number }): boolean {
  return image.type === 'file' && (!base || base.type !== 'file' || base.size !== image.size || base.mtime !== image.mtime);
}

/** The value of NAME in an environment list (`NAME=value`), or undefined. */
export function envValue(env: readonly string[], name: string): string | undefined {
  const prefix = `${name}=`;
  const line = env.find((l) => l.startsWith(prefix) || l === name);
  return line === undefined ? undefined : line.slice(prefix.length);
}
