import { spawnSync } from 'node:child_process';
import { chmodSync, readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The compiled CLI that tests and benchmarks run (what `npm ci` installs): `npm run build` writes
 * it to dist/. `ensureBuilt()` compiles again when a source is newer than its compiled file (or
 * has none), so `npx vitest run <file>` after an edit never runs a stale build. Vitest runs it
 * once before any test file (globalSetup in vitest.config.ts).
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SOURCES = ['pipeline', 'stages', 'cache'];

export const BUILT_BIN = join(ROOT, 'dist', 'pipeline', 'cli', 'entry.js');

/** Sources whose compiled file is missing or older than they are. */
export function staleSources(): string[] {
  const stale: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) {
        const built = join(ROOT, 'dist', relative(ROOT, path)).replace(/\.ts$/, '.js');
        const builtAt = statSync(built, { throwIfNoEntry: false })?.mtimeMs;
        if (builtAt === undefined || builtAt < statSync(path).mtimeMs) stale.push(relative(ROOT, path));
      }
    }
  };
  for (const dir of SOURCES) walk(join(ROOT, dir));
  return stale;
}

export function ensureBuilt(): void {
  const stale = staleSources();
  if (stale.length === 0) {
    chmodSync(BUILT_BIN, 0o755); // as `npm run build` leaves it (a bare `tsc -p` does not)
    return;
  }
  process.stderr.write(
    `[build] ${stale.length} source(s) newer than dist/ (${stale.slice(0, 3).join(', ')}${stale.length > 3 ? ', ...' : ''}): compiling\n`,
  );
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const r = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: ROOT, stdio: 'inherit' });
  if (r.status !== 0) throw new Error(`tsc -p tsconfig.build.json failed (exit ${r.status ?? r.signal})`);
  chmodSync(BUILT_BIN, 0o755);
}

export default function setup(): void {
  ensureBuilt();
}
