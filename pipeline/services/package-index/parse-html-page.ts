import { Parser } from 'htmlparser2';
import { normalizeProjectName } from './distribution-filename.js';
import { isSafeFilename, resolveFileUrl, type IndexFile, type ProjectPage } from './index-page.js';

/**
 * PEP 503 HTML pages, read the way installers read them: every anchor is a link, its text the file
 * name (or, on the project list, the project name), its `href` the URL (relative to the page, or
 * to a `<base href>`), a `#<hash>=<hex>` fragment its hash, `data-requires-python` (entities
 * decoded) and `data-yanked` (PEP 592: present means yanked; its value, when not empty, is the
 * reason). HTML carries no upload time (PEP 700 added it to JSON only). The HTML itself (tags in
 * any case, attributes in any quoting, character references, comments, script and style content)
 * is htmlparser2's. Pure.
 */

interface Anchor {
  readonly attributes: Readonly<Record<string, string>>;
  readonly text: string;
}

interface Links {
  readonly anchors: readonly Anchor[];
  /** The `href` of the first `<base>` that has one. */
  readonly baseHref: string | null;
}

/** The anchors of a page (tag and attribute names lower case, entities decoded) and its `<base href>`. */
function linksOf(html: string): Links {
  const anchors: Anchor[] = [];
  let baseHref: string | null = null;
  let open: { attributes: Record<string, string>; text: string } | null = null;
  const parser = new Parser({
    onopentag(name, attributes) {
      if (name === 'a') open = { attributes, text: '' };
      else if (name === 'base' && baseHref === null && attributes['href']) baseHref = attributes['href'];
    },
    ontext(text) {
      if (open) open.text += text;
    },
    onclosetag(name) {
      if (name !== 'a' || !open) return;
      anchors.push({ attributes: open.attributes, text: open.text.trim() });
      open = null;
    },
  });
  parser.end(html);
  return { anchors, baseHref };
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
  const { anchors, baseHref } = linksOf(html);
  const base = baseHref ? (resolveFileUrl(baseHref, url) ?? url) : url;
  const files: IndexFile[] = [];
  for (const anchor of anchors) {
    const href = anchor.attributes['href'];
    if (!href) continue;
    const resolved = resolveFileUrl(href, base);
    if (resolved === null) continue;
    const filename = anchor.text || lastSegment(resolved);
    if (!isSafeFilename(filename)) continue;
    const yanked = anchor.attributes['data-yanked'];
    files.push({
      filename,
      url: resolved,
      hashes: fragmentHashes(href),
      requiresPython: anchor.attributes['data-requires-python'] || null,
      yanked: yanked === undefined ? false : yanked === '' ? true : yanked,
      uploadTime: null,
      size: null,
    });
  }
  return { name: normalizeProjectName(project), files, format: 'html' };
}

/** The project names of a PEP 503 project list (anchor texts). */
export function parseHtmlProjectList(html: string): string[] {
  return linksOf(html)
    .anchors.map((a) => a.text)
    .filter((t) => t.length > 0);
}
