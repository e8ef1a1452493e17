import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeSuite, ServeClient, writeSuite } from './harness-fixture.js';
import { CONFIG } from './suites.js';

/**
 * A restart that names benchmarks: the fresh worker imports the package and the modules holding
 * them only (as asv_runner imports one benchmark's module in each of its processes), so a module
 * that builds large inputs at import is not paid for again once no workload of it is measured.
 */

/** Every module appends its name to the file $IMPORTS_LOG names when it is imported. */
const logged = (name: string) => `import os
with open(os.environ["IMPORTS_LOG"], "a") as _f:
    _f.write(${JSON.stringify(name)} + "\\n")
`;

const SUITE: Record<string, string> = {
  'asv.conf.json': CONFIG,
  'benchmarks/__init__.py': logged('package'),
  'benchmarks/light.py': `${logged('light')}
def time_light():
    sum(range(100))

def time_exits():
    os._exit(7)
`,
  'benchmarks/heavy.py': `${logged('heavy')}
import time
time.sleep(0.25)  # a module that builds large inputs at import

def time_heavy():
    sum(range(100))
`,
  'benchmarks/sub/__init__.py': logged('sub'),
  'benchmarks/sub/deep.py': `${logged('sub.deep')}
class Deep:
    params = [1, 2]

    def time_deep(self, n):
        sum(range(100 * n))
`,
};

describe('serve: a restart that names the benchmarks still measured', () => {
  let dir = '';
  let client: ServeClient;
  let id = 0;
  const log = () => join(dir, 'imports.log');
  const imports = () => readFileSync(log(), 'utf8').trim().split('\n');
  const fast = { samples: 1, number: 1, warmup: 0 };

  beforeAll(async () => {
    dir = writeSuite(SUITE);
    client = new ServeClient(dir, [], [], { ...process.env, IMPORTS_LOG: log() });
    expect(await client.next()).toMatchObject({ event: 'ready' });
  });
  afterAll(() => {
    client.proc.stdin.end();
    removeSuite(dir);
  });

  it("imports the whole suite at first, and says each benchmark's module and each module's import time", async () => {
    expect(imports().sort()).toEqual(['heavy', 'light', 'package', 'sub', 'sub.deep']);
    const ready = JSON.parse(client.rawStdout[0]!) as Record<string, Record<string, unknown>>;
    expect(ready['module_of']).toEqual({
      'heavy.time_heavy': 'benchmarks.heavy',
      'light.time_exits': 'benchmarks.light',
      'light.time_light': 'benchmarks.light',
      'sub.deep.Deep.time_deep': 'benchmarks.sub.deep',
    });
    const seconds = ready['module_import_seconds']!;
    expect(Object.keys(seconds).sort()).toEqual([
      'benchmarks',
      'benchmarks.heavy',
      'benchmarks.light',
      'benchmarks.sub',
      'benchmarks.sub.deep',
    ]);
    // heavy.py sleeps at import: its own time, not its parent's
    expect(seconds['benchmarks.heavy']).toBeGreaterThanOrEqual(0.2);
    expect(seconds['benchmarks']).toBeLessThan(0.2);
  });

  it("imports only the package and the named benchmarks' modules in the fresh worker", async () => {
    const before = imports().length;
    const named = ['light.time_exits', 'light.time_light', 'sub.deep.Deep.time_deep'];
    const answer = await client.ask({ id: ++id, op: 'restart', benchmarks: named });
    expect(answer).toMatchObject({ id, ok: true, import_seconds: expect.any(Number) });
    expect(imports().slice(before).sort()).toEqual(['light', 'package', 'sub', 'sub.deep']);
    expect(await client.batch(++id, 'light.time_light', fast)).toMatchObject({ ok: true });
    expect(await client.batch(++id, 'sub.deep.Deep.time_deep', { ...fast, param: 1 })).toMatchObject({ ok: true });
  });

  it('keeps to those modules when a worker crashes and a fresh one takes its place', async () => {
    expect(await client.batch(++id, 'light.time_exits', fast)).toMatchObject({ ok: false, status: 'crashed' });
    const before = imports().length;
    expect(await client.batch(++id, 'light.time_light', fast)).toMatchObject({ ok: true });
    expect(imports().slice(before).sort()).toEqual(['light', 'package', 'sub', 'sub.deep']);
  });

  it('answers unknown for a benchmark the restart left out, and for a restart naming one', async () => {
    expect(await client.batch(++id, 'heavy.time_heavy', fast)).toMatchObject({
      ok: false,
      status: 'unknown',
      message: expect.stringContaining('heavy.time_heavy is not served'),
    });
    expect(await client.ask({ id: ++id, op: 'restart', benchmarks: ['heavy.time_heavy'] })).toMatchObject({
      ok: false,
      status: 'unknown',
      message: expect.stringContaining('heavy.time_heavy'),
    });
    expect(await client.ask({ id: ++id, op: 'restart', benchmarks: [] })).toMatchObject({ ok: false, status: 'unknown' });
  });

  it('narrows further at a later restart, and a restart without names keeps the last ones', async () => {
    const before = imports().length;
    expect(await client.ask({ id: ++id, op: 'restart', benchmarks: ['light.time_light'] })).toMatchObject({ ok: true });
    expect(imports().slice(before).sort()).toEqual(['light', 'package']);
    const narrowed = imports().length;
    expect(await client.ask({ id: ++id, op: 'restart' })).toMatchObject({ ok: true });
    expect(imports().slice(narrowed).sort()).toEqual(['light', 'package']);
    expect(await client.batch(++id, 'sub.deep.Deep.time_deep', fast)).toMatchObject({ ok: false, status: 'unknown' });
  });
});
