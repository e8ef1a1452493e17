import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The built CLI that tests and benchmarks run (what `npm ci` installs): `npm run build` bundles it
 * into dist/ (scripts/build.mjs). `ensureBuilt()` builds again when a source is newer than the
 * bundle's entry (or there is none), so `npx vitest run <file>` after an edit never runs a stale
 * build. Vitest runs it once before any test file (globalSetup in vitest.config.ts).
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SOURCES = ['pipeline', 'stages', 'cache'];

export const BUILT_BIN = join(ROOT, 'dist', 'pipeline', 'cli', 'entry.js');

/** Sources newer than the built entry (all of them when there is no build). */
export function staleSources(): string[] {
  const builtAt = statSync(BUILT_BIN, { throwIfNoEntry: false })?.mtimeMs ?? -1;
  const stale: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.ts') && statSync(path).mtimeMs > builtAt) stale.push(relative(ROOT, path));
    }
  };
  for (const dir of SOURCES) walk(join(ROOT, dir));
  return stale;
}

export function ensureBuilt(): void {
  const stale = staleSources();
  if (stale.length === 0) return;
  process.stderr.write(
    `[build] ${stale.length} source(s) newer than dist/ (${stale.slice(0, 3).join(', ')}${stale.length > 3 ? ', ...' : ''}): building\n`,
  );
  const r = spawnSync(process.execPath, [join(ROOT, 'scripts', 'build.mjs')], { cwd: ROOT, stdio: 'inherit' });
  if (r.status !== 0) throw new Error(`scripts/build.mjs failed (exit ${r.status ?? r.signal})`);
}

export default function setup(): void {
  ensureBuilt();
}
