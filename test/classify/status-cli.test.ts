import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../cache/store.js';
import { reply, startLlmServer, type FakeLlmServer } from '../fakes/llm-server.js';
import { BIN } from '../helpers/cli.js';
import { file, makePullRequest, storeCollected } from '../helpers/pull-request.js';

const run = promisify(execFile);
const OBSERVATION = 'Summing 10 million values with fastlib.total takes 4.2 s because of a Python loop.';

/**
 * End to end through the real CLI (`perfmine stage filter|classify`, `perfmine status`) in child
 * processes, with the LLM stand-in listening on 127.0.0.1 in this process.
 */
describe('perfmine status after filter and classify', () => {
  let dir: string;
  let server: FakeLlmServer;
  const dbPath = () => join(dir, 'perfmine.db');

  async function perfmine(args: string[], env: Record<string, string> = {}) {
    try {
      const { stdout, stderr } = await run(process.execPath, [BIN, '--db', dbPath(), ...args], {
        cwd: dir,
        env: { PATH: process.env.PATH ?? '', HOME: dir, PERFMINE_LOG_LEVEL: 'warn', PERFMINE_LOG_FORMAT: 'json', ...env },
        timeout: 60_000,
      });
      return { code: 0, stdout, stderr };
    } catch (error) {
      const e = error as { code: number; stdout: string; stderr: string };
      return { code: e.code, stdout: e.stdout, stderr: e.stderr };
    }
  }

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'perfmine-status-'));
    const db = openStore(dbPath());
    const body = `${OBSERVATION}\n\nThis PR uses np.add.reduce instead.`;
    storeCollected(db, makePullRequest({ number: 1, body }));
    storeCollected(db, makePullRequest({ number: 2, body, title: 'PERF: faster total [not-perf]' }));
    storeCollected(db, makePullRequest({ number: 3, body, title: 'PERF: faster total [invented]' }));
    storeCollected(db, makePullRequest({ number: 4, body, title: 'PERF: faster total [refuse]' }));
    storeCollected(db, makePullRequest({ number: 5, title: 'DOC: fix typo in README', body: '' }));
    storeCollected(db, makePullRequest({ number: 6, asvConfig: null }));
    storeCollected(db, makePullRequest({ number: 7, files: [file('fastlib/tests/test_core.py')] }));
    db.close();

    server = await startLlmServer({
      script: (r) => {
        const tag = /\[([a-z-]+)\]/.exec(r.text)?.[1];
        if (r.schemaName === 'perf_intent') {
          if (tag === 'refuse') return reply.refusal();
          return reply.json(
            tag === 'not-perf' ? { reasoning: 'Not about speed.', label: 'NO' } : { reasoning: 'Removes a Python loop.', label: 'YES' },
          );
        }
        if (r.schemaName === 'problem_extract') {
          const initial = tag === 'invented' ? ['Nobody knows why the code is slow, said the release notes of 1999.'] : [OBSERVATION];
          return reply.json({ initial_observations: initial, triage_attempts: [], solution_overview: [], solution_observations: [] });
        }
        return reply.json({ reasoning: 'Loop to NumPy.', category: 'use_lower_level_system', difficulty: 'easy' });
      },
    });
  }, 60_000);

  afterAll(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('shows per stage how many passed and how many were dropped (and failed) for each reason', async () => {
    const filter = await perfmine(['stage', 'filter', '--month', '2025-04']);
    expect(filter.code).toBe(0);

    const llmEnv = { OPENAI_API_KEY: 'sk-e2e-secret-key', OPENAI_BASE_URL: server.url, PERFMINE_MODEL: 'primary-model' };
    const classify = await perfmine(['stage', 'classify', '--month', '2025-04'], llmEnv);
    expect(classify.code).toBe(1); // an item failed (recorded); the stage did not crash
    expect(classify.stderr).not.toContain('sk-e2e-secret-key');
    expect(server.requests.every((r) => r.model === 'primary-model' && r.authorized)).toBe(true);

    const status = await perfmine(['status']);
    expect(status.code).toBe(0);
    const lines = status.stdout.split('\n');
    const row = (stage: string) =>
      lines
        .find((l) => l.startsWith(stage))!
        .trim()
        .split(/\s+/);
    const after = (stage: string, kind: string) =>
      lines[lines.findIndex((l) => l.startsWith(stage)) + 1 + (kind === 'failed' ? 1 : 0)]!.trim();

    // stage  done  dropped  failed  pending
    expect(row('filter')).toEqual(['filter', '4', '3', '0', '0']);
    expect(after('filter', 'dropped')).toBe('dropped: negative-message 1, no-asv-config 1, no-core-files 1');
    expect(row('classify')).toEqual(['classify', '1', '2', '1', '0']);
    expect(after('classify', 'dropped')).toBe('dropped: no-initial-observations 1, not-performance 1');
    expect(after('classify', 'failed')).toBe('failed:  llm-refused 1');

    const items = await perfmine(['status', '--stage', 'classify', '--items', '--json']);
    const parsed = JSON.parse(items.stdout) as { items: { key: string; status: string; reason: string | null }[] };
    expect(parsed.items.map((i) => [i.key, i.status, i.reason])).toEqual([
      ['acme/fastlib#1', 'done', null],
      ['acme/fastlib#2', 'dropped', 'not-performance'],
      ['acme/fastlib#3', 'dropped', 'no-initial-observations'],
      ['acme/fastlib#4', 'failed', 'llm-refused'],
    ]);
  }, 120_000);

  it('without OPENAI_API_KEY classify exits 2 naming it and --llm none; with --llm none it runs without any LLM', async () => {
    const asked = server.count();
    const noKey = await perfmine(['stage', 'classify', '--month', '2025-04', '--force']);
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toContain('OPENAI_API_KEY');
    expect(noKey.stderr).toContain('--llm none');

    const none = await perfmine(['--llm', 'none', 'stage', 'classify', '--month', '2025-04', '--force']);
    expect(none.code).toBe(0);
    expect(none.stdout).toMatch(/classify\s+4\s+0\s+4\s+4\s+0\s+0/); // in, reused, ran, done, dropped, failed
    expect(server.count()).toBe(asked);
  }, 120_000);
});
