import { describe, expect, it } from 'vitest';
import { inWindow, monthWindow, monthsOf, parseInstant, previousMonth, rangeWindow } from '../../pipeline/window.js';
import { resolveScope } from '../../pipeline/cli/scope-options.js';
import { loadConfig } from '../../pipeline/config/load.js';
import { ConfigError } from '../../pipeline/errors.js';
import { tempDir } from '../helpers/index.js';

describe('windows are half-open [start, end) in UTC', () => {
  it('a month', () => {
    expect(monthWindow('2025-04')).toEqual({ start: '2025-04-01T00:00:00.000Z', end: '2025-05-01T00:00:00.000Z', label: '2025-04' });
    expect(monthWindow('2025-12').end).toBe('2026-01-01T00:00:00.000Z');
    expect(() => monthWindow('2025-13')).toThrow(/YYYY-MM/);
  });

  it('the cron default is the previous full calendar month', () => {
    expect(previousMonth(new Date('2026-11-21T15:00:00Z'))).toBe('2026-10');
    expect(previousMonth(new Date('2026-01-01T00:00:00Z'))).toBe('2025-12');
  });

  it('includes start, excludes end, and compares instants, not text', () => {
    const w = monthWindow('2025-04');
    expect(inWindow(w, '2025-04-01T00:00:00Z')).toBe(true);
    expect(inWindow(w, '2025-04-30T23:59:59Z')).toBe(true);
    expect(inWindow(w, '2025-05-01T00:00:00Z')).toBe(false);
    expect(inWindow(w, '2025-05-01T01:00:00+02:00')).toBe(true);
  });

  it('a range that is exactly a month is labelled as the month', () => {
    expect(rangeWindow(parseInstant('2025-04-01')!, parseInstant('2025-05-01')!).label).toBe('2025-04');
    expect(rangeWindow(parseInstant('2025-04-03')!, parseInstant('2025-04-10')!).label).toBe('2025-04-03..2025-04-10');
    expect(monthsOf(rangeWindow(parseInstant('2025-03-30')!, parseInstant('2025-05-02')!))).toEqual(['2025-03', '2025-04', '2025-05']);
  });

  it('rejects impossible dates', () => {
    expect(parseInstant('2025-02-30')).toBeNull();
    expect(parseInstant('yesterday')).toBeNull();
    expect(parseInstant('2025-04-01T10:00:00Z')?.toISOString()).toBe('2025-04-01T10:00:00.000Z');
  });

  it('scope flags collect every problem', () => {
    const { config } = loadConfig({ env: {}, cwd: tempDir() });
    expect(resolveScope({}, config, new Date('2026-11-21T00:00:00Z')).window.label).toBe('2026-10');
    try {
      resolveScope({ month: '2025-04', since: '2025-04-01', pr: ['x'], repo: ['bad'] }, config);
      expect.unreachable();
    } catch (e) {
      expect((e as ConfigError).issues).toEqual([
        '--month: give either --month or --since/--until, not both',
        '--repo: expected owner/name, got "bad"',
        '--pr: expected a pull request number, got "x"',
      ]);
    }
  });
});
