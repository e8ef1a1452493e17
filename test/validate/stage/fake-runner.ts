import type { AsvLayout, AsvRunSettings } from '../../../stages/validate/protocol/asv-invocation.js';
import { readInvocationOutput, SUITE_IMPORT_FAILURE } from '../../../stages/validate/protocol/asv-invocation.js';
import { readExpertAttempt } from '../../../stages/validate/protocol/expert-image.js';
import { classifyFailure, type StepResult } from '../../../pipeline/services/environments/failure.js';
import { PATCH_DOES_NOT_APPLY_EXIT } from '../../../pipeline/services/environments/verification.js';
import { FRAME } from '../../../stages/validate/protocol/framed-output.js';
import type { PlannedInvocation } from '../../../stages/validate/protocol/schedule.js';
import type { CandidateEnvironment, HarnessWorkerSpec, MeasurementRunner, SnapshotRequest } from '../../../stages/validate/runner-port.js';
import { FakeHarnessWorker, type FakeHarnessScript } from './fake-harness.js';
import { readReference, RICH_DIR } from '../../concepts/asv/reference.js';
import { invocationFile } from '../invocation-files.js';

/**
 * A MeasurementRunner that serves the real rich #3399 r4x4 invocations (20 samples each) instead
 * of running containers: base invocations from ab/349042fd, expert ones from ab/577def22 (with an
 * optional planted speedup or slowdown), calibration from aa1/ and aa2/. Its stdout goes through
 * the real framed-output reader. Harness workers (engine perfmine) serve the same real samples
 * batch by batch (fake-harness.ts). It records every call in order.
 */

const R4 = `${RICH_DIR}r4x4/`;
const SOURCES = {
  base: `${R4}ab/349042fd-existing-py_usr_bin_python3.json`,
  expert: `${R4}ab/577def22-existing-py_usr_bin_python3.json`,
  'calibration-first': `${R4}aa1/349042fd-existing-py_usr_bin_python3.json`,
  'calibration-second': `${R4}aa2/349042fd-existing-py_usr_bin_python3.json`,
} as const;

export const PASSING_JUNIT = `<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="0" failures="0" skipped="1" tests="3">
<testcase classname="tests.test_core" name="test_sum" time="0.01"/>
<testcase classname="tests.test_core" name="test_mean[1-2]" time="0.01"/>
<testcase classname="tests.test_core" name="test_slow" time="0.0"><skipped type="pytest.skip" message="slow">skipped</skipped></testcase>
</testsuite></testsuites>`;

export const FAILING_JUNIT = PASSING_JUNIT.replace(
  'name="test_mean[1-2]" time="0.01"/>',
  'name="test_mean[1-2]" time="0.01"><failure message="assert 1.5 == 2">AssertionError</failure></testcase>',
);

export const UNCOLLECTABLE_JUNIT = `<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="1" failures="0" skipped="0" tests="1">
<testcase classname="" name="tests.test_core" time="0.0"><error message="collection failure">ImportError: cannot import name 'gone'</error></testcase>
</testsuite></testsuites>`;

export function snapshotRecord(names: readonly string[]): string {
  return JSON.stringify({
    version: 1,
    mode: 'record',
    python: '3.11.2',
    importErrors: [],
    workloads: names.map((name) => ({ name, status: 'ok', repr: 'None', hash: 'sha256:00', pickle: null, skip: null, error: null })),
  });
}

export function snapshotComparison(names: readonly string[], mismatched: readonly string[] = []): string {
  return JSON.stringify({
    version: 1,
    mode: 'compare',
    python: '3.11.2',
    importErrors: [],
    results: names.map((name) =>
      mismatched.includes(name) ? { name, outcome: 'mismatch', reason: 'base 1, expert 2' } : { name, outcome: 'equal', reason: null },
    ),
    counts: { equal: names.length - mismatched.length, mismatch: mismatched.length, skipped: 0 },
  });
}

export interface FakeScript {
  readonly build?: 'ok' | 'patch-fails' | 'build-fails';
  /** Multiply these benchmarks' expert samples by `factor`. */
  readonly expert?: { readonly names: ReadonlySet<string>; readonly factor: number };
  readonly suiteNotImportable?: boolean;
  readonly tests?: { readonly base: string | null; readonly expert: string | null };
  readonly snapshot?: { readonly mismatched: readonly string[] };
  /** Duration every invocation reports. */
  readonly invocationMs?: number;
  /** What the harness workers do (engine perfmine); `expert` above applies to them too. */
  readonly harness?: FakeHarnessScript;
  /** The files changed between a commit and the candidate's base (git diff --name-only). */
  readonly changedSince?: Readonly<Record<string, readonly string[]>>;
  /** What the base image's workers run in (workerIdentity); default `fake:<image>`; null: cannot be told. */
  readonly identity?: string | null;
}

export const RICH_BENCHMARKS = Object.keys((JSON.parse(readReference(SOURCES.base)) as { results: Record<string, unknown> }).results);

export class FakeRunner implements MeasurementRunner {
  readonly calls: string[] = [];
  /** The patches expert images were built with. */
  readonly patches: string[] = [];
  readonly #served = new Map<string, number>();
  readonly settings: AsvRunSettings[] = [];
  readonly layouts: AsvLayout[] = [];
  readonly images: string[] = [];
  readonly environments: CandidateEnvironment[] = [];
  readonly workers: FakeHarnessWorker[] = [];
  readonly workerSpecs: HarnessWorkerSpec[] = [];
  prepared = 0;

  /** `byKey` overrides the script for particular candidates (`owner/name#N`). */
  constructor(
    readonly defaults: FakeScript = {},
    readonly byKey: Readonly<Record<string, FakeScript>> = {},
  ) {}

  #script(env: CandidateEnvironment): FakeScript {
    return this.byKey[env.key] ?? this.defaults;
  }

  async prepare() {
    this.prepared += 1;
  }

  async buildExpert(env: CandidateEnvironment, patch: string) {
    this.calls.push('build');
    this.patches.push(patch);
    this.environments.push(env);
    const kind = this.#script(env).build ?? 'ok';
    // The steps synthesize's build and verification would report.
    const step = (s: StepResult['step'], ok: boolean, exitCode: number, stderr = ''): StepResult => ({
      step: s,
      ok,
      exitCode,
      timedOut: false,
      stdout: '',
      stderr,
      durationMs: 100,
    });
    const steps: StepResult[] =
      kind === 'patch-fails'
        ? [
            step('script', true, 0),
            step(
              'checkout',
              false,
              PATCH_DOES_NOT_APPLY_EXIT,
              `error: patch failed: fastlib/core.py:1\nperfmine: the patch does not apply to ${'a'.repeat(40)}`,
            ),
          ]
        : kind === 'build-fails'
          ? [step('script', true, 0), step('build', false, 1, "error: command '/usr/bin/gcc' failed with exit code 1")]
          : [
              step('script', true, 0),
              step('build', true, 0, `applied ${patch.length} bytes`),
              ...(['tamper', 'import', 'asv', 'pytest'] as const).map((s) => step(s, true, 0)),
            ];
    const reading = readExpertAttempt({ steps, failure: classifyFailure(steps) });
    return { reading, image: kind === 'ok' ? `perfmine/expert:${env.key}` : null, durationMs: 1000 };
  }

  async runInvocation(
    env: CandidateEnvironment,
    image: string,
    invocation: PlannedInvocation,
    layout: AsvLayout,
    settings: AsvRunSettings,
  ) {
    const script = this.#script(env);
    const n = this.#served.get(invocation.role) ?? 0;
    this.#served.set(invocation.role, n + 1);
    this.calls.push(`asv ${invocation.role} ${invocation.seq}`);
    this.settings.push(settings);
    this.layouts.push(layout);
    this.images.push(image);
    const durationMs = script.invocationMs ?? 40_000;
    if (script.suiteNotImportable) {
      const log = Buffer.from(
        `· Discovering benchmarks\n·· Error running ...\nImportError: no network\n·· ${SUITE_IMPORT_FAILURE}.\n`,
      ).toString('base64');
      return {
        output: readInvocationOutput(`${FRAME} rc 1\n${FRAME} sha ${'a'.repeat(40)}\n${FRAME} file log asv.log ${log}\n`),
        exitCode: 0,
        timedOut: false,
        durationMs,
      };
    }
    const scale = invocation.role === 'expert' && script.expert ? { names: script.expert.names, factor: script.expert.factor } : {};
    const text = invocationFile(readReference(SOURCES[invocation.role]), n % 4, 20, scale);
    const b64 = (s: string) => Buffer.from(s).toString('base64');
    const stdout = [
      `${FRAME} machine-rc 0`,
      `${FRAME} rc 0`,
      `${FRAME} sha ${(invocation.image === 'base' ? 'a' : 'e').repeat(40)}`,
      `${FRAME} file results ${invocation.image === 'base' ? 'aaaaaaaa' : 'eeeeeeee'}-existing-py.json ${b64(text)}`,
      `${FRAME} file benchmarks benchmarks.json ${b64(readReference(`${R4}ab/benchmarks.json`))}`,
      `${FRAME} file log asv.log ${b64('· Running 32 total benchmarks\n')}`,
    ].join('\n');
    return { output: readInvocationOutput(stdout), exitCode: 0, timedOut: false, durationMs };
  }

  async openHarnessWorker(env: CandidateEnvironment, image: string, spec: HarnessWorkerSpec) {
    const script = this.#script(env);
    this.calls.push(`harness ${spec.side}`);
    this.images.push(image);
    this.workerSpecs.push(spec);
    const worker = new FakeHarnessWorker(spec.side, { ...script.harness, ...(script.expert ? { expert: script.expert } : {}) });
    this.workers.push(worker);
    return worker;
  }

  async hostCpus() {
    return 2;
  }

  async workerIdentity(env: CandidateEnvironment, image: string) {
    const identity = this.#script(env).identity;
    return identity === undefined ? `fake:${image}` : identity;
  }

  /** The paths changed since a commit: `changedSince[sha]`, else unknown. */
  async changedFiles(env: CandidateEnvironment, fromSha: string) {
    this.calls.push(`changed-files ${fromSha.slice(0, 8)}`);
    const changed = this.#script(env).changedSince?.[fromSha];
    return changed === undefined ? null : new Set(changed);
  }

  /** The arguments of every test run, by candidate. */
  readonly testArgs: { readonly key: string; readonly args: readonly string[] }[] = [];

  async runTests(env: CandidateEnvironment, image: string, options?: { readonly args?: readonly string[] }) {
    const side = image.startsWith('perfmine/expert:') ? 'expert' : 'base';
    this.calls.push(`pytest ${side}`);
    this.testArgs.push({ key: env.key, args: options?.args ?? [] });
    const tests = this.#script(env).tests;
    const junit = side === 'base' ? (tests?.base ?? PASSING_JUNIT) : (tests?.expert ?? PASSING_JUNIT);
    return { exitCode: junit === null ? 4 : 0, timedOut: false, junitXml: junit, log: '', durationMs: 5000 };
  }

  async recordSnapshot(_env: CandidateEnvironment, _image: string, _request: SnapshotRequest) {
    this.calls.push('snapshot record');
    return { json: snapshotRecord(RICH_BENCHMARKS), exitCode: 0, timedOut: false, log: '', durationMs: 3000 };
  }

  async compareSnapshot(env: CandidateEnvironment, _image: string, baseline: string) {
    this.calls.push('snapshot compare');
    if (!baseline.includes('"mode":"record"')) throw new Error('compare got no base record');
    return {
      json: snapshotComparison(RICH_BENCHMARKS, this.#script(env).snapshot?.mismatched ?? []),
      exitCode: 0,
      timedOut: false,
      log: '',
      durationMs: 3000,
    };
  }

  async release(images: readonly string[]) {
    this.calls.push(`release ${images.join(' ')}`);
  }

  async keep(env: CandidateEnvironment, image: string) {
    this.calls.push(`keep ${image}`);
    return `perfmine/expert-kept:${env.number}`;
  }
}
