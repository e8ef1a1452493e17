#!/usr/bin/env node
// Builds the shipped CLI: pipeline/cli/entry.ts bundled by esbuild into dist/pipeline/cli/entry.js,
// with one chunk per lazily imported command (code splitting), so that `perfmine --help` and
// `perfmine status` load a handful of files instead of some four hundred modules (see
// `npm run bench -- startup`). Type checking is `tsc --noEmit` (`npm run typecheck`, `npm test`).
//
// Left outside the bundle and loaded from node_modules: better-sqlite3 (a native addon) and the
// CommonJS clients loaded on first use through createRequire (dockerode, pino, BigQuery, tar-stream,
// the tokenizer's rank tables). The LLM adapter (with openai) and Octokit are bundled into chunks
// that are imported on the first request, not at start-up. Files shipped beside the code (prompts/, cache/migrations/, the Python
// helpers) are found from the package root (pipeline/package-root.ts), never from a module's path.
import { rmSync, chmodSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const OUT_DIR = join(ROOT, 'dist', 'pipeline', 'cli');

/**
 * zod registers every locale's messages through one barrel (`zod/v4/locales/index.js`, 60-odd
 * modules); perfmine only uses English, so the bundle gets a barrel that exports English alone.
 */
const zodEnglishOnly = {
  name: 'zod-english-only',
  setup(b) {
    b.onLoad({ filter: /zod[\\/]v4[\\/]locales[\\/]index\.js$/ }, (args) => ({
      contents: 'export { default as en } from "./en.js";\n',
      loader: 'js',
      resolveDir: dirname(args.path),
    }));
  },
};

rmSync(join(ROOT, 'dist'), { recursive: true, force: true });
await build({
  absWorkingDir: ROOT,
  entryPoints: ['pipeline/cli/entry.ts'],
  outdir: OUT_DIR,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  sourcemap: 'linked',
  chunkNames: 'chunks/[name]-[hash]',
  external: ['better-sqlite3'],
  // bundled CommonJS code calls require() for Node's built-ins: give the ES module one
  banner: {
    js: "import { createRequire as __perfmineCreateRequire } from 'node:module';\nconst require = __perfmineCreateRequire(import.meta.url);",
  },
  plugins: [zodEnglishOnly],
  logLevel: 'warning',
});
chmodSync(join(OUT_DIR, 'entry.js'), 0o755);
