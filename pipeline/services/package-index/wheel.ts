import { createHash } from 'node:crypto';
import { normalizeProjectName } from './distribution-filename.js';
import { writeZip, type ZipEntry } from './zip.js';

/** A pure-Python wheel to write. */
export interface WheelSpec {
  /** The project's name (any spelling; the file name uses its normalized form). */
  readonly name: string;
  readonly version: string;
  /** The files installed into site-packages, by path (`dep/__init__.py`). */
  readonly files: Readonly<Record<string, string | Buffer>>;
  readonly summary?: string;
  readonly requiresPython?: string;
  /** `Requires-Dist` lines (`other>=1.0`). */
  readonly requiresDist?: readonly string[];
}

export interface Wheel {
  /** `{name}-{version}-py3-none-any.whl`. */
  readonly filename: string;
  readonly bytes: Buffer;
}

/** The distribution name as wheel file and `.dist-info` names spell it: normalized, `_` for `-`. */
function wheelName(name: string): string {
  return normalizeProjectName(name).replace(/-/g, '_');
}

/** RECORD's hash: `sha256=` and the urlsafe base64 digest without padding. */
function recordHash(data: Buffer): string {
  return `sha256=${createHash('sha256').update(data).digest('base64url')}`;
}

/**
 * A valid pure-Python wheel (`py3-none-any`): the files, then `.dist-info/` with METADATA
 * (metadata 2.1), WHEEL (wheel 1.0, purelib) and RECORD (every file's sha256 and size). Same spec,
 * same bytes. Pure.
 */
export function buildWheel(spec: WheelSpec): Wheel {
  const name = wheelName(spec.name);
  const distInfo = `${name}-${spec.version}.dist-info`;
  const metadata = [
    'Metadata-Version: 2.1',
    `Name: ${spec.name}`,
    `Version: ${spec.version}`,
    ...(spec.summary ? [`Summary: ${spec.summary}`] : []),
    ...(spec.requiresPython ? [`Requires-Python: ${spec.requiresPython}`] : []),
    ...(spec.requiresDist ?? []).map((r) => `Requires-Dist: ${r}`),
    '',
  ].join('\n');
  const wheel = ['Wheel-Version: 1.0', 'Generator: perfmine', 'Root-Is-Purelib: true', 'Tag: py3-none-any', ''].join('\n');
  const entries: ZipEntry[] = [
    ...Object.entries(spec.files)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([path, content]) => ({ name: path, data: Buffer.isBuffer(content) ? content : Buffer.from(content, 'utf8') })),
    { name: `${distInfo}/METADATA`, data: Buffer.from(metadata, 'utf8') },
    { name: `${distInfo}/WHEEL`, data: Buffer.from(wheel, 'utf8') },
  ];
  const record = [...entries.map((e) => `${e.name},${recordHash(e.data)},${e.data.length}`), `${distInfo}/RECORD,,`, ''].join('\n');
  entries.push({ name: `${distInfo}/RECORD`, data: Buffer.from(record, 'utf8') });
  return { filename: `${name}-${spec.version}-py3-none-any.whl`, bytes: writeZip(entries) };
}
