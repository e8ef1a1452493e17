import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BuildScripts } from '../../cache/build-scripts.js';
import { Ledger } from '../../cache/ledger.js';
import { openStore, type Db } from '../../cache/store.js';
import { runStage, type StageReport } from '../../pipeline/runner.js';
import { DockerService } from '../../pipeline/services/docker.js';
import { synthesizeStage } from '../../stages/synthesize/index.js';
import { envImageTag } from '../../pipeline/services/environments/image-names.js';
import { synthesizeOutputSchema } from '../../pipeline/concepts/records/synthesize-output.js';
import { rebuildEnvironment } from '../../stages/synthesize/rebuild.js';
import { ensureAsvFakeImage } from '../fakes/asv-image.js';
import { serveRulesOverHttp, type RulesServer } from '../fakes/rules-over-http.js';
import { buildPythonRepo, type PythonRepo } from '../fixtures/python-repo.js';
import { BIN } from '../helpers/cli.js';
import { ERA_RULES } from './era-agent.js';
import { gitScope, memoryLogger, seedCandidates, tempDir, testConfig, testContext, testLabel } from './harness.js';

const REPO = 'fixture/eras';
const label = testLabel('eras');
const docker = new DockerService({ runLabel: label });
const dir = tempDir('eras');
const dbPath = join(dir, 'perfmine.db');
// The build agent is the real OpenAI-compatible adapter and the real `openai` client, talking over
// HTTP to the loopback server, which answers by the era rules (what a model would write when shown
// a given failure).
let llm: RulesServer;
let config: ReturnType<typeof testConfig>;
const { log, lines } = memoryLogger('info');
let fixture: PythonRepo;
let db: Db;
let first: StageReport;

const cli = (...args: string[]) =>
  execFileSync(process.execPath, [BIN, '--db', dbPath, '--log-level', 'silent', ...args], {
    encoding: 'utf8',
    env: { ...process.env, PERFMINE_LOG_FORMAT: 'json' },
  });

/** The commit each agent call was made for (its `commit` input). */
const llmCallsFor = (sha: string) => llm.calls.filter((c) => c.inputs.commit === sha);

describe('synthesize over a history with three build eras (real Docker engine)', () => {
  beforeAll(async () => {
    llm = await serveRulesOverHttp(ERA_RULES);
    config = testConfig(dbPath, {
      llm: { mode: 'openai', baseUrl: llm.url, model: 'scripted-primary', fallbackModel: 'scripted-fallback', timeoutMs: 60_000 },
    });
    await ensureAsvFakeImage();
    // 8 commits: pure setup.py x3, pyproject + C extension x2, src/ layout + build helper x3.
    // Commits 0..6 are the bases of pull requests 1..7 (PR n merges commit n).
    fixture = buildPythonRepo({
      dir: join(dir, 'repo'),
      eras: [
        { era: 'setup-py', commits: 3 },
        { era: 'pyproject-c', commits: 2 },
        { era: 'src-helper', commits: 3 },
      ],
    });
    db = openStore(dbPath);
    seedCandidates(db, REPO, fixture.commits, [0, 1, 2, 3, 4, 5, 6]);
    const ctx = testContext({ db, config, docker, log });
    await synthesizeStage.preflight!(ctx, gitScope(fixture.path));
    first = await runStage(ctx, synthesizeStage, gitScope(fixture.path));
  }, 900_000);

  afterAll(async () => {
    await llm?.close();
    db?.close();
    await docker.removeLabelled(label);
    rmSync(dir, { recursive: true, force: true });
  }, 300_000);

  it('gives every commit a verified environment', async () => {
    if (first.done !== 7) console.log(lines.join(''));
    expect(first).toMatchObject({ planned: 7, ran: 7, done: 7, failed: {}, dropped: {} });
    const rows = new Ledger(db).list('synthesize');
    expect(rows.map((r) => r.status)).toEqual(Array(7).fill('done'));
    for (const row of rows) {
      const out = synthesizeOutputSchema.parse(row.output);
      expect(out.imageTag).toBe(envImageTag(REPO, out.sha));
      const image = await docker.inspectImage(out.imageTag);
      expect(image?.labels['org.perfmine.sha']).toBe(out.sha);
      expect(out.pythonVersion).toBe('3.11');
      expect(out.asvConfigPath).toBe('asv.conf.json');
      expect(out.importName).toBe('fixpkg');
    }
  });

  it('calls the agent only at the era boundaries; every other commit reuses a neighbour with zero LLM calls', () => {
    const store = new BuildScripts(db);
    const c = fixture.commits;
    const sources = (i: number) =>
      store.forCommit(REPO, c[i]!.sha).map((a) => `${a.source}:${a.outcome}${a.failureKind ? `:${a.failureKind}` : ''}`);
    expect(sources(0)).toEqual(['template:verified']);
    expect(sources(1)).toEqual(['neighbour:verified']);
    expect(sources(2)).toEqual(['neighbour:verified']);
    // Era 2 starts: the era-1 script (also the template, so not tried twice) misses the header.
    expect(sources(3)).toEqual(['neighbour:failed:missing-header', 'agent:verified']);
    expect(sources(4)).toEqual(['neighbour:verified']);
    // Era 3 starts: both earlier scripts miss the build helper; the agent needs two rounds.
    expect(sources(5)).toEqual([
      'neighbour:failed:missing-module',
      'neighbour:failed:missing-module',
      'agent:failed:missing-header',
      'agent:verified',
    ]);
    expect(sources(6)).toEqual(['neighbour:verified']);

    for (const i of [0, 1, 2, 4, 6]) {
      expect(llmCallsFor(c[i]!.sha)).toHaveLength(0);
      expect(store.forCommit(REPO, c[i]!.sha).every((a) => a.llmCalls === 0 && a.promptTokens === 0)).toBe(true);
    }
    expect(llmCallsFor(c[3]!.sha).map((x) => x.rule)).toEqual(['missing-header']);
    expect(llmCallsFor(c[5]!.sha).map((x) => x.rule)).toEqual(['missing-build-helper', 'missing-header-after-helper']);
    expect(llm.calls).toHaveLength(3);
    expect(llm.calls.every((x) => x.model === 'scripted-primary')).toBe(true);
    // Over HTTP: commit 3 = 2 tool turns + the answer; commit 5 = 3 tool turns + an answer, then one answer.
    expect(llm.server.count()).toBe(8);
    expect(llm.server.requests.every((r) => r.hasTools && r.hasResponseFormat && r.schemaName !== null)).toBe(true);
    // Agent attempts carry their tokens; the neighbour of commit 4 is commit 3's agent script.
    const agentAttempts = store.list({ repo: REPO }).filter((a) => a.source === 'agent');
    expect(agentAttempts.every((a) => a.llmCalls === 1 && a.promptTokens > 0 && a.model === 'scripted-primary')).toBe(true);
    expect(store.forCommit(REPO, c[4]!.sha)[0]!.sourceDetail).toMatch(new RegExp(`^${c[3]!.sha.slice(0, 12)} \\(1\\.0 days away\\)`));
  });

  it('shows the agent the failure stage, the log tails, the last script and the repository facts', () => {
    const c3 = llmCallsFor(fixture.commits[3]!.sha)[0]!;
    expect(c3.inputs.failure_stage).toBe('build');
    expect(c3.inputs.failure_summary).toMatch(/^build\/missing-header: .*_tables\.h: No such file or directory/);
    expect(c3.inputs.last_script).toContain('pip install --no-build-isolation --no-deps -e .');
    expect(c3.inputs.repo_facts).toMatch(/build backend: setuptools\.build_meta/);
    expect(c3.inputs.repo_facts).toMatch(/compiled-extension markers: .*setup\.py uses Extension\(/);
    expect(c3.inputs.attempt_history).toMatch(/1\. neighbour .*build\/missing-header/);
    expect(c3.inputs.stderr_tail!.length + c3.inputs.stdout_tail!.length).toBeLessThanOrEqual(2 * 8000 + 200);
    // The tools read the tree at the commit.
    expect(c3.toolResults[0]!.result.split('\n')).toEqual(['tools/gen_tables.py']);
    expect(c3.toolResults[1]!.result).toContain('_tables.h');

    const [helper, header] = llmCallsFor(fixture.commits[5]!.sha);
    expect(helper!.inputs.failure_summary).toContain("No module named 'fixture_buildhelper'");
    expect(helper!.toolResults.map((t) => t.name)).toEqual(['list_tree', 'probe_repo', 'try_import']);
    expect(helper!.toolResults[0]!.result).toContain('src/fixpkg/_speedups.c');
    expect(helper!.toolResults[1]!.result).toMatch(/^exit code 0\n--- stdout ---\nfixture_buildhelper\.py\nsetup\.py\n/);
    expect(helper!.toolResults[2]!.result).toMatch(/^from the sources \(no image built yet\): exit code 1\n/);
    expect(helper!.toolResults[2]!.result).toContain("No module named 'fixture_buildhelper'");
    // Reflexion: the second round sees the first round's script and its new failure.
    expect(header!.inputs.last_script).toContain('./tools/buildhelper');
    expect(header!.inputs.failure_summary).toMatch(/missing-header/);
    expect(header!.inputs.attempt_history!.split('\n')).toHaveLength(3);
  });

  it('builds each commit from its own sources (compiled extension from era 2 on)', async () => {
    for (const i of [0, 3, 6]) {
      const commit = fixture.commits[i]!;
      const r = await docker.run({
        image: envImageTag(REPO, commit.sha),
        cmd: ['python3', '-c', 'import fixpkg.core as c; print(c.REVISION, c.__dict__.get("_c_checksum") is not None)'],
        workingDir: '/',
        timeoutMs: 60_000,
        limits: { cpus: 1, memoryMb: 512, pidsLimit: 128 },
      });
      expect(r.stdout.trim()).toBe(`${i + 1} ${commit.era === 'setup-py' ? 'False' : 'True'}`);
    }
  });

  it('runs nothing again for done items, and a forced item verifies its cached script first', async () => {
    const ctx = testContext({ db, config, docker, log });
    const again = await runStage(ctx, synthesizeStage, gitScope(fixture.path));
    expect(again).toMatchObject({ planned: 7, reused: 7, ran: 0, done: 7 });
    const forced = await runStage(ctx, synthesizeStage, gitScope(fixture.path, '2024-01', [5]), { force: true });
    expect(forced).toMatchObject({ planned: 1, ran: 1, done: 1 });
    const attempts = new BuildScripts(db).forCommit(REPO, fixture.commits[4]!.sha);
    expect(attempts.map((a) => `${a.source}:${a.outcome}`)).toEqual(['neighbour:verified', 'cache:verified']);
    expect(llm.calls).toHaveLength(3);
  }, 300_000);

  it('perfmine cache scripts / show / stats report the attempts (--json)', () => {
    const scripts = JSON.parse(cli('--json', 'cache', 'scripts', '--repo', REPO)) as { attempts: { source: string }[] };
    expect(scripts.attempts).toHaveLength(12);

    const c5 = fixture.commits[5]!;
    const show = JSON.parse(cli('--json', 'cache', 'show', `${REPO}@${c5.sha.slice(0, 10)}`));
    expect(show).toMatchObject({
      key: `${REPO}@${c5.sha}`,
      status: 'verified',
      imageTag: envImageTag(REPO, c5.sha),
      verified: { source: 'agent' },
      lastFailure: { source: 'agent', failingStep: 'build', failureKind: 'missing-header' },
      rebuild: {
        repo: REPO,
        sha: c5.sha,
        baseImage: config.docker.baseImage,
        cloneSource: `git:${fixture.path}`,
        asvConfigPath: 'asv.conf.json',
        importName: 'fixpkg',
        pythonVersion: '3.11',
      },
    });
    expect(show.lastFailure.stderrTail + show.lastFailure.stdoutTail).toContain('_tables.h: No such file or directory');
    expect(show.rebuild.script).toContain('python3 tools/gen_tables.py');

    const text = cli('cache', 'show', `${REPO}@${c5.sha}`);
    expect(text).toMatch(/verified script \(attempt #\d+, agent: scripted-primary round 2\):/);
    expect(text).toMatch(/last failure \(attempt #\d+, agent: scripted-primary round 1\) at step build: build\/missing-header/);
    expect(text).toMatch(/to rebuild:\n {2}base image: {6}perfmine\/base:bookworm-asvfake/);

    const stats = JSON.parse(cli('--json', 'cache', 'stats')) as { repositories: Record<string, unknown>[] };
    expect(stats.repositories).toEqual([
      expect.objectContaining({
        repo: REPO,
        commits: 7,
        verifiedCommits: 7,
        successRate: 1,
        reuseRate: 4 / 7,
        verifiedBySource: { cache: 1, neighbour: 3, template: 1, agent: 2 },
        attempts: 12,
        llmCalls: 3,
      }),
    ]);
  });

  it('rebuilds a commit environment from what `cache show` gives, and it verifies again', async () => {
    const c5 = fixture.commits[5]!;
    const show = JSON.parse(cli('--json', 'cache', 'show', `${REPO}@${c5.sha}`));
    // Remove the environment and the repository tier: everything comes back from the stored spec.
    await docker.removeImage(show.imageTag);
    await docker.removeImage(show.rebuild.repoImage);
    expect(await docker.imageExists(show.imageTag)).toBe(false);
    const store = new BuildScripts(db);
    const result = await rebuildEnvironment(docker, config, show.rebuild, { log, store, commitDate: show.commitDate });
    expect(result).toMatchObject({ verified: true, imageTag: envImageTag(REPO, c5.sha), failure: null });
    expect(result.steps.map((s) => s.step)).toEqual(['script', 'build', 'history', 'tamper', 'import', 'asv', 'pytest', 'scan']);
    expect(await docker.imageExists(show.imageTag)).toBe(true);
    expect(store.get(result.attemptId!)).toMatchObject({ source: 'cache', sourceDetail: 'perfmine cache rebuild', outcome: 'verified' });
  }, 300_000);

  it('leaves no perfmine container of this run behind', async () => {
    expect(await docker.containers(label)).toEqual([]);
  });
});
