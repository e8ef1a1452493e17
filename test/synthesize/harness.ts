import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { afterAll, beforeAll } from 'vitest';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BuildScripts, type NewAttempt } from '../../cache/build-scripts.js';
import { Ledger } from '../../cache/ledger.js';
import { savePullRequest } from '../../cache/pull-requests.js';
import { openStore, type Db } from '../../cache/store.js';
import { loadConfig } from '../../pipeline/config/load.js';
import type { Config } from '../../pipeline/config/schema.js';
import { createContext } from '../../pipeline/context.js';
import { readCredentials } from '../../pipeline/credentials.js';
import { hashOf } from '../../pipeline/hash.js';
import { createLogger, type Logger } from '../../pipeline/logging.js';
import type { Scope } from '../../pipeline/scope.js';
import { DockerService } from '../../pipeline/services/docker.js';
import type { LlmService } from '../../pipeline/services/llm-port.js';
import type { PipelineContext } from '../../pipeline/stage.js';
import { monthWindow } from '../../pipeline/window.js';
import type { ClassifyOutput } from '../../pipeline/concepts/records/classify-output.js';
import type { PullRequest } from '../../pipeline/concepts/records/pull-request.js';
import { buildPythonRepo, type FixtureCommit, type PythonRepo } from '../fixtures/python-repo.js';
import { Environments, type BuildSettings } from '../../pipeline/services/environments/environment.js';
import { scriptHash } from '../../pipeline/services/environments/script-check.js';
import { ASV_FAKE_IMAGE, ensureAsvFakeImage } from '../fakes/asv-image.js';

/** A label value unique to this test run: everything the run creates carries it. */
export function testLabel(name: string): string {
  return `test-${name}-${process.pid}-${randomBytes(3).toString('hex')}`;
}

export function tempDir(name: string): string {
  return mkdtempSync(join(tmpdir(), `perfmine-${name}-`));
}

/** A new git repository at `path` (branch main, a committer set): its git command, output trimmed. */
export function newGitRepo(path: string): (...args: string[]) => string {
  mkdirSync(path, { recursive: true });
  const git = (...args: string[]) => execFileSync('git', ['-C', path, ...args], { encoding: 'utf8' }).trim();
  git('init', '-q', '-b', 'main');
  git('config', 'user.email', 't@example.com');
  git('config', 'user.name', 't');
  return git;
}

/** Log lines kept in memory (printed by a test when it needs them). */
export function memoryLogger(level: 'info' | 'debug' | 'warn' = 'info'): { log: Logger; lines: string[] } {
  const lines: string[] = [];
  const log = createLogger({ level, format: 'json', destination: { write: (line) => void lines.push(line) } });
  return { log, lines };
}

/** Configuration for Docker tests: the stand-in asv image, one CPU, offline templates, no build network. */
export function testConfig(db: string, overrides: Record<string, unknown> = {}): Config {
  const layer: Record<string, unknown> = {
    db,
    docker: { baseImage: ASV_FAKE_IMAGE, cpus: 1, memoryMb: 2048, pidsLimit: 512, concurrency: 1 },
    llm: { mode: 'openai', model: 'scripted-primary', fallbackModel: 'scripted-fallback' },
    synthesize: {
      offline: true,
      buildNetwork: 'none',
      timeouts: { repoImage: 300, build: 240, import: 60, asv: 120, pytest: 120, tamper: 60, tool: 60 },
      agent: { roundsPerModel: 2, tokenBudget: 100_000 },
    },
    ...overrides,
  };
  return loadConfig({ flags: layer, env: {}, cwd: tmpdir() }).config;
}

export function testContext(options: { db: Db; config: Config; docker: DockerService; llm?: LlmService; log: Logger }): PipelineContext {
  return createContext({
    config: options.config,
    credentials: readCredentials({}),
    db: options.db,
    log: options.log,
    services: { docker: options.docker, ...(options.llm ? { llm: options.llm } : {}) },
  });
}

export function gitScope(path: string, month = '2024-01', prs: number[] = []): Scope {
  return { window: monthWindow(month), repos: [], prs, source: { kind: 'git', path } };
}

/**
 * Candidates as collect and classify would leave them: pull request N+1 merges commit N+1 onto
 * base commit N, for each base index given.
 */
export function seedCandidates(db: Db, repo: string, commits: readonly FixtureCommit[], bases: readonly number[]): ClassifyOutput[] {
  const ledger = new Ledger(db);
  const out: ClassifyOutput[] = [];
  for (const i of bases) {
    const base = commits[i]!;
    const merge = commits[i + 1]!;
    const number = i + 1;
    const pr: PullRequest = {
      repo,
      number,
      url: null,
      title: `Speed up revision ${number}`,
      body: '',
      labels: [],
      author: null,
      authorAssociation: null,
      createdAt: base.date,
      mergedAt: merge.date,
      baseRef: 'main',
      defaultBranch: 'main',
      mergedIntoDefault: true,
      baseSha: base.sha,
      mergeSha: merge.sha,
      headSha: null,
      files: [],
      additions: 0,
      deletions: 0,
      changedFiles: 0,
      diff: '',
      comments: [],
      linkedIssues: [],
      asvConfig: { path: 'asv.conf.json', text: '{}' },
      source: 'git',
      missing: ['body', 'labels', 'comments', 'linkedIssues'],
    };
    savePullRequest(db, pr);
    const output: ClassifyOutput = {
      repo,
      number,
      baseSha: base.sha,
      mergeSha: merge.sha,
      mergedAt: merge.date,
      contentHash: hashOf(pr),
      classifier: 'heuristic',
      reasoning: 'fixture',
      category: null,
      difficulty: null,
      problemStatement: '',
    };
    ledger.complete(
      'classify',
      1,
      { key: `${repo}#${number}`, repo, at: merge.date, inputHash: hashOf(output) },
      { status: 'done', reason: null, detail: null, output },
      null,
    );
    out.push(output);
  }
  return out;
}

/** sourceDetail of the scripts seedVerifiedScript stores: tests tell them from the stage's own attempts by it. */
export const SEEDED = 'seeded by the test';

/** A build attempt with every field set (a failed template build of o/r), `over` replacing what a test needs. */
export const newAttempt = (over: Partial<NewAttempt> = {}): NewAttempt => ({
  repo: 'o/r',
  sha: 'a'.repeat(40),
  commitDate: '2024-01-01T00:00:00.000Z',
  script: '#!/usr/bin/env bash\necho a\n',
  scriptHash: scriptHash('echo a'),
  source: 'template',
  sourceDetail: null,
  outcome: 'failed',
  failingStep: 'build',
  failureKind: 'unknown',
  failure: 'build/unknown: boom',
  stdoutTail: 'out',
  stderrTail: 'err',
  steps: [{ step: 'build', ok: false, exitCode: 1, timedOut: false, durationMs: 5 }],
  durationMs: 10,
  llmCalls: 0,
  promptTokens: 0,
  completionTokens: 0,
  costUsd: 0,
  model: null,
  baseImage: 'base',
  toolchainImage: 'base',
  repoImage: 'repo-img',
  cloneSource: 'git:/x',
  asvConfigPath: 'asv.conf.json',
  importName: 'pkg',
  pythonVersion: '3.11',
  imageTag: null,
  runId: null,
  ...over,
});

/** A script stored as verified for a commit, as an earlier run would have left it (the cache is tried first). */
export function seedVerifiedScript(db: Db, repo: string, sha: string, commitDate: string, script: string): void {
  new BuildScripts(db).record(
    newAttempt({
      repo,
      sha,
      commitDate,
      script,
      scriptHash: scriptHash(script),
      sourceDetail: SEEDED,
      outcome: 'verified',
      failingStep: null,
      failureKind: null,
      failure: null,
      stdoutTail: '',
      stderrTail: '',
      steps: [],
      durationMs: 1,
      baseImage: ASV_FAKE_IMAGE,
      toolchainImage: ASV_FAKE_IMAGE,
      repoImage: 'seeded',
      cloneSource: 'git:/nowhere',
      importName: 'fixpkg',
    }),
  );
}

/** Environments with the test suites' settings: generous timeouts, no network for builds, `asv check`. */
export function testEnvironments(docker: DockerService, limits: BuildSettings['limits']): Environments {
  return new Environments(
    docker,
    {
      limits,
      timeoutsMs: { repoImage: 300_000, build: 240_000, import: 60_000, asv: 120_000, pytest: 120_000, tamper: 60_000, tool: 60_000 },
      tailChars: 8000,
      buildNetwork: 'none',
      index: null,
      store: null,
      asvDiscover: 'check',
    },
    memoryLogger().log,
  );
}

/**
 * A suite over one generated repository (two commits of the setup.py era, with `extraFiles`)
 * whose first commit is a seeded candidate of `repo`, built against the real engine: its store,
 * engine, temporary folder and logger, created before the suite and removed after it.
 */
export function oneCandidateSuite(
  name: string,
  repo: string,
  extraFiles: Readonly<Record<string, string>>,
): {
  readonly fixture: PythonRepo;
  readonly db: Db;
  readonly docker: DockerService;
  readonly dir: string;
  readonly log: Logger;
  readonly lines: string[];
} {
  const docker = new DockerService({ runLabel: testLabel(name) });
  const dir = tempDir(name);
  const { log, lines } = memoryLogger('info');
  const state: { fixture?: PythonRepo; db?: Db } = {};
  beforeAll(async () => {
    await ensureAsvFakeImage();
    state.fixture = buildPythonRepo({ dir: join(dir, 'repo'), eras: [{ era: 'setup-py', commits: 2 }], extraFiles });
    state.db = openStore(join(dir, 'perfmine.db'));
    seedCandidates(state.db, repo, state.fixture.commits, [0]);
  }, 300_000);
  afterAll(async () => {
    state.db?.close();
    await docker.removeLabelled(docker.runLabel);
    rmSync(dir, { recursive: true, force: true });
  }, 300_000);
  return {
    get fixture() {
      return state.fixture!;
    },
    get db() {
      return state.db!;
    },
    docker,
    dir,
    log,
    lines,
  };
}
