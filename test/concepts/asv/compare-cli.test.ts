import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { MARKS } from '../../../pipeline/concepts/asv/index.js';
import { BIN } from '../../helpers/cli.js';
import { NETWORKX_BASE, NETWORKX_DIR, NETWORKX_HEAD, readReference } from './reference.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

function perfmine(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { cwd: ROOT, env: { ...process.env, NO_COLOR: '1' } }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

/** (mark, name) of every row of a printed asv table. */
function markedNames(text: string): [string, string][] {
  return text
    .split('\n')
    .filter((l) => l.startsWith('|') && !l.startsWith('| Change') && !l.startsWith('|---'))
    .map((l) => {
      const cells = l.split('|').map((c) => c.trim());
      return [cells[1] === '' ? ' ' : cells[1]!, cells[5]!];
    });
}

const scratch = mkdtempSync(join(tmpdir(), 'perfmine-compare-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

interface JsonRow {
  name: string;
  mark: string;
  before: number | null;
  after: number | null;
  ratio: number | null;
  tilde: boolean;
  unit: string | null;
}

describe('perfmine compare (the command)', () => {
  it('prints the table of --only-changed with the marks real asv printed', async () => {
    const r = await perfmine('compare', NETWORKX_BASE, NETWORKX_HEAD, '--only-changed');
    expect(r.code).toBe(0);
    expect(markedNames(r.stdout)).toEqual(markedNames(readReference(`${NETWORKX_DIR}compare_only_changed.txt`)));
    expect(r.stdout.split('\n')[0]).toMatch(
      /^\| Change {3}\| Before \[aab03808\] +\| After \[3d0bb212\] +\| +Ratio \| Benchmark \(Parameter\) +\|$/,
    );
  });

  it('prints all rows with a title, as asv compare does, taking units from benchmarks.json beside the files', async () => {
    const r = await perfmine('compare', NETWORKX_BASE, NETWORKX_HEAD);
    expect(r.code).toBe(0);
    expect(r.stdout.startsWith('\nAll benchmarks:\n\n| Change')).toBe(true);
    expect(markedNames(r.stdout)).toEqual(markedNames(readReference(`${NETWORKX_DIR}compare.txt`)));
    expect(r.stdout).toContain('19.6±0.6μs');
  });

  it('answers --json with a benchmarks array: name, mark, before, after, ratio, tilde', async () => {
    const r = await perfmine('compare', NETWORKX_BASE, NETWORKX_HEAD, '--json');
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as { benchmarks: JsonRow[]; factor: number };
    expect(out.factor).toBe(1.1);
    expect(out.benchmarks).toHaveLength(28);
    const printed = new Map(markedNames(readReference(`${NETWORKX_DIR}compare.txt`)).map(([mark, name]) => [name, mark]));
    for (const row of out.benchmarks) {
      expect(MARKS).toContain(row.mark);
      expect(row.mark).toBe(printed.get(row.name));
      expect(typeof row.before).toBe('number');
      expect(row.ratio).toBeCloseTo(row.after! / row.before!, 12);
      expect(typeof row.tilde).toBe('boolean');
      expect(row.unit).toBe('seconds');
    }
    expect(out.benchmarks.filter((b) => b.tilde).length).toBe(16);
  });

  it('with --only-changed --json lists only the changed rows', async () => {
    const r = await perfmine('compare', NETWORKX_BASE, NETWORKX_HEAD, '--only-changed', '--json');
    const out = JSON.parse(r.stdout) as { benchmarks: JsonRow[] };
    expect(out.benchmarks.map((b) => b.mark)).toEqual(['-', '-', '-', '-']);
  });

  it('finds benchmarks.json one directory up (asv layout) and works without one', async () => {
    const asvLayout = join(scratch, 'results');
    mkdirSync(join(asvLayout, 'asvlab'), { recursive: true });
    copyFileSync(NETWORKX_BASE, join(asvLayout, 'asvlab', 'base.json'));
    copyFileSync(NETWORKX_HEAD, join(asvLayout, 'asvlab', 'head.json'));
    copyFileSync(`${NETWORKX_DIR}benchmarks.json`, join(asvLayout, 'benchmarks.json'));
    const withUnits = await perfmine('compare', join(asvLayout, 'asvlab', 'base.json'), join(asvLayout, 'asvlab', 'head.json'), '--json');
    expect((JSON.parse(withUnits.stdout) as { benchmarks: JsonRow[] }).benchmarks[0]!.unit).toBe('seconds');

    const bare = join(scratch, 'bare');
    mkdirSync(join(bare, 'x'), { recursive: true });
    copyFileSync(NETWORKX_BASE, join(bare, 'x', 'base.json'));
    copyFileSync(NETWORKX_HEAD, join(bare, 'x', 'head.json'));
    const noUnits = await perfmine('compare', join(bare, 'x', 'base.json'), join(bare, 'x', 'head.json'));
    expect(noUnits.code).toBe(0);
    // without units asv prints json.dumps(value) and the error to 2 significant digits
    expect(noUnits.stdout).toContain('| 0.0014558729499981383±0.00034  |');
    expect(noUnits.stdout).not.toContain('μs');
    expect(markedNames(noUnits.stdout)).toEqual(markedNames(readReference(`${NETWORKX_DIR}compare.txt`)));
  });

  it('applies --factor and --no-stats', async () => {
    const strict = await perfmine('compare', NETWORKX_BASE, NETWORKX_HEAD, '--factor', '1.6', '--only-changed', '--json');
    expect((JSON.parse(strict.stdout) as { benchmarks: JsonRow[] }).benchmarks.map((b) => b.name)).toEqual([
      "benchmark_algorithms.AlgorithmBenchmarks.time_connected_components('Erdos Renyi (100, 0.9)')",
    ]);
    const noStats = await perfmine('compare', NETWORKX_BASE, NETWORKX_HEAD, '--no-stats', '--only-changed', '--json');
    expect((JSON.parse(noStats.stdout) as { benchmarks: JsonRow[] }).benchmarks.length).toBeGreaterThan(4);
  });

  it('exits 2 on unreadable input, naming the file (and the field)', async () => {
    const missing = await perfmine('compare', join(scratch, 'nope.json'), NETWORKX_HEAD);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('nope.json: cannot read: no such file');

    const bad = join(scratch, 'future.json');
    writeFileSync(bad, readReference(NETWORKX_HEAD).replace('"version": 2}', '"version": 3}'));
    const future = await perfmine('compare', NETWORKX_BASE, bad);
    expect(future.code).toBe(2);
    expect(future.stderr).toContain('future.json: version: unknown schema version 3');

    const badFactor = await perfmine('compare', NETWORKX_BASE, NETWORKX_HEAD, '--factor', '-1');
    expect(badFactor.code).toBe(2);
    expect(badFactor.stderr).toContain('--factor');
  });
});
