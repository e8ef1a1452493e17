import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { migrations, openStore } from '../../cache/store.js';
import { PACKAGE_ROOT, perfmineVersion } from '../../pipeline/package-root.js';
import { PROMPTS_DIR } from '../../pipeline/prompts.js';
import { registry } from '../../pipeline/registry.js';
import { STAGE_NAMES } from '../../pipeline/stage.js';
import { HARNESS_SCRIPT, SNAPSHOT_SCRIPT } from '../../pipeline/services/environments/harness-files.js';
import { BIN, REPO_ROOT, runCli, tempDir } from '../helpers/index.js';

describe('the package', () => {
  const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string; bin: { perfmine: string } };

  it('finds its files from the package root, not from a module', () => {
    expect(join(PACKAGE_ROOT, '/')).toBe(REPO_ROOT);
    expect(existsSync(join(PROMPTS_DIR, 'perf-intent.md'))).toBe(true);
    expect(migrations().length).toBeGreaterThan(0);
    expect(existsSync(HARNESS_SCRIPT)).toBe(true);
    expect(existsSync(SNAPSHOT_SCRIPT)).toBe(true);
    expect(perfmineVersion()).toBe(pkg.version);
  });

  it('runs the compiled CLI its bin names, which prints the version', async () => {
    expect(BIN).toBe(join(REPO_ROOT, pkg.bin.perfmine));
    const r = await runCli(['--version']);
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe(pkg.version);
  });

  it('the compiled CLI reads the migrations from the package (status checks a store against them)', async () => {
    const db = join(tempDir(), 'x.db');
    openStore(db).close();
    const r = await runCli(['status', '--db', db, '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ exists: true });
  });

  it('implements every stage of the design, each under its own name', () => {
    expect(Object.keys(registry)).toEqual([...STAGE_NAMES]);
    for (const name of STAGE_NAMES) expect(registry[name].name).toBe(name);
  });
});
