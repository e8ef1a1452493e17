import { writeDistributions } from '../../pipeline/services/package-index/dist-directory.js';
import { buildWheel } from '../../pipeline/services/package-index/wheel.js';

/**
 * A directory of generated wheels of one project `dep`, with upload times in its index.json:
 * 1.0 (2023-01), 2.0 (2024-06, an incompatible API), 2.0.1 (2024-07, yanked), 3.0 (2026-01).
 * Each version's module says its version and offers only its own API (`api_v1`, `api_v2`, `api_v3`).
 */
export const DEP_RELEASES = [
  { version: '1.0', uploaded: '2023-01-15T09:30:00Z', api: 'api_v1' },
  { version: '2.0', uploaded: '2024-06-10T12:00:00Z', api: 'api_v2' },
  { version: '2.0.1', uploaded: '2024-07-01T08:00:00Z', api: 'api_v2', yanked: 'broke the API of 2.0' },
  { version: '3.0', uploaded: '2026-01-20T16:45:00.123456Z', api: 'api_v3' },
] as const;

/** Writes the wheels and the manifest into `dir`; returns each file name by version. */
export function writeDepWheels(dir: string): Map<string, string> {
  const names = new Map<string, string>();
  writeDistributions(
    dir,
    DEP_RELEASES.map((release) => {
      const wheel = buildWheel({
        name: 'dep',
        version: release.version,
        summary: `dep ${release.version}`,
        requiresPython: '>=3.8',
        files: {
          'dep/__init__.py': `VERSION = ${JSON.stringify(release.version)}\n\ndef ${release.api}():\n    return ${JSON.stringify(release.version)}\n`,
        },
      });
      names.set(release.version, wheel.filename);
      return {
        filename: wheel.filename,
        bytes: wheel.bytes,
        uploadTime: release.uploaded,
        requiresPython: '>=3.8',
        ...('yanked' in release ? { yanked: release.yanked } : {}),
      };
    }),
  );
  return names;
}
