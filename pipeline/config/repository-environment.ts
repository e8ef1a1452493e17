import type { Config } from './schema.js';
import { normalizePackages } from '../services/environments/package-tier.js';

/** Where a repository's environments start: its base image and the Debian packages added to it. */
export interface RepositoryEnvironment {
  readonly baseImage: string;
  /** Sorted, each once; empty: the base image as it is. */
  readonly debianPackages: readonly string[];
  /** The Pythons its base image offers, when the repository says (else `synthesize.pythonVersions`). */
  readonly pythonVersions: readonly string[] | null;
  /** The setting that chose them (`repositories."owner/name"`), or null for `docker.baseImage`. */
  readonly setting: string | null;
  /** The repository's own pytest arguments (`repositories."owner/name".pytestArgs`); empty when none. */
  readonly pytestArgs: readonly string[];
  /** How the asv config's `pythons` bounds the Python of a build (`repositories."owner/name".asvPythons`). */
  readonly asvPythons: 'require' | 'prefer';
}

/**
 * A repository's environment from the configuration (`repositories."owner/name"`, matched
 * without regard to case as GitHub does; else `docker.baseImage` and no package). Pure.
 */
export function repositoryEnvironment(config: Pick<Config, 'docker' | 'repositories'>, repo: string): RepositoryEnvironment {
  const name = Object.keys(config.repositories).find((k) => k.toLowerCase() === repo.toLowerCase());
  const own = name === undefined ? undefined : config.repositories[name];
  if (!own)
    return {
      baseImage: config.docker.baseImage,
      debianPackages: [],
      pythonVersions: null,
      setting: null,
      pytestArgs: [],
      asvPythons: 'require',
    };
  return {
    baseImage: own.baseImage ?? config.docker.baseImage,
    debianPackages: normalizePackages(own.debianPackages),
    pythonVersions: own.pythonVersions ?? null,
    setting: `repositories."${name}"`,
    pytestArgs: own.pytestArgs ?? [],
    asvPythons: own.asvPythons ?? 'require',
  };
}
