/**
 * Which Python to build a commit with, among those the base image offers, from the project's
 * metadata at that commit (`requires-python` / `python_requires`, then the version classifiers).
 * An offered `X.Y` satisfies a specifier when some release of its series does (pep440.ts
 * seriesSatisfies). Pure.
 */
import { compareVersions, parseVersion, seriesSatisfies } from '../../pipeline/concepts/pep440.js';
import type { PythonMetadata } from '../../pipeline/concepts/python-project.js';

export interface PythonChoice {
  /** `X.Y`, one of the offered versions. */
  readonly version: string;
  /** Whether the choice satisfies what the project declares (false: the closest offer was taken). */
  readonly satisfiesMetadata: boolean;
  readonly reason: string;
}

export function choosePython(meta: PythonMetadata, offered: readonly string[]): PythonChoice {
  if (offered.length === 0) throw new RangeError('no Python version offered');
  const byNewest = [...offered].sort((a, b) => compareVersions(parseVersion(b) ?? [0], parseVersion(a) ?? [0]));
  const newest = byNewest[0]!;
  const spec = meta.requiresPython?.trim() || null;
  if (spec) {
    const fits = byNewest.filter((v) => seriesSatisfies(v, spec) === true);
    const listed = fits.filter((v) => meta.classifierVersions.includes(v));
    if (listed.length > 0)
      return {
        version: listed[0]!,
        satisfiesMetadata: true,
        reason: `newest offered version that satisfies requires-python "${spec}" and is listed in the classifiers`,
      };
    if (fits.length > 0)
      return { version: fits[0]!, satisfiesMetadata: true, reason: `newest offered version that satisfies requires-python "${spec}"` };
    if (byNewest.every((v) => seriesSatisfies(v, spec) === null)) {
      return { version: newest, satisfiesMetadata: false, reason: `requires-python "${spec}" could not be read; newest offered version` };
    }
    return {
      version: newest,
      satisfiesMetadata: false,
      reason: `no offered version (${offered.join(', ')}) satisfies requires-python "${spec}"; newest offered version`,
    };
  }
  const listed = byNewest.filter((v) => meta.classifierVersions.includes(v));
  if (listed.length > 0)
    return { version: listed[0]!, satisfiesMetadata: true, reason: 'newest offered version listed in the classifiers' };
  if (meta.classifierVersions.length > 0) {
    return {
      version: newest,
      satisfiesMetadata: false,
      reason: `classifiers list ${meta.classifierVersions.join(', ')}, none offered; newest offered version`,
    };
  }
  return { version: newest, satisfiesMetadata: true, reason: 'the project declares no Python version; newest offered version' };
}
