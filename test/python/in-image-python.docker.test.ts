import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BENCH_SCRIPT, HARNESS_SCRIPT } from '../../pipeline/services/environments/harness-files.js';
import { collect, REPO_ROOT, type CliResult } from '../helpers/index.js';
import { measurementSlot } from '../helpers/measure-slot.js';
import { CASE_KINDS, pairCase } from '../bench-tool/pair-cases.js';
import { PARITY_SUITE } from '../validate/harness/suites.js';
import { removeSuite, writeSuite } from '../validate/harness/harness-fixture.js';
import {
  formatCases,
  formatTs,
  interleaveCases,
  interleaveTs,
  protectedCases,
  protectedTs,
  PYTHON_DIR,
  type InterleaveAnswer,
  type Kind,
} from './parity.js';

/**
 * The in-image Python under the Pythons of both base images, Debian bookworm's 3.11 and trixie's
 * 3.13 (scripts/build-base-image.sh), in containers without a network, python/ and the test
 * drivers mounted read-only: every file compiles and every module imports with warnings as errors;
 * the harness discovers (the host's benchmarks.json byte for byte), runs and serves a suite; the
 * lock reads the image's distributions; perfmine-bench's verdict gives the host's answers; the
 * parity cases (test/python/parity.ts) give the TypeScript's. Its oldest supported Python, 3.8, is
 * checked without an interpreter by test/python/oldest-python.test.ts.
 */
measurementSlot('shared'); // the harness's runs load the machine: never beside an exclusive measurement

const IMAGES = [
  { image: 'perfmine/base:bookworm', python: '3.11' },
  { image: 'perfmine/base:trixie', python: '3.13' },
] as const;
const TEST_DIR = join(REPO_ROOT, 'test', 'python');
const SUITE_SRC = '/perfmine/suite-src';
const HARNESS = '/perfmine/python/perfmine_harness.py';

let suite: string;
const scratch = mkdtempSync(join(tmpdir(), 'perfmine-in-image-'));
beforeAll(() => {
  suite = writeSuite(PARITY_SUITE);
});
afterAll(() => {
  removeSuite(suite);
  rmSync(scratch, { recursive: true, force: true });
});

/** A command in a fresh container of the image: no network, python/, the test drivers and the suite read-only. */
function inImage(image: string, script: string, input = ''): Promise<CliResult> {
  const args = [
    'run',
    '--rm',
    '-i',
    '--network',
    'none',
    '-e',
    'PYTHONDONTWRITEBYTECODE=1',
    '-v',
    `${PYTHON_DIR}:/perfmine/python:ro`,
    '-v',
    `${TEST_DIR}:/perfmine/test:ro`,
    '-v',
    `${suite}:${SUITE_SRC}:ro`,
    image,
    'sh',
    '-c',
    script,
  ];
  return collect(spawn('docker', args), input);
}

async function ok(image: string, script: string, input = ''): Promise<string> {
  const r = await inImage(image, script, input);
  if (r.code !== 0) throw new Error(`${image}: ${script} exited ${r.code}: ${r.stderr.slice(-3000)}`);
  return r.stdout;
}

/** The Python answers to parity cases from the image's python3. */
async function answers<T>(image: string, kind: Kind, cases: readonly unknown[]): Promise<T[]> {
  return JSON.parse(await ok(image, `python3 /perfmine/test/parity_driver.py /perfmine/python ${kind}`, JSON.stringify(cases))) as T[];
}

/** Differences between two JSON values, numbers equal within 1e-9 relative (another interpreter's libm). */
function differences(a: unknown, b: unknown, path: string, out: string[]): void {
  if (typeof a === 'number' && typeof b === 'number') {
    if (!(a === b || Math.abs(a - b) <= 1e-9 * Math.max(Math.abs(a), Math.abs(b)))) out.push(`${path}: ${a} vs ${b}`);
  } else if (Array.isArray(a) && Array.isArray(b)) {
    if (a.length !== b.length) out.push(`${path}: length ${a.length} vs ${b.length}`);
    else a.forEach((v, i) => differences(v, b[i], `${path}[${i}]`, out));
  } else if (a !== null && b !== null && typeof a === 'object' && typeof b === 'object') {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    for (const k of keys) differences((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], `${path}.${k}`, out);
  } else if (a !== b) out.push(`${path}: ${JSON.stringify(a)} vs ${JSON.stringify(b)}`);
}

const inPython = (): string[] =>
  execFileSync('git', ['ls-files', '--', 'python/*.py'], { cwd: REPO_ROOT, encoding: 'utf8' })
    .split('\n')
    .filter(Boolean)
    .map((f) => f.slice('python/'.length))
    .sort();

describe.each(IMAGES)('the in-image Python in $image', ({ image, python }) => {
  it(`is Python ${python}: every file compiles and every module imports with warnings as errors`, async () => {
    const out = JSON.parse(await ok(image, 'python3 /perfmine/test/in_image.py /perfmine/python')) as {
      python: string;
      compiled: string[];
      imported: string[];
    };
    console.log(`${image}: Python ${out.python}`);
    expect(out.python.startsWith(`${python}.`)).toBe(true);
    expect(out.compiled).toEqual(inPython());
    expect(out.imported).toEqual(inPython().map((f) => f.slice(0, -'.py'.length)));
  }, 120_000);

  it('the harness discovers the suite as on this host, runs it, and serves a batch', async () => {
    const host = execFileSync('python3', [HARNESS_SCRIPT, 'discover'], {
      cwd: suite,
      encoding: 'utf8',
      env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' },
    });
    const copy = `cp -r ${SUITE_SRC} /tmp/suite && cd /tmp/suite`;
    expect(await ok(image, `${copy} && python3 ${HARNESS} discover`)).toBe(host);

    const run = await ok(
      image,
      `${copy} && python3 ${HARNESS} run --out-dir /tmp/results --commit 0123456789abcdef --machine box ` +
        `-a rounds=1 -a repeat=1 -a warmup_time=0 -b '^bench_funcs' >&2 && python3 -c ` +
        // the results file as asv writes it (NaN where a statistic is undefined): its result column
        `'import glob, json; d = json.load(open(glob.glob("/tmp/results/box/01234567-*.json")[0])); ` +
        `c = d["result_columns"].index("result"); print(json.dumps({k: v[c] for k, v in d["results"].items()}))'`,
    );
    const results = JSON.parse(run) as Record<string, (number | null)[]>;
    expect(Object.keys(results).sort()).toEqual([
      'bench_funcs.time_params',
      'bench_funcs.time_plain',
      'bench_funcs.time_pretty',
      'bench_funcs.track_answer',
    ]);
    expect(results['bench_funcs.track_answer']).toEqual([42]);
    expect(results['bench_funcs.time_params']).toHaveLength(6);
    for (const values of Object.values(results)) for (const v of values) expect(v).toBeGreaterThan(0);

    const batch = { id: 1, op: 'batch', benchmark: 'bench_funcs.time_plain', param: 0, samples: 3, number: 0 };
    const lines = (
      await ok(
        image,
        `${copy} && python3 ${HARNESS} serve`,
        `${JSON.stringify({ ...batch, warmup: null, sample_time: null, timeout: 60, clock: 'cpu' })}\n{"id":2,"op":"exit"}\n`,
      )
    )
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines[0]).toMatchObject({ event: 'ready', protocol: 1 });
    expect(String(lines[0]!['python']).startsWith(`${python}.`)).toBe(true);
    expect(lines[1]).toMatchObject({ id: 1, ok: true, kind: 'time' });
    expect(lines[1]!['samples']).toHaveLength(3);
    expect(lines[2]).toEqual({ id: 2, ok: true });
  }, 180_000);

  it("the lock reads the image's distributions with the image's Python", async () => {
    const lock = JSON.parse(await ok(image, 'python3 /perfmine/python/perfmine_lock.py read')) as {
      python: string;
      distributions: { name: string; version: string }[];
    };
    expect(lock.python.startsWith(`${python}.`)).toBe(true);
    expect(lock.distributions.map((d) => d.name)).toContain('pytest');
  }, 60_000);

  it("perfmine-bench's verdict gives this host's answers (and so validate's: test/bench-tool/verdict-parity.test.ts)", async () => {
    const cases = Array.from({ length: 30 }, (_, i) => pairCase(2000 + i, CASE_KINDS[i % CASE_KINDS.length]!)).map((c) => ({
      measurement: c.measurement,
      paired: c.paired,
      adaptive: c.adaptive,
      random: { seed: c.seed, n: 8 },
    }));
    const input = JSON.stringify(cases);
    const host = JSON.parse(execFileSync('python3', [BENCH_SCRIPT, '_verdict'], { input, encoding: 'utf8' })) as unknown;
    const mine = JSON.parse(await ok(image, 'python3 /perfmine/python/perfmine_bench.py _verdict', input)) as unknown;
    const found: string[] = [];
    differences(host, mine, 'verdict', found);
    expect(found).toEqual([]);
  }, 120_000);

  it('gives the TypeScript twins’ answers: value formatting, the interleaved schedule, the protected paths', async () => {
    const format = formatCases();
    const formatted = await answers<string>(image, 'format', format);
    expect(format.flatMap((c, i) => (formatTs(c) === formatted[i] ? [] : [`${JSON.stringify(c)}: ${formatted[i]}`]))).toEqual([]);

    const interleave = interleaveCases();
    const scheduled = await answers<InterleaveAnswer>(image, 'interleave', interleave);
    for (const [i, c] of interleave.entries()) expect(scheduled[i], c.label).toEqual(await interleaveTs(c));

    const layouts = protectedCases();
    const kept = await answers<string[]>(image, 'protected', layouts);
    for (const [i, c] of layouts.entries()) expect(kept[i], c.label).toEqual(protectedTs(c));
  }, 180_000);
});
