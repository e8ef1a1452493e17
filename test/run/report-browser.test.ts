import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser } from 'playwright-core';
import { launchChromium } from '../helpers/chromium.js';
import { renderReport, type ReportData } from '../../pipeline/report/render.js';
import { tempDir } from '../helpers/index.js';

const data: ReportData = {
  month: '2025-04',
  generatedAt: '2025-05-02T03:17:00.000Z',
  funnel: [
    { repo: 'acme/fast', counts: { collected: 40, filtered: 9, classified: 4, built: 3, validated: 2, emitted: 2 } },
    { repo: 'acme/slow', counts: { collected: 12, filtered: 2, classified: 1, built: 1, validated: 0, emitted: 0 } },
  ],
  stages: [
    { stage: 'filter', done: 11, dropped: { 'negative-message': 30, 'no-core-files': 11 }, failed: {}, pending: 0 },
    {
      stage: 'validate',
      done: 2,
      dropped: { 'no-improvement': 1, 'snapshot-mismatch': 1 },
      failed: { 'docker-run-failed': 1 },
      pending: 0,
    },
  ],
  costs: [
    { stage: 'classify', durationMs: 42_000, llmRequests: 33, llmTokens: 120_000, llmCostUsd: 0.21 },
    { stage: 'synthesize', durationMs: 600_000, llmRequests: 4, llmTokens: 20_000, llmCostUsd: 0.05 },
  ],
  tasks: [
    {
      instanceId: 'acme__fast-12',
      repo: 'acme/fast',
      pullNumber: 12,
      title: 'PERF: vectorize <inner> loop',
      speedup: 3.2,
      improvedSpeedup: 6.1,
      workloads: 4,
      improvedWorkloads: 2,
      category: 'vectorization',
      difficulty: 'medium',
      folder: '../out/2025-04/acme__fast-12/',
    },
    {
      instanceId: 'acme__fast-19',
      repo: 'acme/fast',
      pullNumber: 19,
      title: 'cache parsed headers',
      speedup: 1.3,
      improvedSpeedup: 1.6,
      workloads: 12,
      improvedWorkloads: 3,
      category: 'caching',
      difficulty: 'easy',
      folder: '../out/2025-04/acme__fast-19/',
    },
  ],
};

describe('the report in headless Chromium', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(async () => browser?.close());

  it('renders the funnel, the charts with the right numbers, and links to the task folders', async () => {
    const dir = tempDir();
    const path = join(dir, 'report.html');
    writeFileSync(path, renderReport(data));
    const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
    const outside: string[] = [];
    page.on('request', (r) => {
      if (!r.url().startsWith('file:')) outside.push(r.url());
    });
    await page.goto(pathToFileURL(path).href);
    mkdirSync(join(dir, 'shots'), { recursive: true });
    const shot = join(dir, 'shots', 'report.png');
    await page.screenshot({ path: shot, fullPage: true });
    expect(existsSync(shot) && statSync(shot).size).toBeGreaterThan(10_000);
    expect(outside).toEqual([]);

    // Funnel table: per repository and totals.
    const cell = (repo: string, col: string) => page.locator(`#funnel tr[data-repo="${repo}"] [data-col="${col}"]`).innerText();
    expect(await cell('acme/fast', 'collected')).toBe('40');
    expect(await cell('acme/slow', 'built')).toBe('1');
    expect(await cell('(all)', 'collected')).toBe('52');
    expect(await cell('(all)', 'emitted')).toBe('2');
    // Funnel chart: one bar per column, with the totals, drawn with a width.
    const bars = await page.locator('svg[data-chart="funnel"] rect.bar').evaluateAll((els) =>
      els.map((e) => ({
        stage: e.getAttribute('data-stage'),
        count: Number(e.getAttribute('data-count')),
        width: e.getBoundingClientRect().width,
      })),
    );
    expect(bars.map((b) => [b.stage, b.count])).toEqual([
      ['collected', 52],
      ['filtered', 11],
      ['classified', 5],
      ['built', 4],
      ['validated', 2],
      ['emitted', 2],
    ]);
    expect(bars[0]!.width).toBeGreaterThan(bars[1]!.width);
    // Speedup histogram: 1.3 in 1.25–1.5 and 3.2 in 2–5.
    const speedBins = await page
      .locator('svg[data-chart="speedup-chart"] rect.bar')
      .evaluateAll((els) => Object.fromEntries(els.map((e) => [e.getAttribute('data-label'), Number(e.getAttribute('data-count'))])));
    expect(speedBins).toMatchObject({ '1.25–1.5': 1, '2–5': 1, '< 1': 0 });
    const workloadBins = await page
      .locator('svg[data-chart="workload-chart"] rect.bar')
      .evaluateAll((els) => Object.fromEntries(els.map((e) => [e.getAttribute('data-label'), Number(e.getAttribute('data-count'))])));
    expect(workloadBins).toMatchObject({ '3–4': 1, '10–19': 1 });
    // Cards, drop reasons, tasks with links, escaping.
    expect(await page.locator('#card-tasks b').innerText()).toBe('2');
    expect(await page.locator('#card-speedup b').innerText()).toBe('2.25×');
    expect(await page.locator('#stages tr[data-stage="validate"]').innerText()).toMatch(/snapshot-mismatch 1/);
    expect(await page.locator('#tasks a').evaluateAll((as) => as.map((a) => a.getAttribute('href')))).toEqual([
      '../out/2025-04/acme__fast-12/',
      '../out/2025-04/acme__fast-19/',
    ]);
    expect(await page.locator('#tasks tr[data-task="acme__fast-12"] td').nth(1).innerText()).toBe('PERF: vectorize <inner> loop');
    await page.close();
  });
});
