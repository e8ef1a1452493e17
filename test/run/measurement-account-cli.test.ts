import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadAccounts, loadBatchAccounts, loadValidation } from '../../cache/measurements.js';
import { openStore } from '../../cache/store.js';
import { ACCOUNT_SIDES, accountTotals, type MeasurementAccount } from '../../pipeline/concepts/measurement-account.js';
import { loadReportData } from '../../pipeline/report/load.js';
import { measurementTimeHtml } from '../../pipeline/report/render-account.js';
import { renderReport } from '../../pipeline/report/render.js';
import { runStage } from '../../pipeline/runner.js';
import { monthWindow } from '../../pipeline/window.js';
import { createValidateStage } from '../../stages/validate/index.js';
import { accountSumMs } from '../../stages/validate/harness/account.js';
import { runCli } from '../helpers/cli.js';
import { monthScope, testConfig, testContext } from '../helpers/context.js';
import { storeCandidate } from '../validate/stage/candidate.js';
import { FakeRunner } from '../validate/stage/fake-runner.js';

/**
 * The account of each measurement (issue 37) from validate to the user: validate (engine
 * perfmine, the harness workers scripted with real samples, answering as a harness without an
 * account would) stores it with the validation and per workload and side with the batches; the
 * real CLI's `perfmine status --stage validate --items` prints its sum, its sides and its heaviest
 * workloads (and `--json` gives it whole); the report has a table of it. The figures sum to the
 * measured wall time.
 */
const scratch = mkdtempSync(join(tmpdir(), 'perfmine-account-'));
const dbPath = join(scratch, 'perfmine.db');
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const FAST = { expert: { names: new Set(['benchmarks.TextSuite.time_divide_unicode_heavy']), factor: 0.5 } };
const KEY = 'acme/fastlib#101';
let account: MeasurementAccount;
let decision: string;

beforeAll(async () => {
  const db = openStore(dbPath);
  storeCandidate(db, { number: 101 });
  const ctx = testContext(db, { config: testConfig({ validate: { harness: { seed: 7, rounds: 4, adaptive: { looks: [] } } } }) });
  await runStage(
    ctx,
    createValidateStage(() => new FakeRunner(FAST)),
    monthScope('2025-04'),
  );
  const validation = loadValidation(db, KEY)!;
  account = validation.account!;
  decision = validation.decision;
  db.close();
}, 120_000);

describe('the account of a measurement, stored', () => {
  it('is kept with the validation, its parts summing to the wall time', () => {
    expect(account).toBeTruthy();
    expect(accountSumMs(account)).toBeCloseTo(account.wallMs, 3);
    // three workers opened, three fresh ones before each of rounds 2 to 4
    expect(account.workers.starts).toBe(3 + 3 * 3);
    for (const side of ACCOUNT_SIDES) expect(account.sides[side].batches).toBeGreaterThan(0);
    expect(account.heaviest.length).toBeGreaterThan(0);
  });

  it('is kept per workload and side with the batches, and those add up to the sides', () => {
    const db = openStore(dbPath, { readonly: true });
    const rows = loadBatchAccounts(db, KEY);
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.every((r) => r.account !== null)).toBe(true);
    for (const side of ACCOUNT_SIDES) {
      const batches = rows.filter((r) => r.side === side).reduce((n, r) => n + r.account!.batches, 0);
      expect(batches).toBe(account.sides[side].batches);
    }
    expect([...loadAccounts(db).keys()]).toEqual([KEY]);
    expect(loadAccounts(db, ['other/repo#1']).size).toBe(0);
    db.close();
  });
});

describe('perfmine status --stage validate --items', () => {
  it("prints each measured candidate's account under it", async () => {
    const r = await runCli(['status', '--db', dbPath, '--stage', 'validate', '--items']);
    expect(r.code).toBe(0);
    const lines = r.stdout.split('\n');
    const at = lines.findIndex((l) => l.includes(KEY));
    expect(at).toBeGreaterThanOrEqual(0);
    expect(lines[at + 1]).toMatch(
      /^ {9}measured \d+\.\d s: setup [\d.]+ s \(\d+%\), warm-up [\d.]+ s \(\d+%\), samples [\d.]+ s \(\d+%\), (selection [\d.]+ s \(\d+%\), )?overhead [\d.]+ s \(\d+%\); overhead: batches [\d.]+ s, 12 worker processes [\d.]+ s, driver [\d.]+ s$/,
    );
    expect(lines[at + 2]).toMatch(/^ {9}base \d+ batches: .*; expert \d+ batches: .*; calibration \d+ batches: /);
    expect(lines[at + 3]).toMatch(/^ {9}heaviest: benchmarks\./);
  });

  it('gives the account whole with --json, with its totals', async () => {
    const r = await runCli(['status', '--db', dbPath, '--stage', 'validate', '--items', '--json']);
    const items = (JSON.parse(r.stdout) as { items: { key: string; account?: Record<string, unknown> }[] }).items;
    const item = items.find((i) => i.key === KEY)!;
    expect(item.account).toMatchObject({ wallMs: account.wallMs, sides: account.sides, totals: accountTotals(account) });
  });

  it('prints no account for the stages that have none', async () => {
    const r = await runCli(['status', '--db', dbPath, '--stage', 'classify', '--items']);
    expect(r.stdout).not.toContain('measured');
  });
});

describe('the report', () => {
  it("has the month's measured candidates with the parts of their time, and the total", () => {
    const db = openStore(dbPath, { readonly: true });
    const data = loadReportData(db, monthWindow('2025-04'), { out: join(scratch, 'out'), reportPath: join(scratch, 'report.html') });
    db.close();
    expect(data.measurementTime).toEqual([{ key: KEY, decision, account }]);
    const html = renderReport(data);
    expect(html).toContain('<h2>Where the measurement time went</h2>');
    const row = new RegExp(`<tr data-candidate="${KEY.replace(/[#/]/g, (c) => `\\${c}`)}">(.*?)</tr>`).exec(html)![1]!;
    const ms = (col: string) => Number(new RegExp(`data-col="${col}" data-ms="([^"]+)"`).exec(row)![1]);
    expect(ms('wall')).toBeCloseTo(account.wallMs, 6);
    expect(ms('setup') + ms('warmup') + ms('samples') + ms('selection') + ms('overhead')).toBeCloseTo(account.wallMs, 3);
    expect(ms('batch-overhead') + ms('workers') + ms('driver')).toBeCloseTo(ms('overhead'), 6);
  });

  it('says side by side time when there is some, and nothing without measurements', () => {
    expect(measurementTimeHtml([])).toBe('');
    expect(measurementTimeHtml(undefined)).toBe('');
    const html = measurementTimeHtml([{ key: 'a/b#1', decision: 'no-improvement', account: { ...account, sideBySideMs: 1500 } }]);
    expect(html).toContain('Side by side (harness.mode duet) 1.5 s');
    expect(html).toContain('<th>all 1 measured</th>');
  });
});
