import { describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '../../pipeline/config/load.js';
import { ConfigError } from '../../pipeline/errors.js';
import { runCli, tempDir } from '../helpers/index.js';

function configFile(content: unknown): { dir: string; path: string } {
  const dir = tempDir();
  const path = join(dir, 'perfmine.config.json');
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
  return { dir, path };
}

describe('config layers: defaults < file < environment < flags', () => {
  it('uses defaults with nothing given', () => {
    const { config, file } = loadConfig({ env: {}, cwd: tempDir() });
    expect(file).toBeNull();
    expect(config).toMatchObject({
      db: 'perfmine.db',
      out: 'out',
      source: 'github',
      llm: { mode: 'openai', concurrency: 4 },
      docker: { baseImage: 'perfmine/base:bookworm' },
    });
  });

  it('lets each layer override the one below', () => {
    const { path } = configFile({ docker: { baseImage: 'from-file', cpus: 1 }, llm: { model: 'file-model' } });
    const fileOnly = loadConfig({ configPath: path, env: {} }).config;
    expect(fileOnly.docker).toMatchObject({ baseImage: 'from-file', cpus: 1, memoryMb: 4096 });
    const withEnv = loadConfig({ configPath: path, env: { PERFMINE_BASE_IMAGE: 'from-env', PERFMINE_MODEL: 'env-model' } }).config;
    expect(withEnv.docker.baseImage).toBe('from-env');
    expect(withEnv.llm.model).toBe('env-model');
    const withFlags = loadConfig({
      configPath: path,
      env: { PERFMINE_BASE_IMAGE: 'from-env' },
      flags: { docker: { baseImage: 'from-flag' } },
    }).config;
    expect(withFlags.docker).toMatchObject({ baseImage: 'from-flag', cpus: 1 });
  });

  it('makes only the adaptive looks before the last round, and refuses looks out of order', () => {
    const short = loadConfig({ configPath: configFile({ validate: { harness: { rounds: 8 } } }).path, env: {} }).config;
    expect(short.validate.harness.adaptive.looks).toEqual([6]);
    const none = loadConfig({ configPath: configFile({ validate: { harness: { rounds: 5 } } }).path, env: {} }).config;
    expect(none.validate.harness.adaptive.looks).toEqual([]);
    expect(loadConfig({ env: {}, cwd: tempDir() }).config.validate.harness.adaptive.looks).toEqual([6, 10, 15]);
    expect(() => loadConfig({ configPath: configFile({ validate: { harness: { adaptive: { looks: [10, 6] } } } }).path, env: {} })).toThrow(
      /validate\.harness\.adaptive\.looks: adaptive\.looks must be ascending/,
    );
  });

  it('reads ./perfmine.config.json when present and accepts comments (JSON5)', () => {
    const { dir } = configFile('{\n  // a comment\n  "out": "datasets",\n}\n');
    expect(loadConfig({ env: {}, cwd: dir }).config.out).toBe('datasets');
  });

  it('returns every problem as path: message, with where it came from', () => {
    const { path } = configFile({ llm: { concurrency: 'four', modle: 'x' }, typo: 1 });
    let error: ConfigError | undefined;
    try {
      loadConfig({ configPath: path, env: { PERFMINE_DOCKER_CONCURRENCY: 'lots' } });
    } catch (e) {
      error = e as ConfigError;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect(error!.issues).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^llm\.concurrency: .*number.* \(from .*perfmine\.config\.json\)$/),
        expect.stringMatching(/^llm\.modle: unknown key/),
        expect.stringMatching(/^typo: unknown key/),
        expect.stringMatching(/^docker\.concurrency: .* \(from environment PERFMINE_DOCKER_CONCURRENCY\)$/),
      ]),
    );
  });
});

describe('the CLI on configuration errors', () => {
  it('prints path: message and exits 2 for an unknown key, a wrong type, and a bad month', async () => {
    const { dir, path } = configFile({ dockr: {}, github: { concurrency: -1 } });
    const bad = await runCli(['status', '--config', path], { cwd: dir });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^dockr: unknown key/m);
    expect(bad.stderr).toMatch(/^github\.concurrency: .*/m);

    const clean = tempDir();
    const month = await runCli(['run', '--month', '2025-13', '--db', join(clean, 'x.db')], { cwd: clean });
    expect(month.code).toBe(2);
    expect(month.stderr).toMatch(/^--month: expected YYYY-MM, got "2025-13"$/m);

    const range = await runCli(
      ['stage', 'collect', '--since', '2025-05-01', '--until', '2025-04-01', '--repo', 'nope', '--db', join(clean, 'x.db')],
      { cwd: clean },
    );
    expect(range.code).toBe(2);
    expect(range.stderr).toMatch(/^--until: must be after --since/m);
    expect(range.stderr).toMatch(/^--repo: expected owner\/name, got "nope"$/m);

    const flag = await runCli(['status', '--log-level', 'loud'], { cwd: clean });
    expect(flag.code).toBe(2);
    expect(flag.stderr).toMatch(/--log-level/);
  });

  it('reports an unknown stage name as an error and an unimplemented one as unknown, never faked', async () => {
    const dir = tempDir();
    const unknown = await runCli(['stage', 'optimize', '--db', join(dir, 'x.db')], { cwd: dir });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/unknown stage "optimize"/);
  });
});
