import { parseDistributionFilename } from './distribution-filename.js';
import { preferredHash, type IndexFile, type ProjectPage } from './index-page.js';
import { CONTENT_TYPES, type PageFormat } from './negotiate.js';

/**
 * Project pages and project lists in either serialization of the simple API, with each file's URL
 * given by the caller (the time machine points them at itself). JSON is API version 1.1 (PEP 700:
 * `versions`, `size`, `upload-time`) when every file's size is known, else 1.0 (sizes and
 * `versions` left out, upload times kept). HTML is PEP 503 with PEP 592's `data-yanked` and the
 * preferred hash as the URL fragment. Pure.
 */

export interface RenderedPage {
  readonly contentType: string;
  readonly body: string;
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

function contentTypeOf(format: PageFormat): string {
  return format === 'json' ? CONTENT_TYPES.json : `${CONTENT_TYPES[format]}; charset=utf-8`;
}

function jsonFile(file: IndexFile, url: string, withSize: boolean): Record<string, unknown> {
  return {
    filename: file.filename,
    url,
    hashes: file.hashes,
    ...(file.requiresPython === null ? {} : { 'requires-python': file.requiresPython }),
    ...(file.yanked === false ? {} : { yanked: file.yanked }),
    ...(withSize && file.size !== null ? { size: file.size } : {}),
    ...(file.uploadTime === null ? {} : { 'upload-time': file.uploadTime }),
  };
}

function htmlLink(file: IndexFile, url: string): string {
  const hash = preferredHash(file.hashes);
  const href = hash ? `${url}#${hash.name}=${hash.hex}` : url;
  const attrs = [`href="${escapeHtml(href)}"`];
  if (file.requiresPython !== null) attrs.push(`data-requires-python="${escapeHtml(file.requiresPython)}"`);
  if (file.yanked !== false) attrs.push(file.yanked === true ? 'data-yanked=""' : `data-yanked="${escapeHtml(file.yanked)}"`);
  return `    <a ${attrs.join(' ')}>${escapeHtml(file.filename)}</a><br />`;
}

/** A project page in `format`, each file's URL from `urlOf`. */
export function renderProjectPage(page: ProjectPage, format: PageFormat, urlOf: (file: IndexFile) => string): RenderedPage {
  if (format === 'json') {
    const withSizes = page.files.every((f) => f.size !== null);
    const versions = [
      ...new Set(page.files.map((f) => parseDistributionFilename(f.filename, page.name)?.version).filter((v) => v !== undefined)),
    ];
    const body = {
      meta: { 'api-version': withSizes ? '1.1' : '1.0' },
      name: page.name,
      files: page.files.map((f) => jsonFile(f, urlOf(f), withSizes)),
      ...(withSizes ? { versions } : {}),
    };
    return { contentType: contentTypeOf(format), body: `${JSON.stringify(body)}\n` };
  }
  const title = `Links for ${escapeHtml(page.name)}`;
  return {
    contentType: contentTypeOf(format),
    body: htmlDocument(title, [`    <h1>${title}</h1>`, ...page.files.map((f) => htmlLink(f, urlOf(f)))]),
  };
}

/** PEP 503's HTML page around `bodyLines` (already escaped). */
function htmlDocument(title: string, bodyLines: readonly string[]): string {
  return [
    '<!DOCTYPE html>',
    '<html>',
    '  <head>',
    '    <meta name="pypi:repository-version" content="1.0">',
    `    <title>${title}</title>`,
    '  </head>',
    '  <body>',
    ...bodyLines,
    '  </body>',
    '</html>',
    '',
  ].join('\n');
}

/** The project list in `format`; each project's page at `${prefix}${name}/`. */
export function renderProjectList(names: readonly string[], format: PageFormat, prefix: string): RenderedPage {
  const sorted = [...names].sort();
  if (format === 'json') {
    const body = { meta: { 'api-version': '1.0' }, projects: sorted.map((name) => ({ name })) };
    return { contentType: contentTypeOf(format), body: `${JSON.stringify(body)}\n` };
  }
  const links = sorted.map((name) => `    <a href="${escapeHtml(`${prefix}${encodeURIComponent(name)}/`)}">${escapeHtml(name)}</a><br />`);
  return { contentType: contentTypeOf(format), body: htmlDocument('Simple index', links) };
}
