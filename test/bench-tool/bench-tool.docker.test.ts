import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSampleRepo, type SampleRepo } from '../../pipeline/demo/sample-repo.js';
import { DockerService } from '../../pipeline/services/docker.js';
import { benchTarEntries } from '../../pipeline/services/environments/harness-files.js';
import { measurementSlot } from '../helpers/measure-slot.js';
import { tempDir, testLabel } from '../synthesize/harness.js';

/**
 * perfmine-bench as an agent uses it, in a container of an image like a task's: the sample
 * repository at /repo (only the base commit of #101 and its ancestors, HEAD detached there),
 * installed editable by the template's build script, the tool installed with benchTarEntries.
 * `list` names the six workloads; with #101's patch in the working tree (fib made iterative,
 * about 1000x on time_fib) `compare` with 3 rounds (the least the verdict takes) calls time_fib
 * improved by far; with #103's placebo (a comment) nothing is improved; and afterwards /repo is
 * byte for byte what it was before compare (the working tree's change only), and nothing of the
 * base copy is left in /tmp. The machine is shared: the assertions are on effects far beyond noise.
 */
measurementSlot('shared');
const label = testLabel('bench-tool');
const docker = new DockerService({ runLabel: label });
const dir = tempDir('bench-tool');
const LIMITS = { cpus: 2, memoryMb: 2048, pidsLimit: 512 };
const BUILD_SCRIPT =
  '#!/usr/bin/env bash\nset -euo pipefail\ncd /repo\nPY="${PERFMINE_PYTHON:-python3}"\n"$PY" -m pip install --no-build-isolation --no-deps -e .\n';

let sample: SampleRepo;
let image: string;
let base: string;
const patches: Record<'fast' | 'placebo', string> = { fast: '', placebo: '' };

const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8' });

/** The merge commit of a sample pull request merged with a merge commit. */
function commitOf(number: number): string {
  return git(sample.path, 'log', '--format=%H', '-n', '1', '-F', '--grep', `pull request #${number} `, 'main').trim();
}

beforeAll(async () => {
  sample = createSampleRepo(join(dir, 'sample'));
  const fast = commitOf(101);
  base = git(sample.path, 'rev-parse', `${fast}^1`).trim();
  patches.fast = git(sample.path, 'diff', base, fast);
  // #103's placebo (it only rewords a comment in is_prime), made on this base
  const placebo = commitOf(103);
  const wt = join(dir, 'placebo');
  git(sample.path, 'worktree', 'add', '-q', '--detach', wt, base);
  execFileSync('git', ['apply'], { cwd: wt, input: git(sample.path, 'diff', `${placebo}^1`, placebo) });
  patches.placebo = git(wt, 'diff');
  git(sample.path, 'worktree', 'remove', '--force', wt);
  git(sample.path, 'branch', 'base', base);
  git(sample.path, 'bundle', 'create', join(dir, 'base.bundle'), 'base');
  image = `perfmine/test-bench-tool:${label}`;
  const dockerfile = [
    'FROM perfmine/base:bookworm',
    'COPY base.bundle /tmp/base.bundle',
    // /repo holds the base commit and its ancestors only, HEAD detached at the base
    'RUN git init -q /repo && cd /repo && git fetch -q /tmp/base.bundle base && git -c advice.detachedHead=false checkout -q --detach FETCH_HEAD && rm -f .git/FETCH_HEAD /tmp/base.bundle',
    'COPY docker_build.sh /perfmine/docker_build.sh',
    'RUN bash /perfmine/docker_build.sh',
    'COPY tool/ /',
  ].join('\n');
  const tool = benchTarEntries({ baseCommit: base, asvConfig: 'asv.conf.json' }).map((e) => ({ ...e, name: `tool/${e.name}` }));
  const built = await docker.buildImage({
    tag: image,
    context: [
      { name: 'Dockerfile', content: dockerfile },
      { name: 'base.bundle', content: readFileSync(join(dir, 'base.bundle')) },
      { name: 'docker_build.sh', content: BUILD_SCRIPT, mode: 0o755 },
      ...tool,
    ],
    timeoutMs: 300_000,
  });
  if (!built.ok) throw new Error(`building ${image} failed: ${built.error}\n${built.log}`);
}, 600_000);

afterAll(async () => {
  await docker.removeLabelled(label);
  rmSync(dir, { recursive: true, force: true });
}, 120_000);

/** Everything under /repo (.git included): paths, modes and contents, and git's view, as one hash. */
const SNAPSHOT = `snap() { (cd /repo && find . -printf '%p %m %y\\n' | sort && find . -type f -print0 | sort -z | xargs -0 sha256sum && git --no-optional-locks status --porcelain) | sha256sum; }`;

interface Session {
  readonly sections: ReadonlyMap<string, string>;
  readonly stdout: string;
  readonly stderr: string;
}

/** A container of the image running `script` (bash); its `@@name` lines start named sections of its output. */
async function session(script: string, files: Record<string, string> = {}): Promise<Session> {
  const r = await docker.run({
    image,
    cmd: ['bash', '-c', script],
    network: 'none',
    timeoutMs: 900_000,
    limits: LIMITS,
    tailChars: 400_000,
    files: Object.entries(files).map(([name, content]) => ({ name, content })),
  });
  if (r.exitCode !== 0) throw new Error(`the session exited ${r.exitCode}:\n${r.stdout.slice(-4000)}\n${r.stderr.slice(-4000)}`);
  const sections = new Map<string, string>();
  let current = '';
  for (const line of r.stdout.split('\n')) {
    const head = /^@@(\S+)(?: (.*))?$/.exec(line);
    if (head) sections.set((current = head[1]!), head[2] ?? '');
    else if (current) sections.set(current, `${sections.get(current)}${sections.get(current) ? '\n' : ''}${line}`);
  }
  return { sections, stdout: r.stdout, stderr: r.stderr };
}

/** Applies the patch to /repo's working tree, compares with the tool, and records /repo before and after. */
async function compareWith(patch: string): Promise<{ report: CompareReport; s: Session }> {
  const s = await session(
    [
      'set -u',
      SNAPSHOT,
      'cd /repo && git apply /tmp/change.diff',
      'echo "@@before $(snap)"',
      'perfmine-bench compare --rounds 3 --out /tmp/report.json > /tmp/compare.txt 2> /tmp/compare.err; echo "@@rc $?"',
      'echo "@@after $(snap)"',
      'echo "@@status"; git --no-optional-locks status --porcelain',
      'echo "@@diff"; git --no-optional-locks diff',
      'echo "@@leftovers"; ls -A /tmp | grep -v -e "^change.diff$" -e "^report.json$" -e "^compare.txt$" -e "^compare.err$" || true',
      'echo "@@text"; cat /tmp/compare.txt',
      'echo "@@stderr"; cat /tmp/compare.err',
      'echo "@@report"; cat /tmp/report.json',
    ].join('\n'),
    { 'tmp/change.diff': patch },
  );
  const rc = s.sections.get('rc');
  if (rc !== '0') throw new Error(`compare exited ${rc}:\n${s.sections.get('stderr')}`);
  return { report: JSON.parse(s.sections.get('report')!) as CompareReport, s };
}

interface CompareReport {
  readonly base_commit: string;
  readonly improved: readonly string[];
  readonly worsened: readonly string[];
  readonly measurement: { readonly rounds: number; readonly seconds: number };
  readonly build: { readonly seconds: number };
  readonly workloads: readonly {
    readonly name: string;
    readonly verdict: string;
    readonly reason: string | null;
    readonly speedup: number | null;
    readonly interval: readonly [number, number] | null;
    readonly mds: number | null;
  }[];
}

/** /repo is untouched by compare, and holds the working tree's change only. */
function expectRepoAsLeft(s: Session, patch: string): void {
  expect(s.sections.get('after')).toBe(s.sections.get('before'));
  expect(s.sections.get('status')).toBe(' M fastmath/core.py');
  expect(s.sections.get('diff')!.trim()).toBe(patch.trim());
  expect(s.sections.get('leftovers')).toBe('');
}

const WORKLOADS = [
  'bench_core.TimeIsPrime.time_is_prime(100003)',
  'bench_core.TimeIsPrime.time_is_prime(1000003)',
  'bench_core.TimePrimes.time_count_primes(2000)',
  'bench_core.TimePrimes.time_count_primes(6000)',
  'bench_core.time_fib',
  'bench_core.time_sum_of_squares',
];

describe('perfmine-bench in a task image', () => {
  it('lists the six workloads by their asv names', async () => {
    const s = await session('cd /repo && echo "@@list" && perfmine-bench list');
    expect(s.sections.get('list')!.trim().split('\n')).toEqual(WORKLOADS);
  }, 300_000);

  it("calls #101's fib far faster with 3 rounds, and leaves /repo as it found it", async () => {
    const { report, s } = await compareWith(patches.fast);
    expect(report.base_commit).toBe(base);
    expect(report.measurement.rounds).toBe(3);
    expect(report.improved).toEqual(['bench_core.time_fib']);
    const fib = report.workloads.find((w) => w.name === 'bench_core.time_fib')!;
    expect(fib.speedup!).toBeGreaterThan(50);
    expect(fib.interval![0]).toBeGreaterThan(10);
    expect(fib.interval![0]).toBeLessThanOrEqual(fib.speedup!);
    expect(fib.mds!).toBeLessThan(fib.speedup!);
    expect(report.workloads.map((w) => w.name).sort()).toEqual([...WORKLOADS].sort());
    expect(s.sections.get('text')).toMatch(/improved\s+\d+x\s.*bench_core\.time_fib/);
    expect(s.sections.get('text')).toContain("the base commit's (asv.conf.json in the base copy)");
    expectRepoAsLeft(s, patches.fast);
  }, 900_000);

  it("finds nothing improved by #103's placebo (a comment), and leaves /repo as it found it", async () => {
    const { report, s } = await compareWith(patches.placebo);
    expect(report.improved).toEqual([]);
    expect(report.workloads).toHaveLength(6);
    for (const w of report.workloads) expect(['unchanged', 'worsened']).toContain(w.verdict);
    expectRepoAsLeft(s, patches.placebo);
  }, 900_000);
});
