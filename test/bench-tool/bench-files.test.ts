import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  BENCH_COMMAND_PATH,
  BENCH_SCRIPT,
  BENCH_SCRIPTS,
  BENCH_WRAPPER,
  benchTarEntries,
  HARNESS_SCRIPT,
} from '../../pipeline/services/environments/harness-files.js';
import { BENCH_FEATURES } from '../../tasks/folder/index.js';
import { packEntries, unpackToMap } from '../../pipeline/services/tar.js';

/** perfmine-bench's files for an image: where they go, the command, task.json, and what they import. */
describe('perfmine-bench files for an image', () => {
  it('packs the tool and the harness under perfmine/bench/, the command, and task.json when given', async () => {
    const files = await unpackToMap(
      packEntries(
        benchTarEntries({ baseCommit: 'a'.repeat(40), asvConfig: 'bench/asv.conf.json', python: 'python3.11', protocol: { rounds: 6 } }),
      ),
    );
    expect([...files.keys()].sort()).toEqual(
      [
        'perfmine/bench/perfmine_bench.py',
        'perfmine/bench/perfmine_bench_account.py',
        'perfmine/bench/perfmine_bench_format.py',
        'perfmine/bench/perfmine_bench_interleave.py',
        'perfmine/bench/perfmine_bench_stats.py',
        'perfmine/bench/perfmine_harness.py',
        'perfmine/bench/task.json',
        BENCH_COMMAND_PATH.slice(1),
      ].sort(),
    );
    expect(files.get('perfmine/bench/perfmine_harness.py')!.equals(readFileSync(HARNESS_SCRIPT))).toBe(true);
    expect(files.get('perfmine/bench/perfmine_bench.py')!.equals(readFileSync(BENCH_SCRIPT))).toBe(true);
    expect(files.get(BENCH_COMMAND_PATH.slice(1))!.toString()).toBe(BENCH_WRAPPER);
    expect(BENCH_WRAPPER).toBe('#!/bin/sh\nexec "${PERFMINE_PYTHON:-python3}" /perfmine/bench/perfmine_bench.py "$@"\n');
    expect(JSON.parse(files.get('perfmine/bench/task.json')!.toString())).toEqual({
      base_commit: 'a'.repeat(40),
      asv_config: 'bench/asv.conf.json',
      build_script: '/perfmine/docker_build.sh',
      python: 'python3.11',
      protocol: { rounds: 6 },
      features: [...BENCH_FEATURES],
    });
    const modes = new Map(benchTarEntries().map((e) => [e.name, e.mode]));
    expect(modes.get(BENCH_COMMAND_PATH.slice(1))).toBe(0o755);
    expect(modes.has('perfmine/bench/task.json')).toBe(false);
  });

  it('imports nothing but the standard library and its own modules, and its help names the commands', () => {
    const text = BENCH_SCRIPTS.map((f) => readFileSync(f, 'utf8')).join('\n');
    const own = new Set([
      'perfmine_harness',
      'perfmine_bench_stats',
      'perfmine_bench_interleave',
      'perfmine_bench_format',
      'perfmine_bench_account',
    ]);
    const stdlib = new Set([
      'argparse',
      'itertools',
      'json',
      'math',
      'os',
      'pwd',
      're',
      'select',
      'shutil',
      'signal',
      'subprocess',
      'sys',
      'tempfile',
      'time',
    ]);
    const imports = [...text.matchAll(/^(?:import|from) (\w+)/gm)].map((m) => m[1]!).filter((m) => !own.has(m) && !stdlib.has(m));
    expect(imports.filter((m) => m !== 'importlib')).toEqual([]); // importlib: in the import check it runs in the image
    const help = spawnSync('python3', [BENCH_SCRIPT, '--help'], { encoding: 'utf8' });
    expect(help.status).toBe(0);
    for (const command of ['list', 'run', 'compare']) expect(help.stdout).toContain(command);
    const usage = spawnSync('python3', [BENCH_SCRIPT], { encoding: 'utf8' });
    expect(usage.status).toBe(2);
  });
});
