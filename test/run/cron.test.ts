import { describe, expect, it } from 'vitest';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { collect, cleanEnv, REPO_ROOT, tempDir, waitForLine } from '../helpers/index.js';

const CRON = join(REPO_ROOT, 'scripts/perfmine-cron.sh');

function runCron(workdir: string, args: string[] = []) {
  return collect(spawn('bash', [CRON, ...args], { cwd: workdir, env: cleanEnv({ PERFMINE_WORKDIR: workdir }) }));
}

describe('scripts/perfmine-cron.sh', () => {
  it('runs perfmine with JSON logs into a monthly log file', async () => {
    const dir = tempDir();
    // A window with no stages' work to do: a git source over a clone with one empty commit is enough to show the plumbing.
    const clone = tempDir();
    const git = (...args: string[]) =>
      execFileSync('git', ['-C', clone, '-c', 'user.name=t', '-c', 'user.email=t@example.invalid', ...args]);
    git('init', '-q', '-b', 'main');
    git('commit', '-q', '--allow-empty', '-m', 'init');
    const result = await runCron(dir, [
      '--month',
      '2025-04',
      '--source',
      `git:${clone}`,
      '--repo',
      'acme/empty',
      '--until-stage',
      'discover',
      '--llm',
      'none',
    ]);
    expect(result.stderr).toMatch(/perfmine-cron: run finished with exit \d+/);
    const logs = readdirSync(join(dir, 'logs'));
    expect(logs).toHaveLength(1);
    expect(logs[0]).toMatch(/^perfmine-\d{4}-\d{2}\.jsonl$/);
    const lines = readFileSync(join(dir, 'logs', logs[0]!), 'utf8')
      .trim()
      .split('\n');
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines.filter((l) => l.startsWith('{') && l.endsWith('}'))) expect(() => JSON.parse(line)).not.toThrow();
    expect(existsSync(join(dir, 'perfmine.db'))).toBe(true);
  });

  it('refuses to start while another run holds the lock', async () => {
    const dir = tempDir();
    const holder = spawn('flock', ['--nonblock', join(dir, 'perfmine.db.lock'), '-c', 'echo locked; read line'], { cwd: dir });
    await waitForLine(holder.stdout, /^locked$/);
    const second = await runCron(dir, ['--month', '2025-04']);
    expect(second.code).toBe(75);
    expect(second.stderr).toMatch(/another run holds perfmine\.db\.lock; not starting/);
    holder.stdin.end('\n');
    await new Promise((r) => holder.on('close', r));
  });
});
