import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../../helpers/cli.js';
import { readReference, RICH_DIR } from '../../concepts/asv/reference.js';
import { invocationFile } from '../invocation-files.js';

/**
 * `perfmine compare` on directories of per-invocation results files, as the validate stage keeps
 * them. The directories are written from the real rich #3399 r4x4 runs (four pairs: the default
 * rule needs three): invocation i of a commit holds samples [20i, 20i+20) with its median as the
 * result and its own started_at times.
 */
const scratch = mkdtempSync(join(tmpdir(), 'perfmine-compare-dirs-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const R4 = `${RICH_DIR}r4x4/`;
const file = (run: string, commit: string) => `${R4}${run}/${commit}-existing-py_usr_bin_python3.json`;

/**
 * A directory of invocations named so that name order is the reverse of time order: the command
 * must order them by the started_at times inside.
 */
function invocationDir(name: string, source: string, count: number): string {
  const dir = join(scratch, name);
  mkdirSync(dir, { recursive: true });
  const text = readReference(source);
  for (let i = 0; i < count; i++) writeFileSync(join(dir, `${String.fromCharCode(122 - i)}-invocation.json`), invocationFile(text, i, 20));
  return dir;
}

const dirs = {
  base: invocationDir('base', file('ab', '349042fd'), 4),
  expert: invocationDir('expert', file('ab', '577def22'), 4),
  first: invocationDir('aa1', file('aa1', '349042fd'), 4),
  second: invocationDir('aa2', file('aa2', '349042fd'), 4),
};
writeFileSync(join(dirs.base, 'benchmarks.json'), readReference(`${R4}ab/benchmarks.json`));

/** The paired section: everything from its first line on. */
function pairedSection(stdout: string): string {
  return stdout.slice(stdout.indexOf('perfmine paired verdict:'));
}

describe('perfmine compare with per-invocation sides', () => {
  it('prints asv on pooled samples and the paired verdict beside it, for --split-samples files as for directories', async () => {
    const fromFiles = await runCli([
      'compare',
      file('ab', '349042fd'),
      file('ab', '577def22'),
      '--split-samples',
      '20',
      '--calibration',
      file('aa1', '349042fd'),
      file('aa2', '349042fd'),
    ]);
    expect(fromFiles.code).toBe(0);
    expect(fromFiles.stdout).toContain('paired: 0 improved, 0 worse, 32 unchanged, 0 incomparable');
    expect(fromFiles.stdout).toContain('asv (pooled samples): 0 improved, 15 worse');
    expect(fromFiles.stdout).toContain(
      "false positives on base/base (the same rule, leave one workload out): 0 of 32 (0.0%); asv's pooled rule on the same base/base: 11 improved, 0 worse",
    );
    expect(fromFiles.stdout).toMatch(/minimum detectable speedup: median 1\.\d+, from 1\.\d+ to \d\.\d+/);

    const fromDirs = await runCli(['compare', dirs.base, dirs.expert, '--calibration', dirs.first, dirs.second]);
    expect(fromDirs.code).toBe(0);
    expect(pairedSection(fromDirs.stdout)).toBe(pairedSection(fromFiles.stdout));
    // units come from benchmarks.json inside the base directory
    expect(fromDirs.stdout).toMatch(/\| \+ +\| [\d.]+±[\d.]+[mμ]?s/);
  });

  it('answers --json with both verdicts per row and the protocol numbers', async () => {
    const r = await runCli(['compare', dirs.base, dirs.expert, '--calibration', dirs.first, dirs.second, '--json']);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as {
      pooled: boolean;
      base: { files: string[] };
      paired: {
        pairs: number;
        threshold: number;
        counts: Record<string, number>;
        calibration: { calibrated: boolean; falsePositives: { rate: number } };
      };
      benchmarks: {
        name: string;
        mark: string;
        paired: { change: string; pairRatios: number[]; pValue: number | null; mds: number | null; asvPValue: number | null };
      }[];
    };
    expect(out.pooled).toBe(true);
    // time order (started_at inside the files), not name order
    expect(out.base.files.map((f) => f.split('/').at(-1))).toEqual([
      'z-invocation.json',
      'y-invocation.json',
      'x-invocation.json',
      'w-invocation.json',
    ]);
    expect(out.paired).toMatchObject({
      pairs: 4,
      counts: { improved: 0, worsened: 0 },
      calibration: { calibrated: true, falsePositives: { rate: 0 } },
    });
    expect(out.benchmarks).toHaveLength(32);
    expect(out.benchmarks.filter((b) => b.mark === '+')).toHaveLength(15);
    for (const b of out.benchmarks) {
      expect(b.paired.change).toBe('unchanged');
      expect(b.paired.pairRatios).toHaveLength(4);
      expect(b.paired.pValue).toBeGreaterThan(0);
      expect(b.paired.asvPValue).toBeGreaterThan(0);
      expect(b.paired.mds).toBeGreaterThan(1.05);
    }
  });

  it('says the verdict is uncalibrated without --calibration, and refuses a --calibration of one path', async () => {
    const r = await runCli(['compare', dirs.base, dirs.expert]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('calibration: none (0 base/base pairs; at least 2 needed): no bias allowance, no false-positive rate');
    const bad = await runCli(['compare', dirs.base, dirs.expert, '--calibration', dirs.first]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--calibration: expected two paths');
  });
});
