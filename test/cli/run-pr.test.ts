import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createSampleRepo } from '../../pipeline/demo/sample-repo.js';
import { runCli, tempDir } from '../helpers/index.js';

describe('perfmine run --pr', () => {
  it('runs every stage for the pull requests named only (repeatable), as perfmine stage --pr does', async () => {
    const dir = tempDir();
    const sample = createSampleRepo(join(dir, 'fastmath'), '2025-04');
    const db = join(dir, 'perfmine.db');
    const scope = ['--month', '2025-04', '--source', `git:${sample.path}`, '--repo', 'demo/fastmath'];
    const run = await runCli(['--db', db, '--llm', 'none', 'run', ...scope, '--pr', '101', '--pr', '106', '--until-stage', 'classify']);
    expect(run.code, run.stderr).toBe(0);
    const items = async (stage: string) =>
      (
        JSON.parse((await runCli(['--db', db, '--json', 'status', '--month', '2025-04', '--stage', stage, '--items'])).stdout) as {
          items: { key: string; status: string; reason: string | null }[];
        }
      ).items.map((i) => [i.key, i.status, i.reason]);
    expect(await items('collect')).toEqual([
      ['demo/fastmath#101', 'done', null],
      ['demo/fastmath#106', 'done', null],
    ]);
    // the version bump is still dropped by filter; the speedup goes on to classify
    expect(await items('filter')).toEqual([
      ['demo/fastmath#101', 'done', null],
      ['demo/fastmath#106', 'dropped', 'negative-message'],
    ]);
    expect(await items('classify')).toEqual([['demo/fastmath#101', 'done', null]]);
    const bad = await runCli(['--db', db, 'run', ...scope, '--pr', 'x1']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--pr: expected a pull request number, got "x1"');
  }, 120_000);
});
