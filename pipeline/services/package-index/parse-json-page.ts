import { z } from 'zod';
import { normalizeProjectName } from './distribution-filename.js';
import { indexFailure } from './index-failure.js';
import { isSafeFilename, normalizeUploadTime, resolveFileUrl, type IndexFile, type ProjectPage } from './index-page.js';

/** PEP 691's JSON media type (version 1). */
export const JSON_V1 = 'application/vnd.pypi.simple.v1+json';

const meta = z.object({ 'api-version': z.string() });

/** PEP 691 (+ PEP 700) file entry; unknown keys are ignored, as PEP 691 asks of clients. */
const fileEntry = z.object({
  filename: z.string().min(1),
  url: z.string().min(1),
  hashes: z.record(z.string(), z.string()),
  'requires-python': z.string().nullish(),
  yanked: z.union([z.boolean(), z.string()]).nullish(),
  'upload-time': z.string().nullish(),
  size: z.number().int().nonnegative().nullish(),
});

const projectDetail = z.object({ meta, name: z.string().min(1), files: z.array(fileEntry) });
const projectList = z.object({ meta, projects: z.array(z.object({ name: z.string().min(1) })) });

/** PEP 629: a major version other than 1 is not understood; a higher minor is read as 1.x. */
function checkApiVersion(version: string, url: string): void {
  const m = /^(\d+)\.(\d+)$/.exec(version);
  if (!m || m[1] !== '1') throw indexFailure('upstream-invalid', `${url}: unsupported simple API version ${JSON.stringify(version)}`);
}

function parseJson(body: string, url: string): unknown {
  try {
    return JSON.parse(body) as unknown;
  } catch (error) {
    throw indexFailure('upstream-invalid', `${url}: the JSON page does not parse (${(error as Error).message})`, { cause: error });
  }
}

/** A PEP 691 project detail page; file URLs resolved against `url`. Throws `upstream-invalid`. */
export function parseJsonProjectPage(body: string, url: string): ProjectPage {
  const parsed = projectDetail.safeParse(parseJson(body, url));
  if (!parsed.success)
    throw indexFailure('upstream-invalid', `${url}: not a PEP 691 project page (${parsed.error.issues[0]?.message ?? 'invalid'})`);
  checkApiVersion(parsed.data.meta['api-version'], url);
  const files: IndexFile[] = [];
  for (const f of parsed.data.files) {
    const resolved = resolveFileUrl(f.url, url);
    if (resolved === null || !isSafeFilename(f.filename)) continue;
    files.push({
      filename: f.filename,
      url: resolved,
      hashes: Object.fromEntries(Object.entries(f.hashes).map(([k, v]) => [k.toLowerCase(), v.toLowerCase()])),
      requiresPython: f['requires-python'] ?? null,
      yanked: f.yanked === '' ? true : (f.yanked ?? false),
      uploadTime: normalizeUploadTime(f['upload-time']),
      size: f.size ?? null,
    });
  }
  return { name: normalizeProjectName(parsed.data.name), files, format: 'json' };
}

/** The project names of a PEP 691 project list. Throws `upstream-invalid`. */
export function parseJsonProjectList(body: string, url: string): string[] {
  const parsed = projectList.safeParse(parseJson(body, url));
  if (!parsed.success) throw indexFailure('upstream-invalid', `${url}: not a PEP 691 project list`);
  checkApiVersion(parsed.data.meta['api-version'], url);
  return parsed.data.projects.map((p) => p.name);
}
