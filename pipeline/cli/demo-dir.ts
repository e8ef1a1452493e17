import { existsSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError } from '../errors.js';

/** The file that marks a directory as the demo's own: only such a directory is ever emptied. */
export const DEMO_MARKER = '.perfmine-demo';

/** What the demo puts in its directory; `--fresh` removes these and nothing else. */
export const DEMO_ENTRIES = ['fastmath', 'index', 'perfmine.db', 'perfmine.db-wal', 'perfmine.db-shm', 'out', DEMO_MARKER] as const;

export type DemoDirState =
  | { readonly kind: 'absent' }
  | { readonly kind: 'empty' }
  /** Has the marker. */
  | { readonly kind: 'demo' }
  /** No marker, but holds only what a demo of an earlier version made (a sample repository among them). */
  | { readonly kind: 'earlier-demo' }
  | { readonly kind: 'foreign'; readonly entries: readonly string[] }
  | { readonly kind: 'not-a-directory' };

/** What is at the demo's directory. Pure over the directory listing (`entries`: null when it does not exist). */
export function classifyDemoDir(entries: readonly string[] | null, isDirectory = true): DemoDirState {
  if (!isDirectory) return { kind: 'not-a-directory' };
  if (entries === null) return { kind: 'absent' };
  if (entries.length === 0) return { kind: 'empty' };
  if (entries.includes(DEMO_MARKER)) return { kind: 'demo' };
  const own = new Set<string>(DEMO_ENTRIES);
  const foreign = entries.filter((e) => !own.has(e));
  if (foreign.length === 0 && entries.includes('fastmath')) return { kind: 'earlier-demo' };
  return { kind: 'foreign', entries: foreign.length > 0 ? foreign : entries };
}

function inspect(dir: string): DemoDirState {
  if (!existsSync(dir)) return classifyDemoDir(null);
  if (!statSync(dir).isDirectory()) return classifyDemoDir([], false);
  const entries = readdirSync(dir);
  const state = classifyDemoDir(entries);
  // An earlier demo's sample repository is a git repository; a folder that only shares its name is not.
  if (state.kind === 'earlier-demo' && !existsSync(join(dir, 'fastmath', '.git'))) return { kind: 'foreign', entries };
  return state;
}

/**
 * Makes `dir` the demo's directory, or refuses: the demo writes only into a directory it made
 * (marked with DEMO_MARKER), an empty one, or one an earlier demo made; `fresh` then removes the
 * demo's own entries (DEMO_ENTRIES) and nothing else. Returns what it removed.
 */
export function prepareDemoDir(dir: string, fresh: boolean): string[] {
  const state = inspect(dir);
  if (state.kind === 'not-a-directory') {
    throw new ConfigError(`--dir: ${dir} is a file, not a directory`, {
      reason: 'invalid-flags',
      fix: 'pass --dir a new or empty directory (default ./perfmine-demo)',
    });
  }
  if (state.kind === 'foreign') {
    const shown = state.entries.slice(0, 5).join(', ') + (state.entries.length > 5 ? `, ... (${state.entries.length} entries)` : '');
    throw new ConfigError(
      `--dir: ${dir} holds files the demo did not create (${shown}); the demo writes only into a new or empty directory, or one it made`,
      {
        reason: 'not-a-demo-directory',
        fix: 'pass --dir a new or empty directory (default ./perfmine-demo); nothing was changed',
      },
    );
  }
  const removed: string[] = [];
  if (fresh && (state.kind === 'demo' || state.kind === 'earlier-demo')) {
    for (const entry of DEMO_ENTRIES) {
      const path = join(dir, entry);
      if (!existsSync(path)) continue;
      rmSync(path, { recursive: true, force: true });
      removed.push(entry);
    }
  }
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, DEMO_MARKER),
    'This directory was made by `perfmine demo`; `perfmine demo --fresh` removes what the demo put here.\n',
  );
  return removed;
}
