/**
 * Content negotiation of the simple API (PEP 691): the serialization a request gets. Pure.
 *
 * The `?format=` parameter, when it names one of the three content types, wins. Otherwise the
 * `Accept` header decides: each content type takes the quality of the most specific range that
 * matches it (`latest` stands for `v1`); the highest quality wins, and among equals a type the
 * client named outright beats one matched by a wildcard, JSON before the v1 HTML type before
 * `text/html`. A request that names none (no header, `*\/*`, `text/*`) gets `text/html`, as
 * PyPI answers browsers and old clients. Nothing acceptable: null (answer 406).
 */

export type PageFormat = 'json' | 'html' | 'text-html';

export const CONTENT_TYPES: Readonly<Record<PageFormat, string>> = {
  json: 'application/vnd.pypi.simple.v1+json',
  html: 'application/vnd.pypi.simple.v1+html',
  'text-html': 'text/html',
};

const ALIASES: Readonly<Record<string, PageFormat>> = {
  'application/vnd.pypi.simple.v1+json': 'json',
  'application/vnd.pypi.simple.latest+json': 'json',
  'application/vnd.pypi.simple.v1+html': 'html',
  'application/vnd.pypi.simple.latest+html': 'html',
  'text/html': 'text-html',
};

/** Server preference among equals, best first. */
const PREFERENCE: readonly PageFormat[] = ['json', 'html', 'text-html'];

interface Range {
  readonly type: string;
  readonly q: number;
}

function rangesOf(accept: string): Range[] {
  const ranges: Range[] = [];
  for (const part of accept.split(',')) {
    const [type, ...params] = part.split(';').map((s) => s.trim());
    if (!type) continue;
    let q = 1;
    for (const p of params) {
      const m = /^q\s*=\s*([0-9.]+)$/i.exec(p);
      if (m) q = Math.min(1, Math.max(0, Number(m[1])));
    }
    ranges.push({ type: type.toLowerCase(), q: Number.isNaN(q) ? 0 : q });
  }
  return ranges;
}

/** The quality and specificity (2 exact, 1 `type/*`, 0 `*\/*`) of the best match of `format`, or null. */
function matchOf(format: PageFormat, ranges: readonly Range[]): { q: number; specificity: number } | null {
  const full = CONTENT_TYPES[format];
  const major = full.split('/')[0]!;
  let best: { q: number; specificity: number } | null = null;
  for (const r of ranges) {
    const specificity = ALIASES[r.type] === format ? 2 : r.type === `${major}/*` ? 1 : r.type === '*/*' ? 0 : -1;
    if (specificity < 0) continue;
    if (!best || specificity > best.specificity) best = { q: r.q, specificity };
  }
  return best;
}

export function chooseFormat(accept: string | undefined, formatParam: string | null): PageFormat | null {
  const forced = formatParam === null ? undefined : ALIASES[formatParam.trim().toLowerCase()];
  if (forced) return forced;
  const ranges = rangesOf(accept === undefined || accept.trim() === '' ? '*/*' : accept);
  let chosen: { format: PageFormat; q: number; exact: boolean } | null = null;
  for (const format of PREFERENCE) {
    const match = matchOf(format, ranges);
    if (!match || match.q <= 0) continue;
    const exact = match.specificity === 2;
    if (!chosen || match.q > chosen.q || (match.q === chosen.q && exact && !chosen.exact)) chosen = { format, q: match.q, exact };
  }
  if (chosen && !chosen.exact) {
    // Only wildcards matched: the legacy type, when the wildcards allow it as well as the chosen one.
    const legacy = matchOf('text-html', ranges);
    if (legacy && legacy.q >= chosen.q) return 'text-html';
  }
  return chosen?.format ?? null;
}
