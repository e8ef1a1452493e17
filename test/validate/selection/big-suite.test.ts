import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { selectWorkloads, type Fingerprint, type OutlineSpan } from '../../../stages/validate/selection.js';
import { removeSuite, ServeClient, writeSuite } from '../harness/harness-fixture.js';
import { bigSuiteFiles, constantPatch, everyWorkloadPatch, FUNCTIONS, MODULES, twoFunctionsPatch } from './big-suite.js';

/**
 * Workload selection end to end on the harness (host Python, no container): a generated library of
 * 500 workloads across 50 modules; the harness fingerprints every workload and outlines the
 * changed files; the selection of a patch to two functions is exactly the two workloads that run
 * them; a patch to a module-level constant and one to the function every workload runs select
 * all.
 */
let dir: string;
let client: ServeClient;
let fingerprints: Fingerprint[];
let imported: Set<string>;
let id = 0;

beforeAll(async () => {
  dir = writeSuite(bigSuiteFiles());
  client = new ServeClient(dir, [], [], { ...process.env, PYTHONPATH: dir });
  // the library is imported from the checkout (an editable install puts it on the path)
  const ready = await client.next();
  expect(ready['event'], JSON.stringify(ready).slice(0, 500)).toBe('ready');
  const workloads = ready['workloads'] as { name: string; benchmark: string; param: number }[];
  fingerprints = [];
  for (const w of workloads) {
    const a = await client.ask({ id: ++id, op: 'fingerprint', benchmark: w.benchmark, param: w.param, timeout: null });
    expect(a['ok'], JSON.stringify(a)).toBe(true);
    fingerprints.push({ workload: w.name, code: a['code'] as [string, number, number][], opaque: false });
  }
  imported = new Set((await client.ask({ id: ++id, op: 'modules' }))['files'] as string[]);
}, 300_000);

afterAll(async () => {
  client?.send({ id: 0, op: 'exit' });
  await client?.exit();
  removeSuite(dir);
});

async function outlines(paths: readonly string[]): Promise<Map<string, OutlineSpan[] | null>> {
  const a = await client.ask({ id: ++id, op: 'outline', files: paths.map((p) => `${dir}/${p}`) });
  const files = a['files'] as Record<string, OutlineSpan[] | null>;
  return new Map(paths.map((p) => [p, files[`${dir}/${p}`] ?? null]));
}

async function select(diff: string, changed: readonly string[]) {
  return selectWorkloads({
    diff,
    repoDir: dir,
    benchmarkDir: 'benchmarks',
    outlines: await outlines(changed),
    imported,
    fingerprints,
    controls: 5,
  });
}

describe('selection on a suite of 500 workloads across 50 modules (the real harness fingerprints them)', () => {
  it('fingerprints every workload: its benchmark, its function and the shared helper', () => {
    expect(fingerprints).toHaveLength(MODULES * FUNCTIONS);
    const one = fingerprints.find((f) => f.workload === 'bench_m07.time_f3')!;
    // the checkout's files (the harness's own frames run too, outside it)
    const files = new Set(one.code!.filter(([file]) => file.startsWith(`${dir}/`)).map(([file]) => file.slice(dir.length + 1)));
    expect(files).toEqual(new Set(['benchmarks/bench_m07.py', 'biglib/m07.py', 'biglib/common.py']));
  });

  it('selects exactly the two workloads that run the two changed functions, plus 5 controls', async () => {
    const { diff, expected } = twoFunctionsPatch();
    const s = await select(diff, ['biglib/m07.py', 'biglib/m21.py']);
    expect(s.mode).toBe('coverage');
    expect([...s.selected].sort()).toEqual(expected);
    expect(s.touched.map((t) => t.name)).toEqual(['f3', 'f8']);
    expect(s.controls).toHaveLength(5);
    expect(s.skipped).toHaveLength(500 - 2 - 5);
  });

  it('selects all for a change of a module-level constant every module imports', async () => {
    const s = await select(constantPatch(), ['biglib/common.py']);
    expect(s).toMatchObject({ mode: 'all', reason: expect.stringMatching(/module-level code changed in biglib\/common\.py/) });
    expect(s.selected).toHaveLength(500);
  });

  it('selects all for a change of the function every workload runs', async () => {
    const s = await select(everyWorkloadPatch(), ['biglib/common.py']);
    expect(s).toMatchObject({
      mode: 'all',
      reason: expect.stringMatching(/every workload runs the changed code \(biglib\/common\.py:scale\)/),
    });
  });
});
