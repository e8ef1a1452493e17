import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * perfmine's package root: the nearest folder above this module that holds a package.json. The
 * same answer whether the sources run (pipeline/package-root.ts, under vitest or tsx) or the
 * build does (dist/pipeline/package-root.js), so files shipped beside the code (prompts/,
 * cache/migrations/, the Python helpers, scripts/) are found from here and never from a module's
 * own location.
 */
export const PACKAGE_ROOT: string = findPackageRoot(dirname(fileURLToPath(import.meta.url)));

/** A path inside the package: `packagePath('prompts', 'x.md')`. */
export function packagePath(...segments: readonly string[]): string {
  return join(PACKAGE_ROOT, ...segments);
}

let version: string | undefined;

/** This perfmine's version, from its package.json. */
export function perfmineVersion(): string {
  if (version !== undefined) return version;
  const pkg = JSON.parse(readFileSync(packagePath('package.json'), 'utf8')) as { version?: unknown };
  return (version = typeof pkg.version === 'string' ? pkg.version : 'unknown');
}

function findPackageRoot(start: string): string {
  for (let dir = start; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) throw new Error(`perfmine: no package.json above ${start}`);
  }
}
