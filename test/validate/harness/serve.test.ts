import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { alive, childrenOf, removeSuite, ServeClient, writeSuite, type Line } from './harness-fixture.js';
import { ASV_ONLY_SUITE, BAD_SUITE, BROKEN_SUITE, CONFIG, PARITY_SUITE } from './suites.js';

/** `serve` driven over stdin/stdout as the TypeScript driver drives it. */

const dirs: string[] = [];
afterAll(() => dirs.forEach(removeSuite));
function suite(files: Record<string, string>): string {
  const dir = writeSuite(files);
  dirs.push(dir);
  return dir;
}

describe('serve: a suite that cannot be served', () => {
  it('answers fatal suite-not-importable naming the module, then exits 3', async () => {
    const client = new ServeClient(suite(BROKEN_SUITE));
    const first = await client.next();
    expect(first).toMatchObject({ event: 'fatal', reason: 'suite-not-importable' });
    expect(first['message']).toContain('benchmarks.broken');
    expect(first['message']).toContain("ModuleNotFoundError: No module named 'no_such_module_perfmine'");
    expect(await client.exit()).toBe(3);
  });

  it('answers fatal no-benchmarks, and bad-config for a missing config file', async () => {
    const empty = new ServeClient(suite({ 'asv.conf.json': CONFIG, 'benchmarks/__init__.py': '' }));
    expect(await empty.next()).toMatchObject({ event: 'fatal', reason: 'no-benchmarks' });
    expect(await empty.exit()).toBe(3);
    const noConfig = new ServeClient(suite({ 'benchmarks/__init__.py': '' }));
    const line = await noConfig.next();
    expect(line).toMatchObject({ event: 'fatal', reason: 'bad-config' });
    expect(line['message']).toContain('asv.conf.json not found');
    expect(await noConfig.exit()).toBe(3);
  });
});

describe('serve: misbehaving benchmarks', () => {
  let client: ServeClient;
  let ready: Line;
  let id = 0;
  const batch = (benchmark: string, fields: Record<string, unknown> = {}) => client.batch(++id, benchmark, fields);
  const ok = async (benchmark: string) =>
    expect(await batch(benchmark, { samples: 2, number: 3, warmup: 0 })).toMatchObject({ ok: true, kind: 'time' });
  const workerPid = () => childrenOf(client.proc.pid!)[0]!;

  beforeAll(async () => {
    client = new ServeClient(suite(BAD_SUITE));
    ready = await client.next();
  });

  it('says ready with the protocol, the benchmarks as benchmarks.json has them, and every workload', () => {
    expect(ready).toMatchObject({ event: 'ready', protocol: 1, pid: client.proc.pid });
    expect(ready['python']).toMatch(/^3\.\d+\.\d+/);
    expect(ready['worker_pid']).toBe(workerPid());
    const benchmarks = ready['benchmarks'] as Record<string, Record<string, unknown>>;
    expect(benchmarks['bad.time_hang']).toMatchObject({ name: 'bad.time_hang', type: 'time', timeout: 1.5 });
    const workloads = ready['workloads'] as { name: string; benchmark: string; param: number }[];
    expect(workloads.filter((w) => w.benchmark === 'bad.Params.time_x')).toEqual([
      { name: 'bad.Params.time_x(1)', benchmark: 'bad.Params.time_x', param: 0 },
      { name: 'bad.Params.time_x(2)', benchmark: 'bad.Params.time_x', param: 1 },
    ]);
    expect(workloads.map((w) => w.name)).toEqual([...workloads.map((w) => w.name)].sort());
  });

  it('kills a benchmark that hangs at its timeout attribute, and the next batch works in a fresh worker', async () => {
    const before = workerPid();
    expect(await batch('bad.time_hang', { number: 1, warmup: 0 })).toEqual({
      id,
      ok: false,
      status: 'timeout',
      message: 'killed after 1.5 s',
    });
    expect(alive(before)).toBe(false);
    await ok('bad.time_ok');
    expect(workerPid()).not.toBe(before);
  });

  it("uses the command's timeout over the attribute", async () => {
    expect(await batch('bad.time_hang', { number: 1, warmup: 0, timeout: 1 })).toMatchObject({
      status: 'timeout',
      message: 'killed after 1 s',
    });
    await ok('bad.time_ok');
  });

  it('answers crashed when the worker segfaults or exits, and restarts it', async () => {
    const before = workerPid();
    expect(await batch('bad.time_segfault', { number: 1, warmup: 0 })).toEqual({
      id,
      ok: false,
      status: 'crashed',
      message: 'the worker died of SIGSEGV',
    });
    expect(alive(before)).toBe(false);
    await ok('bad.time_ok');
    expect(await batch('bad.time_exit', { number: 1, warmup: 0 })).toMatchObject({
      status: 'crashed',
      message: 'the worker exited with status 7',
    });
    await ok('bad.time_ok');
  });

  it('keeps stdout to protocol lines when a benchmark prints (Python and C level)', async () => {
    await ok('bad.time_prints');
    expect(client.rawStdout.every((l) => typeof JSON.parse(l) === 'object')).toBe(true);
    expect(client.rawStdout.length).toBe(id + 1); // ready + one answer per command
    expect(client.rawStdout).not.toContain('python-level noise on stdout');
    expect(client.rawStdout).not.toContain('C-level noise on fd 1');
    // it went to stderr instead (which may arrive after the answer)
    await client.stderrContains('python-level noise on stdout');
    await client.stderrContains('C-level noise on fd 1');
  });

  it('restores the working directory after a benchmark changes it, and runs each batch in an empty one', async () => {
    await ok('bad.time_chdir');
    expect(await batch('bad.track_cwd_is_root')).toMatchObject({ ok: true, kind: 'track', value: 0 });
    expect(await batch('bad.track_leaves_a_file')).toMatchObject({ ok: true, value: 1 });
    expect(await batch('bad.track_cwd_entries')).toMatchObject({ ok: true, value: 0 });
  });

  it('answers not-a-number for a track returning NaN or infinity, failed for a non-number', async () => {
    // the worker's own failures carry its account of the batch (serve-account.test.ts)
    expect(await batch('bad.track_nan')).toEqual({
      id,
      ok: false,
      status: 'not-a-number',
      message: 'track_nan returned nan',
      account: { setup: expect.any(Number), warmup: 0, samples: expect.any(Number) },
    });
    expect(await batch('bad.track_inf')).toMatchObject({ status: 'not-a-number', message: 'track_inf returned inf' });
    expect(await batch('bad.track_text')).toMatchObject({ status: 'failed', message: "track_text returned 'eleven', not a number" });
  });

  it('answers failed for an exception in setup (with the traceback tail), skipped for NotImplementedError', async () => {
    const failed = await batch('bad.SetupRaises.time_x');
    expect(failed).toMatchObject({ ok: false, status: 'failed' });
    expect(String(failed['message'])).toMatch(/^KeyError: 'missing'\n[\s\S]*bad\.py", line \d+, in setup/);
    expect(await batch('bad.SetupSkips.time_x')).toEqual({
      id,
      ok: false,
      status: 'skipped',
      message: 'NotImplementedError in setup: not on this platform',
      account: { setup: expect.any(Number), warmup: 0, samples: 0 },
    });
  });

  it('answers unknown for an unknown benchmark, a parameter out of range, a bad field, a bad line', async () => {
    expect(await batch('bad.time_nothing')).toEqual({ id, ok: false, status: 'unknown', message: 'no benchmark bad.time_nothing' });
    expect(await batch('bad.Params.time_x', { param: 2 })).toMatchObject({
      status: 'unknown',
      message: 'no benchmark bad.Params.time_x / param 2 out of range',
    });
    expect(await batch('bad.time_ok', { samples: 0 })).toMatchObject({ status: 'unknown' });
    expect(await client.ask({ id: 99, op: 'dance' })).toMatchObject({ id: 99, ok: false, status: 'unknown' });
    client.send('this is not json');
    expect(await client.next()).toMatchObject({ id: null, ok: false, status: 'unknown' });
    await ok('bad.time_ok');
  });

  it("takes exactly the samples asked, with the number given, or asv's number (the attribute, else calibrated)", async () => {
    const given = await batch('bad.Params.time_x', { param: 1, samples: 4, number: 7, warmup: 0 });
    expect(given).toMatchObject({ ok: true, number: 7 });
    expect(given['samples']).toHaveLength(4);
    const attribute = await batch('bad.time_sleep_10ms', { samples: 2, warmup: 0 });
    expect(attribute).toMatchObject({ ok: true, number: 1 });
    const calibrated = await batch('bad.time_ok', { samples: 3 });
    expect(calibrated['number']).toBeGreaterThan(1);
    expect((calibrated['samples'] as number[]).every((s) => s > 0)).toBe(true);
    expect(calibrated['elapsed']).toBeGreaterThan(0);
  });

  it('exits 0 on the exit command, leaving nothing running (not even what a benchmark spawned)', async () => {
    const spawned = await batch('bad.track_spawns');
    const grandchild = spawned['value'] as number;
    expect(alive(grandchild)).toBe(true);
    const worker = workerPid();
    expect(await client.ask({ id: 1000, op: 'exit' })).toEqual({ id: 1000, ok: true });
    expect(await client.exit()).toBe(0);
    expect(alive(worker)).toBe(false);
    expect(alive(grandchild)).toBe(false);
  });
});

describe('serve: warm across batches', () => {
  it('imports the suite once per worker and runs setup_cache once, handing each batch its own copy', async () => {
    const dir = suite(BAD_SUITE);
    const client = new ServeClient(dir);
    await client.next();
    for (let i = 1; i <= 10; i++) {
      expect(await client.batch(i, 'bad.time_ok', { samples: 2, number: 5, warmup: 0 })).toMatchObject({ ok: true });
      expect(await client.batch(100 + i, 'bad.Cached.track_len_after_append')).toMatchObject({ ok: true, value: 4 });
      expect(await client.batch(200 + i, 'bad.Cached.time_sum', { samples: 1, number: 1, warmup: 0 })).toMatchObject({ ok: true });
    }
    expect(readFileSync(join(dir, 'benchmarks/imports.log'), 'utf8').trim().split('\n')).toHaveLength(1);
    expect(readFileSync(join(dir, 'benchmarks/setup_cache.log'), 'utf8').trim().split('\n')).toHaveLength(1);
    client.proc.stdin.end();
    expect(await client.exit()).toBe(0);
  });

  it('exits 0 at end of input and on SIGTERM, its worker gone', async () => {
    const eof = new ServeClient(suite(BAD_SUITE));
    const first = await eof.next();
    eof.proc.stdin.end();
    expect(await eof.exit()).toBe(0);
    expect(alive(first['worker_pid'] as number)).toBe(false);

    const term = new ServeClient(suite(BAD_SUITE));
    const ready = await term.next();
    term.proc.kill('SIGTERM');
    expect(await term.exit()).toBe(0);
    expect(alive(ready['worker_pid'] as number)).toBe(false);
  });
});

describe('serve: every kind of benchmark', () => {
  it('answers time, timeraw, memory, peakmemory and track batches, with params and setup_cache', async () => {
    const client = new ServeClient(
      suite({ ...PARITY_SUITE, ...ASV_ONLY_SUITE, 'benchmarks/bench_more.py': ASV_ONLY_SUITE['benchmarks/bench_more.py']! }),
    );
    const ready = await client.next();
    const workloads = (ready['workloads'] as { name: string; param: number }[]).map((w) => w.name);
    expect(workloads).toContain("bench_classes.Suite.time_join(3, 'yy', <benchmarks.bench_classes.Thing object>)");
    const param = (ready['workloads'] as { name: string; param: number }[]).find(
      (w) => w.name === "bench_classes.Suite.track_len(3, 'yy', None)",
    )!.param;
    expect(await client.batch(1, 'bench_classes.Suite.track_len', { param })).toMatchObject({ ok: true, kind: 'track', value: 3 });
    const joined = await client.batch(2, 'bench_classes.Suite.time_join', { param, samples: 3 });
    expect(joined).toMatchObject({ ok: true, kind: 'time' });
    expect(joined['samples']).toHaveLength(3);
    const mem = await client.batch(3, 'bench_classes.Suite.mem_data', { param });
    expect(mem).toMatchObject({ ok: true, kind: 'memory' });
    expect(mem['value']).toBeGreaterThan(0);
    const peak = await client.batch(4, 'bench_classes.Suite.peakmem_data', { param });
    expect(peak).toMatchObject({ ok: true, kind: 'peakmemory' });
    expect(peak['value']).toBeGreaterThan(1_000_000);
    expect(await client.batch(5, 'bench_classes.Cached.track_size')).toMatchObject({ ok: true, value: 100 });
    const raw = await client.batch(6, 'bench_more.timeraw_import', { samples: 2 });
    expect(raw).toMatchObject({ ok: true, kind: 'time', number: 1 });
    expect(await client.batch(7, 'bench_more.Skipping.time_x', { param: 1 })).toMatchObject({
      ok: false,
      status: 'skipped',
      message: 'NotImplementedError in setup: two is not supported',
    });
    expect(await client.batch(8, 'bench_more.Skipping.time_x', { param: 0, samples: 1, number: 1, warmup: 0 })).toMatchObject({ ok: true });
    expect(await client.batch(9, 'bench_funcs.track_answer')).toMatchObject({ ok: true, value: 42 });
    expect(await client.ask({ id: 10, op: 'exit' })).toEqual({ id: 10, ok: true });
    expect(await client.exit()).toBe(0);
  });

  it('serves only the workloads --bench selects', async () => {
    const client = new ServeClient(suite(PARITY_SUITE), [], ['--bench', 'time_params\\(10,']);
    const ready = await client.next();
    expect(ready['workloads']).toEqual([
      { name: "bench_funcs.time_params(10, 'a')", benchmark: 'bench_funcs.time_params', param: 2 },
      { name: "bench_funcs.time_params(10, 'bc')", benchmark: 'bench_funcs.time_params', param: 3 },
    ]);
    expect(Object.keys(ready['benchmarks'] as object)).toEqual(['bench_funcs.time_params']);
    expect(await client.batch(1, 'bench_funcs.time_params', { param: 0 })).toMatchObject({ ok: false, status: 'unknown' });
    expect(await client.batch(2, 'bench_funcs.time_params', { param: 3, samples: 2 })).toMatchObject({ ok: true, kind: 'time' });
    client.proc.stdin.end();
    expect(await client.exit()).toBe(0);
  });
});
