import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { createSampleRepo } from '../../pipeline/demo/sample-repo.js';
import { runCli, tempDir } from '../helpers/index.js';

// Several CLI processes per test on a shared 2-core machine: room to finish, not a speed claim.
vi.setConfig({ testTimeout: 300_000, hookTimeout: 300_000 });

/**
 * Issue 13: after a run stopped at synthesize (here: no Docker engine answers), `status` showed
 * synthesize "pending 0" with the candidates waiting, and the report did not say why nothing
 * passed synthesize. Both now say how many wait, where the run stopped, why, and the fix.
 */
const MONTH = '2025-04';
const NO_ENGINE = { DOCKER_HOST: 'unix:///nonexistent/perfmine-test-docker.sock' };
let dir: string;
let db: string;
let run: Awaited<ReturnType<typeof runCli>>;

beforeAll(async () => {
  dir = tempDir();
  db = join(dir, 'perfmine.db');
  const sample = createSampleRepo(join(dir, 'fastmath'), MONTH);
  run = await runCli(['--db', db, 'run', '--month', MONTH, '--source', `git:${sample.path}`, '--repo', 'demo/fastmath', '--llm', 'none'], {
    cwd: dir,
    env: NO_ENGINE,
  });
});

describe('a run that stopped before the end', () => {
  it('exits 2 at synthesize, naming the engine', () => {
    expect(run.code, run.stderr).toBe(2);
    expect(run.stdout).toMatch(/stopped at synthesize/);
  });

  it('status: the candidates wait for synthesize, and the last run stopped there with its fix', async () => {
    const json = await runCli(['--db', db, '--json', 'status', '--month', MONTH]);
    const parsed = JSON.parse(json.stdout) as {
      stages: { stage: string; done: number; pending: number; waiting: number }[];
      lastStop: { stage: string; reason: string; fix: string | null } | null;
    };
    const classify = parsed.stages.find((s) => s.stage === 'classify')!;
    const synthesize = parsed.stages.find((s) => s.stage === 'synthesize')!;
    expect(classify.done).toBeGreaterThan(0);
    expect(synthesize).toMatchObject({ done: 0, pending: 0, waiting: classify.done });
    expect(parsed.lastStop).toMatchObject({ stage: 'synthesize', reason: 'docker-unreachable', fix: expect.any(String) });

    const text = await runCli(['--db', db, 'status', '--month', MONTH]);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(
      `waiting: ${classify.done} done by classify, not planned by synthesize yet (the last run stopped here, see below)`,
    );
    expect(text.stdout).toMatch(
      /the last run of 2025-04 \(#1\) stopped at synthesize \(docker-unreachable\); the stages after it did not run:/,
    );
    expect(text.stdout).toMatch(/^ {2}fix: .+/m);
  });

  it('the report page says why nothing passed synthesize', async () => {
    const page = join(dir, 'report.html');
    const result = await runCli(['--db', db, 'report', '--month', MONTH, '--out', page]);
    expect(result.code, result.stderr).toBe(0);
    const html = readFileSync(page, 'utf8');
    expect(html).toMatch(/<div id="stopped" class="stopped" data-stage="synthesize" data-reason="docker-unreachable">/);
    expect(html).toMatch(
      /The latest run of 2025-04 \(#1\) stopped at synthesize \(docker-unreachable\)<\/b>: no item went through synthesize or the stages after it/,
    );
    expect(html).toMatch(/What to do: /);
    expect(html).toMatch(/<tr data-stage="synthesize">.*<td class="num">[1-9]\d*<\/td><\/tr>/);
  });
});
