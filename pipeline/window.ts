/**
 * Windows are half-open `[start, end)` intervals on `merged_at`, in UTC. A window that covers
 * exactly one calendar month is labelled `YYYY-MM`; any other is labelled `start..end` by date.
 * Pure functions only.
 */
export interface Window {
  /** inclusive, ISO 8601 UTC (`2025-04-01T00:00:00.000Z`) */
  readonly start: string;
  /** exclusive */
  readonly end: string;
  /** `2025-04`, or `2025-04-03..2025-04-10` */
  readonly label: string;
}

const MONTH_RE = /^(\d{4})-(0[1-9]|1[0-2])$/;
const DATE_RE = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/;

export function isMonth(text: string): boolean {
  return MONTH_RE.test(text);
}

export function monthWindow(month: string): Window {
  const m = MONTH_RE.exec(month);
  if (!m) throw new RangeError(`expected a month as YYYY-MM, got "${month}"`);
  const year = Number(m[1]);
  const index = Number(m[2]) - 1;
  const start = new Date(Date.UTC(year, index, 1));
  const end = new Date(Date.UTC(year, index + 1, 1));
  return { start: start.toISOString(), end: end.toISOString(), label: month };
}

/** The last full calendar month before `now` (the cron case). */
export function previousMonth(now: Date): string {
  const d = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 1));
  return monthOf(d.toISOString());
}

/** `YYYY-MM` of an ISO timestamp. */
export function monthOf(iso: string): string {
  return iso.slice(0, 7);
}

/** Parses a date or date-time; a bare date means midnight UTC. Returns null when invalid. */
export function parseInstant(text: string): Date | null {
  if (!DATE_RE.test(text)) return null;
  const normalized = text.length === 10 ? `${text}T00:00:00Z` : /[zZ]|[+-]\d{2}:?\d{2}$/.test(text) ? text : `${text}Z`;
  const d = new Date(normalized.replace(' ', 'T'));
  if (Number.isNaN(d.getTime())) return null;
  // Reject dates that JavaScript silently rolls over (2025-02-30).
  if (d.toISOString().slice(0, 10) !== text.slice(0, 10)) return null;
  return d;
}

export function rangeWindow(since: Date, until: Date): Window {
  if (!(since.getTime() < until.getTime())) throw new RangeError('the window is empty: --since must be before --until');
  const start = since.toISOString();
  const end = until.toISOString();
  const month = monthOf(start);
  const asMonth = monthWindow(month);
  if (asMonth.start === start && asMonth.end === end) return asMonth;
  const day = (iso: string) => (iso.endsWith('T00:00:00.000Z') ? iso.slice(0, 10) : iso);
  return { start, end, label: `${day(start)}..${day(end)}` };
}

export function inWindow(window: Window, iso: string): boolean {
  const t = Date.parse(iso);
  return t >= Date.parse(window.start) && t < Date.parse(window.end);
}

/** Normalizes any ISO 8601 timestamp to `YYYY-MM-DDTHH:MM:SS.sssZ`, so that text order is time order. */
export function normalizeInstant(iso: string): string {
  const t = Date.parse(iso);
  if (Number.isNaN(t)) throw new RangeError(`not a timestamp: "${iso}"`);
  return new Date(t).toISOString();
}

/** Every `YYYY-MM` that a window touches, in order. */
export function monthsOf(window: Window): string[] {
  const out: string[] = [];
  let month = monthOf(window.start);
  while (monthWindow(month).start < window.end) {
    out.push(month);
    const next = monthWindow(month).end;
    month = monthOf(next);
  }
  return out;
}
