import type { AgentTool } from '../../pipeline/services/llm-port.js';
import type { BuildPort, CommitTarget, PreparedTarget } from '../../stages/synthesize/build-port.js';
import { parseCloneSource, type AttemptRun } from '../../pipeline/services/environments/environment.js';
import { classifyFailure, type Step, type StepResult } from '../../pipeline/services/environments/failure.js';
import { LocalGitTree } from '../../stages/synthesize/git-tree.js';
import { choosePython } from '../../stages/synthesize/python-version.js';
import { extractFacts, FACT_FILES } from '../../stages/synthesize/repo-facts.js';
import type { TargetRequest } from '../../stages/synthesize/target.js';
import { benchmarkDirOf } from '../../pipeline/services/environments/verification.js';

/** What building a script does, in the fake: it verifies, or a step fails with these logs. */
export type FakeOutcome =
  | 'verified'
  | {
      readonly step: Exclude<Step, 'script' | 'checkout'>;
      readonly stderr: string;
      readonly exitCode?: number | null;
      readonly timedOut?: boolean;
    };

const VERIFY_STEPS = ['tamper', 'import', 'asv', 'pytest'] as const;

/**
 * A BuildPort without containers: the target is read from a real git clone (git:PATH) with the
 * stage's own fact readers; a build "runs" the outcome the test gives for the script, as the
 * steps the Docker port would report (build, then verification until the first failure). It
 * records every script it builds and which attempt images are alive, kept or released.
 */
export class FakeBuildPort implements BuildPort {
  readonly built: string[] = [];
  readonly kept: string[] = [];
  readonly released: string[] = [];
  /** Attempt images built and neither kept nor released yet. */
  readonly alive = new Set<string>();
  preflights = 0;
  readonly #outcome: (script: string) => FakeOutcome;

  constructor(outcome: (script: string) => FakeOutcome) {
    this.#outcome = outcome;
  }

  async preflight(): Promise<void> {
    this.preflights += 1;
  }

  async prepareTarget(request: TargetRequest): Promise<PreparedTarget> {
    const clone = parseCloneSource(request.cloneSource);
    if (clone.kind !== 'git') throw new Error('the fake build port reads git:PATH clones only');
    const tree = new LocalGitTree(clone.path);
    const paths = await tree.listFiles(request.sha);
    const texts = new Map<string, string>();
    for (const f of FACT_FILES) {
      const text = paths.includes(f) ? await tree.readFile(request.sha, f) : null;
      if (text !== null) texts.set(f, text);
    }
    const facts = extractFacts(paths, texts);
    const asvConfigPath = request.asvConfigPath && paths.includes(request.asvConfigPath) ? request.asvConfigPath : facts.asvConfigPath;
    if (!asvConfigPath) return { kind: 'no-asv-config' };
    const python = choosePython(facts.python, request.pythonVersions);
    if (python.version === null) return { kind: 'python-unavailable', reason: python.reason };
    const target: CommitTarget = {
      repo: request.repo,
      sha: request.sha,
      commitDate: await tree.commitDate(request.sha),
      clone,
      baseImage: request.baseImage,
      toolchainImage: `fake/toolchain:${request.baseImage}`,
      repoImage: `fake/repo-${request.repo}`,
      sourceImage: `fake/src-${request.repo}:${request.sha.slice(0, 12)}`,
      facts,
      asvConfigPath,
      benchmarkDir: benchmarkDirOf(asvConfigPath, await tree.readFile(request.sha, asvConfigPath)),
      python,
      tree,
    };
    return { kind: 'ready', target };
  }

  async buildAndVerify(target: CommitTarget, script: string): Promise<AttemptRun> {
    this.built.push(script);
    const outcome = this.#outcome(script);
    const step = (s: Step, ok: boolean, stderr = '', exitCode: number | null = ok ? 0 : 1, timedOut = false): StepResult => ({
      step: s,
      ok,
      exitCode,
      timedOut,
      stdout: `${s} output`,
      stderr,
      durationMs: 1,
    });
    const steps: StepResult[] = [step('script', true)];
    const fails = (s: Step) => outcome !== 'verified' && outcome.step === s;
    const failing = (s: Step) =>
      outcome === 'verified'
        ? step(s, true)
        : step(s, false, outcome.stderr, outcome.exitCode === undefined ? 1 : outcome.exitCode, outcome.timedOut ?? false);
    let image: string | null = null;
    steps.push(fails('build') ? failing('build') : step('build', true));
    if (!fails('build')) {
      image = `fake/env-${target.sha.slice(0, 12)}-attempt-${this.built.length}`;
      this.alive.add(image);
      for (const s of VERIFY_STEPS) {
        steps.push(fails(s) ? failing(s) : step(s, true));
        if (fails(s)) break;
      }
    }
    return { steps, failure: classifyFailure(steps), image, durationMs: steps.length, lock: null, scan: null };
  }

  async keep(target: CommitTarget, image: string): Promise<string> {
    if (!this.alive.delete(image)) throw new Error(`keep: no image ${image}`);
    const tag = `fake/env-${target.sha.slice(0, 12)}`;
    this.kept.push(tag);
    return tag;
  }

  async release(image: string): Promise<void> {
    if (!this.alive.delete(image)) throw new Error(`release: no image ${image}`);
    this.released.push(image);
  }

  agentTools(): AgentTool[] {
    return [];
  }
}
