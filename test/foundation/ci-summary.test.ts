import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../synthesize/harness.js';

/**
 * CI's summary (.ci/test-summary) of a real vitest run that reports with test/helpers/failures-reporter.ts:
 * a file whose top-level hook fails (its tests skipped, as a suite's setup failing in CI showed
 * them) and a file with a failed assertion, each named with why, from the lines the reporter printed
 * when the file ended, not from vitest's report at the end of the run (a run CI stops never
 * prints that).
 */
const ROOT = resolve(import.meta.dirname, '../..');
const dir = tempDir('ci-summary');

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('.ci/test-summary with the immediate-failures reporter', () => {
  it('names each failed file with the error of its hook or its test', () => {
    mkdirSync(join(dir, 'test'), { recursive: true });
    writeFileSync(
      join(dir, 'test', 'hook.test.ts'),
      "import { beforeAll, it } from 'vitest';\nbeforeAll(() => { throw new Error('setup could not start'); });\nit('never runs', () => {});\n",
    );
    writeFileSync(
      join(dir, 'test', 'assert.test.ts'),
      "import { expect, it } from 'vitest';\nit('adds', () => { expect(1 + 1).toBe(3); });\nit('passes', () => {});\n",
    );
    writeFileSync(join(dir, 'test', 'fine.test.ts'), "import { it } from 'vitest';\nit('passes', () => {});\n");
    writeFileSync(
      join(dir, 'vitest.config.ts'),
      `import ImmediateFailures from ${JSON.stringify(join(ROOT, 'test/helpers/failures-reporter.ts'))};\n` +
        "export default { test: { include: ['test/*.test.ts'], reporters: ['default', new ImmediateFailures()] } };\n",
    );
    const run = spawnSync(process.execPath, [join(ROOT, 'node_modules/vitest/vitest.mjs'), 'run', '--root', dir], {
      cwd: dir,
      encoding: 'utf8',
      env: { ...process.env, CI: '1', NO_COLOR: '1' },
    });
    expect(run.status).toBe(1);
    // the report at the end is cut off, as a run stopped at its time limit never prints it
    const log = run.stdout.split(/\n.*Failed (Suites|Tests) \d+/)[0]!;
    writeFileSync(join(dir, 'test.log'), log);
    const summary = execFileSync('bash', [join(ROOT, '.ci/test-summary'), join(dir, 'test.log'), '5'], { encoding: 'utf8' });
    expect(summary).toContain('== test files finished: 3;');
    expect(summary).toMatch(/!! failed test\/hook\.test\.ts \(file\): setup could not start \(.*hook\.test\.ts:2:/);
    expect(summary).toMatch(/!! failed test\/assert\.test\.ts > adds: expected 2 to be 3/);
    expect(summary).not.toContain('test/fine.test.ts >');
    expect(summary).not.toContain('passes:');
  });
});
