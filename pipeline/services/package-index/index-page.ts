/**
 * One project's page of a simple package index, as read from either serialization (PEP 691 JSON,
 * PEP 503 HTML), and the upload times of PEP 700. Pure.
 */

/** One distribution file listed on a project page. */
export interface IndexFile {
  readonly filename: string;
  /** Absolute URL of the file (relative URLs resolved against the page), without a fragment. */
  readonly url: string;
  /** Hash name (lower case) to hex digest; may be empty. */
  readonly hashes: Readonly<Record<string, string>>;
  readonly requiresPython: string | null;
  /** PEP 592: false, true, or the reason given. */
  readonly yanked: boolean | string;
  /** PEP 700 upload time (ISO 8601, UTC), or null when the index gives none (HTML never does). */
  readonly uploadTime: string | null;
  /** Bytes, when the index says (PEP 700). */
  readonly size: number | null;
}

/** A project page: its name and files, and the serialization it came in. */
export interface ProjectPage {
  /** The project's name, normalized. */
  readonly name: string;
  readonly files: readonly IndexFile[];
  readonly format: 'json' | 'html';
}

/** PEP 700's format: `yyyy-mm-ddThh:mm:ss(.ffffff)?Z`. */
const PEP700_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,6})?Z$/;
/** Other ISO 8601 instants some indexes write (an offset instead of Z, more fraction digits). */
const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})$/;

/**
 * An upload time as this module keeps it: PEP 700's own text when it is in PEP 700's format,
 * another ISO 8601 instant converted to UTC (`toISOString`), anything else null (treated as no
 * upload time).
 */
export function normalizeUploadTime(text: string | null | undefined): string | null {
  if (typeof text !== 'string') return null;
  if (PEP700_TIME.test(text)) return Number.isNaN(Date.parse(text)) ? null : text;
  if (!ISO_INSTANT.test(text)) return null;
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? null : new Date(ms).toISOString();
}

/** Milliseconds since the epoch of a normalized upload time. */
export function uploadTimeMs(time: string): number {
  return Date.parse(time);
}

/** Hash names in the order this module prefers them (checked, and put in an HTML fragment). */
export const PREFERRED_HASHES = ['sha256', 'sha512', 'sha384', 'sha224', 'sha1', 'md5'] as const;

/** The preferred hash an index gives for a file, or null when it gives none this module knows. */
export function preferredHash(hashes: Readonly<Record<string, string>>): { readonly name: string; readonly hex: string } | null {
  for (const name of PREFERRED_HASHES) {
    const hex = hashes[name];
    if (typeof hex === 'string' && /^[0-9a-f]+$/i.test(hex)) return { name, hex: hex.toLowerCase() };
  }
  return null;
}

/**
 * A file name this module passes on: no path separator, no control character, not `.` or `..`
 * (a file listed otherwise is left out of the page).
 */
export function isSafeFilename(filename: string): boolean {
  return filename.length > 0 && filename !== '.' && filename !== '..' && !/[/\\\x00-\x1f\x7f]/.test(filename);
}

/** A file's URL resolved against its page, without its fragment; null when it is not a URL. */
export function resolveFileUrl(href: string, pageUrl: string): string | null {
  try {
    const resolved = new URL(href, pageUrl);
    resolved.hash = '';
    return resolved.href;
  } catch {
    return null;
  }
}
