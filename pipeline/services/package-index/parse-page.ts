import { indexFailure } from './index-failure.js';
import type { ProjectPage } from './index-page.js';
import { parseHtmlProjectPage } from './parse-html-page.js';
import { parseJsonProjectPage } from './parse-json-page.js';

/** What the time machine asks an upstream for: JSON first, HTML as the fallback (PEP 691's recommendation). */
export const UPSTREAM_ACCEPT = 'application/vnd.pypi.simple.v1+json, application/vnd.pypi.simple.v1+html;q=0.2, text/html;q=0.01';

/** The media type of a Content-Type header, lower case, without parameters. */
export function mediaTypeOf(contentType: string | null): string {
  return (contentType ?? '').split(';')[0]!.trim().toLowerCase();
}

/** A project page in whichever serialization its content type names. Throws `upstream-invalid`. */
export function parseProjectPage(contentType: string | null, body: string, url: string, project: string): ProjectPage {
  const type = mediaTypeOf(contentType);
  if (type === 'application/vnd.pypi.simple.v1+json' || type === 'application/vnd.pypi.simple.latest+json') {
    return parseJsonProjectPage(body, url);
  }
  if (type === 'text/html' || type === 'application/vnd.pypi.simple.v1+html' || type === 'application/vnd.pypi.simple.latest+html') {
    return parseHtmlProjectPage(body, url, project);
  }
  throw indexFailure(
    'upstream-invalid',
    `${url}: answered with content type ${JSON.stringify(contentType ?? '')}, not a simple-index page`,
  );
}
