import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { openStore } from '../../cache/store.js';
import { verdict } from '../../pipeline/cli/commands/doctor.js';
import { checkCredentials, checkDatabase, runDoctor, type Check } from '../../pipeline/doctor.js';
import { DockerService } from '../../pipeline/services/docker.js';
import { startLlmServer, type FakeLlmServer } from '../fakes/llm-server.js';
import { closedPort } from '../fakes/index-faults.js';
import { credentials, memoryLogger, testConfig } from '../helpers/context.js';
import { REPO_ROOT, runCli, tempDir } from '../helpers/index.js';

/** Doctor's checks against the real engine, by name. */
async function checksByName(config: Parameters<typeof runDoctor>[0]['config']): Promise<Record<string, Check>> {
  const checks = await runDoctor({
    config,
    credentials: credentials(),
    docker: new DockerService({ runLabel: 'test-doctor' }),
    log: memoryLogger().log,
    timeoutMs: 30_000,
  });
  return Object.fromEntries(checks.map((c) => [c.name, c]));
}

describe('perfmine doctor', () => {
  let llm: FakeLlmServer;
  beforeAll(async () => {
    llm = await startLlmServer({ models: ['primary-model', 'other'] });
  });
  afterAll(async () => llm.close());

  it('checks the engine, the base image, what the measurement engine needs in it, credentials, the LLM endpoint and the schema', async () => {
    const silent = `http://127.0.0.1:${await closedPort()}/simple/`;
    const config = testConfig({
      llm: { baseUrl: llm.url, model: 'primary-model', fallbackModel: 'missing-model' },
      db: join(tempDir(), 'p.db'),
      // an index that does not answer, on loopback (nothing here reaches out to PyPI)
      synthesize: { index: { upstream: silent } },
    });
    const by = await checksByName(config);
    expect(by['Docker engine']).toMatchObject({ status: 'ok', detail: expect.stringMatching(/^Docker \d+/) });
    expect(by['base image']).toMatchObject({ status: 'ok', detail: 'perfmine/base:bookworm' });
    // The default engine, perfmine's harness, needs only the image's Python.
    expect(by['Python for the harness in the base image']).toMatchObject({
      status: 'ok',
      detail: expect.stringMatching(/^python 3\.\d+\.\d+/),
    });
    expect(by['asv in the base image']).toBeUndefined();
    expect(by['GitHub token']).toMatchObject({ status: 'missing', fix: expect.stringMatching(/--source git:PATH works without it/) });
    expect(by['LLM key']).toMatchObject({ status: 'ok', detail: expect.stringMatching(/local server/) });
    expect(by['LLM endpoint']).toMatchObject({ status: 'warn', detail: expect.stringMatching(/does not list missing-model/) });
    expect(by['database schema']).toMatchObject({ status: 'ok', required: false });
    // the index the time machine fronts, when it does not answer: a warning (a build that installs nothing does not need it)
    expect(by['package index']).toMatchObject({
      status: 'warn',
      required: false,
      detail: `${silent} does not answer (ECONNREFUSED): builds that install dependencies will fail`,
    });
    expect(llm.requests.length).toBe(0); // listing models is a GET, not a completion
  });

  it("checks each repository's own base image and the Pythons it is said to offer", async () => {
    const config = testConfig({
      llm: { mode: 'none' },
      db: join(tempDir(), 'p.db'),
      synthesize: { index: { upstream: `http://127.0.0.1:${await closedPort()}/simple/` } },
      repositories: {
        'acme/present': { baseImage: 'perfmine/base:bookworm', pythonVersions: ['3.11'] },
        'acme/absent': { baseImage: 'perfmine/no-such-base:x' },
        'acme/other-python': { baseImage: 'perfmine/base:bookworm', pythonVersions: ['3.11', '3.99'] },
        'acme/default': { debianPackages: ['libgeos-dev'] },
      },
    });
    const by = await checksByName(config);
    expect(by['base image of acme/present']).toMatchObject({ status: 'ok', detail: 'perfmine/base:bookworm with python3.11' });
    expect(by['base image of acme/absent']).toMatchObject({
      status: 'missing',
      required: true,
      detail: expect.stringMatching(/^perfmine\/no-such-base:x \(repositories."acme\/absent".baseImage\) is not in the engine/),
      fix: expect.stringMatching(/scripts\/build-base-image\.sh perfmine\/no-such-base:x/),
    });
    expect(by['base image of acme/other-python']).toMatchObject({
      status: 'missing',
      detail: 'perfmine/base:bookworm has no python3.99 (repositories."acme/other-python".pythonVersions)',
    });
    // a repository on the default base image adds no check of its own
    expect(by['base image of acme/default']).toBeUndefined();
  });

  it('names the variable and what works without it', () => {
    const github = checkCredentials(testConfig({ source: 'github' }), credentials());
    expect(github.find((c) => c.name === 'GitHub token')).toMatchObject({ status: 'missing', required: true });
    const git = checkCredentials(testConfig({ source: 'git:/tmp/x', llm: { mode: 'none' } }), credentials());
    expect(git.map((c) => c.status)).toEqual(['skipped', 'skipped']);
    const remote = checkCredentials(testConfig({}), credentials());
    expect(remote.find((c) => c.name === 'LLM key')).toMatchObject({ status: 'missing', fix: expect.stringMatching(/--llm none/) });
    const rotated = checkCredentials(testConfig({}), credentials({ githubTokens: ['a', 'b'], openaiApiKey: 'k' }));
    expect(rotated.map((c) => c.detail)).toEqual(['2 tokens (GITHUB_TOKENS)', 'OPENAI_API_KEY is set']);
  });

  it('reads the schema of an existing database, and refuses a newer one', () => {
    const path = join(tempDir(), 'p.db');
    openStore(path).close();
    expect(checkDatabase(path)).toMatchObject({ status: 'ok', detail: expect.stringMatching(/up to date/) });
    const raw = new Database(path);
    raw.prepare("INSERT INTO schema_migrations VALUES (9999, 'future', 'x')").run();
    raw.close();
    expect(checkDatabase(path)).toMatchObject({ status: 'missing', fix: expect.stringMatching(/upgrade perfmine/) });
  });

  it('exits 1 with fixes when something required is missing: asv, with the asv engine (PyPI is out of reach here)', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'perfmine.config.json'), JSON.stringify({ validate: { engine: 'asv' } }));
    const result = await runCli(['doctor', '--db', join(dir, 'p.db'), '--llm', 'none'], {
      cwd: dir,
      env: { PERFMINE_INDEX_UPSTREAM: `dir:${join(dir, 'no-index')}` },
    });
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/^FAIL {2}asv in the base image/m);
    expect(result.stdout).toMatch(/fix: .*wheelhouse/);
    expect(result.stdout).toMatch(/^skip {2}LLM endpoint/m);
    // The fix names files and keys that exist (issue 13: it named scripts/Dockerfile.base and synthesize.asvWheelhouse).
    expect(result.stdout).toMatch(
      /fix: set validate\.engine to perfmine .*on a host with PyPI: docker build -f scripts\/base-pypi\.Dockerfile .*synthesize\.asv\.wheelhouse/,
    );
    expect(result.stdout).not.toMatch(/Dockerfile\.base|asvWheelhouse/);
    expect(existsSync(join(REPO_ROOT, 'scripts', 'base-pypi.Dockerfile'))).toBe(true);
    // The closing count is the count of the lines marked FAIL above it.
    const failing = result.stdout.split('\n').filter((l) => l.startsWith('FAIL')).length;
    const closing = result.stdout.trim().split('\n').at(-1)!;
    expect(closing).toMatch(new RegExp(`^${failing} required checks? failing \\(FAIL\\)`));
  });

  it('counts its closing line as the lines are marked, blocked checks apart', () => {
    const check = (status: Check['status'], required = true): Check => ({ name: status, status, detail: '', required });
    expect(verdict([check('ok'), check('skipped', false)])).toBe('everything the pipeline needs is in place');
    expect(
      verdict([check('missing'), check('skipped'), check('skipped'), check('missing'), check('missing'), check('skipped', false)]),
    ).toBe('3 required checks failing (FAIL); 2 required checks not made because of those (skip)');
    expect(verdict([check('warn')])).toBe('1 required check with a warning (warn)');
  });

  it("a --db it cannot use is a failing check with the store's fix, not a crash", () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'notes.db'), 'notes');
    expect(checkDatabase(join(dir, 'notes.db'))).toMatchObject({
      status: 'missing',
      detail: expect.stringMatching(/is not a SQLite database/),
      fix: expect.stringMatching(/pass --db/),
    });
    expect(checkDatabase(dir)).toMatchObject({ status: 'missing', detail: expect.stringMatching(/is a directory/) });
    writeFileSync(join(dir, 'empty.db'), '');
    expect(checkDatabase(join(dir, 'empty.db'))).toMatchObject({ status: 'ok', detail: expect.stringMatching(/empty file/) });
  });
});
