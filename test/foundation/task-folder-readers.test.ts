import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/index.js';

/**
 * The layout as the code draws it (issue 38): replay, score and publish live in tasks/, not in
 * stages/, and the CLI and the report reach them there; the task folder's JSON files are parsed
 * in one place (tasks/folder/read.ts), counted over every source file, with the writers named.
 */

const SOURCES = execFileSync('git', ['ls-files', '--', 'pipeline/*.ts', 'stages/*.ts', 'tasks/*.ts', 'cache/*.ts'], {
  cwd: REPO_ROOT,
  encoding: 'utf8',
})
  .split('\n')
  .filter(Boolean);

const text = (file: string) => readFileSync(join(REPO_ROOT, file), 'utf8');

/** Every relative import of a file, resolved to a path from the repository root. */
function importsOf(file: string): string[] {
  return [...text(file).matchAll(/(?:from|import\()\s*'(\.{1,2}\/[^']+)'/g)].map((m) =>
    normalize(join(dirname(file), m[1]!)).replace(/\.js$/, '.ts'),
  );
}

/** A lookup of one of the folder's JSON files by name (`files['metadata.json']`, `text('workloads.json')`). */
const FOLDER_JSON_LOOKUP = /(?:files\[|text\(|join\([^)]*)['`](?:metadata\.json|workloads\.json|perfmine\/bench\/task\.json)['`]/;

/** A zod schema of the folder's JSON (metadata.json's environment, workloads.json's verdicts, task.json's asv config). */
const FOLDER_SCHEMA = /(?:perfmine_verdict|asv_config|environment): z\./;

describe('the layout, drawn from the code', () => {
  it('replay, score and publish are under tasks/, and the CLI and the report import them from there, never from stages/', () => {
    expect(SOURCES.filter((f) => /^stages\/[^/]+\/(replay|score|publish)\//.test(f))).toEqual([]);
    for (const dir of ['tasks/replay/', 'tasks/score/', 'tasks/publish/', 'tasks/folder/'])
      expect(
        SOURCES.some((f) => f.startsWith(dir)),
        dir,
      ).toBe(true);
    const users = SOURCES.filter((f) => /^pipeline\/(cli|report)\//.test(f));
    const edges = users.flatMap((f) => importsOf(f).map((t) => [f, t] as const));
    for (const command of ['replay', 'score', 'publish'])
      expect(
        edges.some(([f, t]) => f === `pipeline/cli/commands/${command}.ts` && t.startsWith(`tasks/${command}/`)),
        command,
      ).toBe(true);
    expect(edges.filter(([, t]) => /^stages\/[^/]+\/(replay|score|publish)\//.test(t))).toEqual([]);
  });

  it('one reader parses the task folder (tasks/folder): one set of schemas, one parser; the writer that adds to it is named', () => {
    expect(SOURCES.filter((f) => FOLDER_SCHEMA.test(text(f)))).toEqual(['tasks/folder/schema.ts']);
    const parsers = SOURCES.filter(
      (f) => /JSON\.parse\(/.test(text(f)) && (FOLDER_JSON_LOOKUP.test(text(f)) || f.startsWith('tasks/folder/')),
    );
    // with-images.ts adds `images` to the metadata emit wrote, in a folder publish has read with the reader first
    expect(parsers.sort()).toEqual(['tasks/folder/read.ts', 'tasks/publish/images/with-images.ts']);
  });
});
