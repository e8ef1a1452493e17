/**
 * Which Python to build a commit with, among those the base image offers
 * (`synthesize.pythonVersions`), from the project's metadata at that commit: `requires-python` /
 * `python_requires` and the asv config's `pythons` bound what the commit allows; among those, the
 * newest listed in the version classifiers, else the newest. When what the commit allows excludes
 * every offered version, the commit cannot be built as its project means it: `python-unavailable`,
 * naming both. An offered `X.Y` satisfies a specifier when some release of its series does
 * (pep440.ts seriesSatisfies); an asv `pythons` entry `X.Y` (or `X`) names a series. Pure.
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

/** What the commit allows excludes every offered version. */
export interface PythonUnavailable {
  readonly version: null;
  readonly reason: string;
}

/** The offered versions an asv config's `pythons` names (entries that are not `X` or `X.Y` are ignored); null when it names none. */
export function asvPythonsFilter(asvPythons: readonly string[] | null | undefined): ((v: string) => boolean) | null {
  const series = (asvPythons ?? []).map((p) => String(p).trim()).filter((p) => /^\d+(\.\d+)?$/.test(p));
  if (series.length === 0) return null;
  return (v) => series.some((p) => v === p || v.startsWith(`${p}.`));
}

/**
 * How the asv config's `pythons` bounds the choice: `require` (the default) drops a commit none of
 * whose listed Pythons the image offers; `prefer` takes one of them when offered, else the newest
 * that requires-python allows (`repositories."owner/name".asvPythons`: with perfmine's harness, as
 * with asv's `--python=same`, the suite runs on the environment's own interpreter; xarray's config
 * of 2025 lists only 3.11, which no trixie image has).
 */
export type AsvPythonsRule = 'require' | 'prefer';

export function choosePython(
  meta: PythonMetadata,
  offered: readonly string[],
  asvPythons: readonly string[] | null = null,
  rule: AsvPythonsRule = 'require',
): PythonChoice | PythonUnavailable {
  if (offered.length === 0) throw new RangeError('no Python version offered');
  const listedByAsv = asvPythonsFilter(asvPythons);
  const spec = meta.requiresPython?.trim() || null;
  const bySpec = spec ? offered.filter((v) => seriesSatisfies(v, spec) !== false) : [...offered];
  const inAsv = rule === 'prefer' && listedByAsv && !bySpec.some(listedByAsv) ? null : listedByAsv;
  if (inAsv === null && listedByAsv !== null && bySpec.length > 0) {
    const choice = chooseAmong(meta, bySpec, '');
    return {
      ...choice,
      reason: `${choice.reason}; none of the asv config's pythons [${(asvPythons ?? []).join(', ')}] is offered (asvPythons: prefer)`,
    };
  }
  const allowed = inAsv ? bySpec.filter(inAsv) : bySpec;
  if (allowed.length === 0) {
    const bounds = [
      ...(spec && bySpec.length < offered.length ? [`requires-python "${spec}"`] : []),
      ...(inAsv && allowed.length < bySpec.length ? [`the asv config's pythons [${(asvPythons ?? []).join(', ')}]`] : []),
    ];
    return {
      version: null,
      reason: `${bounds.join(' and ')} exclude${bounds.length === 1 ? 's' : ''} every Python the image offers (${offered.join(', ')})`,
    };
  }
  return chooseAmong(meta, allowed, inAsv ? ` within the asv config's pythons [${(asvPythons ?? []).join(', ')}]` : '');
}

function chooseAmong(meta: PythonMetadata, allowed: readonly string[], within: string): PythonChoice {
  const byNewest = [...allowed].sort((a, b) => compareVersions(parseVersion(b) ?? [0], parseVersion(a) ?? [0]));
  const newest = byNewest[0]!;
  const spec = meta.requiresPython?.trim() || null;
  if (spec && byNewest.every((v) => seriesSatisfies(v, spec) === null)) {
    return {
      version: newest,
      satisfiesMetadata: false,
      reason: `requires-python "${spec}" could not be read; newest offered version${within}`,
    };
  }
  const satisfying = spec ? ` that satisfies requires-python "${spec}"` : '';
  const listed = byNewest.filter((v) => meta.classifierVersions.includes(v));
  if (listed.length > 0)
    return {
      version: listed[0]!,
      satisfiesMetadata: true,
      reason: `newest offered version${satisfying}${within} listed in the classifiers`,
    };
  if (spec) return { version: newest, satisfiesMetadata: true, reason: `newest offered version${satisfying}${within}` };
  if (meta.classifierVersions.length > 0) {
    return {
      version: newest,
      satisfiesMetadata: false,
      reason: `classifiers list ${meta.classifierVersions.join(', ')}, none offered; newest offered version${within}`,
    };
  }
  return { version: newest, satisfiesMetadata: true, reason: `the project declares no Python version; newest offered version${within}` };
}
