import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { z } from 'zod';
import { ConfigError } from '../../errors.js';
import { parseDistributionFilename } from './distribution-filename.js';
import { isSafeFilename, normalizeUploadTime, type IndexFile } from './index-page.js';

/** The manifest a directory of distributions may hold beside them. */
export const MANIFEST_NAME = 'index.json';

const manifestEntry = z
  .object({
    /** PEP 700 upload time; null: the file has none (the index will list it without one). */
    'upload-time': z.string().nullable().optional(),
    /** PEP 592: true, or the reason. */
    yanked: z.union([z.boolean(), z.string()]).optional(),
    'requires-python': z.string().optional(),
  })
  .strict();

const manifestSchema = z.object({ files: z.record(z.string(), manifestEntry) }).strict();

export type DistManifest = z.infer<typeof manifestSchema>;

/** One distribution file of a directory, as an index lists it (its URL a `file:` URL). */
export interface LocalDistribution extends IndexFile {
  readonly path: string;
  /** The project it belongs to, normalized. */
  readonly project: string;
  readonly version: string;
}

/**
 * A directory of wheels and sdists read as an index: every file directly in it whose name is a
 * distribution's (`parseDistributionFilename`), grouped by project. Upload times come from
 * `index.json` beside them (`{"files": {"<filename>": {"upload-time": "2023-01-15T00:00:00Z",
 * "yanked": "reason", "requires-python": ">=3.8"}}}`): a file's entry gives its upload time (null:
 * none); a file without an entry, or an entry without `upload-time`, has its modification time.
 * sha256 and size are read from the files (hashes remembered while size and mtime stay the same).
 */
export class DistDirectory {
  readonly dir: string;
  readonly #hashes = new Map<string, { size: number; mtimeMs: number; sha256: string }>();

  constructor(dir: string) {
    this.dir = dir;
  }

  /** The manifest, or an empty one when there is none. A manifest that does not parse: ConfigError. */
  manifest(): DistManifest {
    const path = join(this.dir, MANIFEST_NAME);
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { files: {} };
      throw new ConfigError(`index: cannot read ${path}: ${(error as Error).message}`, { reason: 'index-manifest-invalid' });
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (error) {
      throw new ConfigError(`index: ${path} is not JSON: ${(error as Error).message}`, { reason: 'index-manifest-invalid' });
    }
    const parsed = manifestSchema.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new ConfigError(`index: ${path}: ${issue?.path.join('.') ?? ''}: ${issue?.message ?? 'invalid'}`, {
        reason: 'index-manifest-invalid',
        fix: 'write {"files": {"<filename>": {"upload-time": "2023-01-15T00:00:00Z"}}}',
      });
    }
    return parsed.data;
  }

  /** Every distribution of the directory by project (normalized name). */
  read(): Map<string, LocalDistribution[]> {
    const manifest = this.manifest();
    const projects = new Map<string, LocalDistribution[]>();
    let names: string[];
    try {
      names = readdirSync(this.dir).sort();
    } catch (error) {
      throw new ConfigError(`index: cannot read the directory ${this.dir}: ${(error as Error).message}`, {
        reason: 'index-directory-unreadable',
      });
    }
    for (const filename of names) {
      if (filename === MANIFEST_NAME || !isSafeFilename(filename)) continue;
      const parsed = parseDistributionFilename(filename);
      if (!parsed) continue;
      const path = join(this.dir, filename);
      const stat = statSync(path, { throwIfNoEntry: false });
      if (!stat?.isFile()) continue;
      const entry = manifest.files[filename];
      const declared = entry?.['upload-time'];
      if (typeof declared === 'string' && normalizeUploadTime(declared) === null) {
        throw new ConfigError(
          `index: ${join(this.dir, MANIFEST_NAME)}: files.${filename}.upload-time: not an ISO 8601 instant: ${declared}`,
          {
            reason: 'index-manifest-invalid',
            fix: 'write it as 2023-01-15T00:00:00Z',
          },
        );
      }
      const uploadTime =
        entry?.['upload-time'] === null
          ? null
          : entry?.['upload-time'] !== undefined
            ? normalizeUploadTime(entry['upload-time'])
            : new Date(stat.mtimeMs).toISOString();
      const dist: LocalDistribution = {
        filename,
        url: pathToFileURL(path).href,
        hashes: { sha256: this.#sha256(path, stat.size, stat.mtimeMs) },
        requiresPython: entry?.['requires-python'] ?? null,
        yanked: entry?.yanked === '' ? true : (entry?.yanked ?? false),
        uploadTime,
        size: stat.size,
        path,
        project: parsed.project,
        version: parsed.version,
      };
      const list = projects.get(parsed.project) ?? [];
      list.push(dist);
      projects.set(parsed.project, list);
    }
    return projects;
  }

  #sha256(path: string, size: number, mtimeMs: number): string {
    const known = this.#hashes.get(path);
    if (known && known.size === size && known.mtimeMs === mtimeMs) return known.sha256;
    const sha256 = createHash('sha256').update(readFileSync(path)).digest('hex');
    this.#hashes.set(path, { size, mtimeMs, sha256 });
    return sha256;
  }
}

/** One wheel or sdist to put into a directory index, with what its manifest entry says. */
export interface DistributionToWrite {
  readonly filename: string;
  readonly bytes: Buffer;
  /** ISO 8601; null: no upload time (the index lists it without one). */
  readonly uploadTime: string | null;
  readonly yanked?: boolean | string;
  readonly requiresPython?: string;
}

/**
 * Writes distributions and their `index.json` into `dir` (the demo's and the tests' upstream):
 * entries already in the manifest are kept, these added or replaced.
 */
export function writeDistributions(dir: string, distributions: readonly DistributionToWrite[]): void {
  const manifest = new DistDirectory(dir).manifest();
  const files: Record<string, z.infer<typeof manifestEntry>> = { ...manifest.files };
  for (const d of distributions) {
    writeFileSync(join(dir, d.filename), d.bytes);
    files[d.filename] = {
      'upload-time': d.uploadTime,
      ...(d.yanked === undefined || d.yanked === false ? {} : { yanked: d.yanked }),
      ...(d.requiresPython === undefined ? {} : { 'requires-python': d.requiresPython }),
    };
  }
  writeFileSync(join(dir, MANIFEST_NAME), `${JSON.stringify({ files }, null, 2)}\n`);
}
