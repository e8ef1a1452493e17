import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { loadValidation, loadWorkloadVerdicts } from '../../../cache/measurements.js';
import { openStore } from '../../../cache/store.js';
import { runStage } from '../../../pipeline/runner.js';
import { exportInvocations } from '../../../stages/validate/export-invocations.js';
import { createValidateStage } from '../../../stages/validate/index.js';
import { runCli } from '../../helpers/cli.js';
import { monthScope, testConfig, testContext } from '../../helpers/context.js';
import { storeCandidate } from './candidate.js';
import { FakeRunner } from './fake-runner.js';

const scratch = mkdtempSync(join(tmpdir(), 'perfmine-export-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

it("the invocations validate kept, exported, give `perfmine compare` the stage's own verdicts", async () => {
  const db = openStore(':memory:');
  const { key } = storeCandidate(db);
  const fast = new Set(['benchmarks.TextSuite.time_fit', 'benchmarks.StyleSuite.time_style_add']);
  await runStage(
    testContext(db, { config: testConfig({ validate: { engine: 'asv' } }) }),
    createValidateStage(() => new FakeRunner({ expert: { names: fast, factor: 0.5 } })),
    monthScope('2025-04'),
  );
  const paths = exportInvocations(db, key, scratch);
  expect(paths).toHaveLength(14);
  const stored = loadWorkloadVerdicts(db, key);
  const validation = loadValidation(db, key)!;
  db.close();

  const r = await runCli([
    'compare',
    join(scratch, 'base'),
    join(scratch, 'expert'),
    '--calibration',
    join(scratch, 'calibration-first'),
    join(scratch, 'calibration-second'),
    '--json',
  ]);
  expect(r.code).toBe(0);
  const out = JSON.parse(r.stdout) as {
    paired: { threshold: number; machineFactors: number[] };
    benchmarks: { name: string; mark: string; paired: { change: string; normalizedMedian: number } }[];
  };
  expect(out.paired.threshold).toBeCloseTo(validation.threshold!, 12);
  expect(out.paired.machineFactors.map((f) => f.toFixed(12))).toEqual(validation.machineFactors.map((f) => f.toFixed(12)));
  const byName = new Map(out.benchmarks.map((b) => [b.name, b]));
  for (const w of stored) {
    expect(byName.get(w.workload)!.paired.change, w.workload).toBe(w.paired.change);
    expect(byName.get(w.workload)!.mark, w.workload).toBe(w.asv.mark);
  }
  expect(
    stored
      .filter((w) => w.paired.change === 'improved')
      .map((w) => w.workload)
      .sort(),
  ).toEqual([...fast].sort());
});
