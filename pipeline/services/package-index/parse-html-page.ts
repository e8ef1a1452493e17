import { normalizeProjectName } from './distribution-filename.js';
import { isSafeFilename, resolveFileUrl, type IndexFile, type ProjectPage } from './index-page.js';

/**
 * PEP 503 HTML pages, read the way installers read them: every anchor is a link, its text the file
 * name (or, on the project list, the project name), its `href` the URL (relative to the page, or
 * to a `<base href>`), a `#<hash>=<hex>` fragment its hash, `data-requires-python` (entities
 * decoded) and `data-yanked` (PEP 592: present means yanked; its value, when not empty, is the
 * reason). HTML carries no upload time (PEP 700 added it to JSON only). Pure.
 */

const NAMED_ENTITIES: Readonly<Record<string, string>> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0' };

/** Decodes HTML character references (named ones above, decimal and hex). */
export function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#[0-9]+|[a-z]+);/gi, (whole, ref: string) => {
    if (ref[0] === '#') {
      const code = ref[1] === 'x' || ref[1] === 'X' ? parseInt(ref.slice(2), 16) : parseInt(ref.slice(1), 10);
      return Number.isFinite(code) && code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    }
    return NAMED_ENTITIES[ref.toLowerCase()] ?? whole;
  });
}

interface Anchor {
  readonly attributes: ReadonlyMap<string, string>;
  readonly text: string;
}

function attributesOf(source: string): Map<string, string> {
  const attributes = new Map<string, string>();
  const re = /([^\s=/>"']+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+)))?/g;
  for (let m = re.exec(source); m !== null; m = re.exec(source)) {
    const name = m[1]!.toLowerCase();
    if (!attributes.has(name)) attributes.set(name, decodeEntities(m[2] ?? m[3] ?? m[4] ?? ''));
  }
  return attributes;
}

function anchorsOf(html: string): Anchor[] {
  const anchors: Anchor[] = [];
  const re = /<a\b([^>]*)>([\s\S]*?)<\/a\s*>/gi;
  for (let m = re.exec(html); m !== null; m = re.exec(html)) {
    anchors.push({ attributes: attributesOf(m[1]!), text: decodeEntities(m[2]!.replace(/<[^>]*>/g, '')).trim() });
  }
  return anchors;
}

/** The URL relative links of the page resolve against: its `<base href>` when it has one. */
function baseUrlOf(html: string, pageUrl: string): string {
  const m = /<base\b([^>]*)>/i.exec(html);
  const href = m ? attributesOf(m[1]!).get('href') : undefined;
  return href ? (resolveFileUrl(href, pageUrl) ?? pageUrl) : pageUrl;
}

/** The `#name=hex` fragment of a link as a hashes record. */
function fragmentHashes(href: string): Record<string, string> {
  const hash = href.indexOf('#');
  if (hash < 0) return {};
  const m = /^([a-z0-9_]+)=([0-9a-f]+)$/i.exec(href.slice(hash + 1));
  return m ? { [m[1]!.toLowerCase()]: m[2]!.toLowerCase() } : {};
}

function lastSegment(url: string): string {
  const segment = new URL(url).pathname.split('/').pop() ?? '';
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** A PEP 503 project page of `project` at `url`. */
export function parseHtmlProjectPage(html: string, url: string, project: string): ProjectPage {
  const base = baseUrlOf(html, url);
  const files: IndexFile[] = [];
  for (const anchor of anchorsOf(html)) {
    const href = anchor.attributes.get('href');
    if (!href) continue;
    const resolved = resolveFileUrl(href, base);
    if (resolved === null) continue;
    const filename = anchor.text || lastSegment(resolved);
    if (!isSafeFilename(filename)) continue;
    const yanked = anchor.attributes.get('data-yanked');
    files.push({
      filename,
      url: resolved,
      hashes: fragmentHashes(href),
      requiresPython: anchor.attributes.get('data-requires-python') || null,
      yanked: yanked === undefined ? false : yanked === '' ? true : yanked,
      uploadTime: null,
      size: null,
    });
  }
  return { name: normalizeProjectName(project), files, format: 'html' };
}

/** The project names of a PEP 503 project list (anchor texts). */
export function parseHtmlProjectList(html: string): string[] {
  return anchorsOf(html)
    .map((a) => a.text)
    .filter((t) => t.length > 0);
}
