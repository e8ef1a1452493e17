/**
 * A repository's Debian-packages tier: its base image with the system packages the repository
 * needs (GEOS, HDF5, a Fortran compiler; or, on hosts without a Python index, the Python
 * libraries Debian packages), built once per base image and package list and named by both, so
 * that the same list on the same base is the same image. Builds of that repository start from it
 * instead of the base image (synthesize passes it on as the commit's base image).
 */
import { ConfigError } from '../../errors.js';
import { sha256 } from '../../hash.js';
import type { ContainerLimits, DockerService } from '../docker.js';
import { imageSlug } from './image-names.js';

/** A Debian package name (policy 5.6.1): lower case letters, digits, `+`, `-`, `.`; at least two characters. */
export const DEBIAN_PACKAGE_NAME = /^[a-z0-9][a-z0-9+.-]+$/;

/** The packages as the tier installs them: each once, sorted (so that the order of the list changes nothing). */
export function normalizePackages(packages: readonly string[]): string[] {
  return [...new Set(packages)].sort();
}

/** The tier's tag: the repository's slug, keyed by the base image's id and the package list. Pure. */
export function packageTierTag(repo: string, baseImageId: string, packages: readonly string[]): string {
  return `perfmine/pkgs-${imageSlug(repo)}:${sha256(`${baseImageId}\n${normalizePackages(packages).join('\n')}`).slice(0, 16)}`;
}

/** The tier's Dockerfile: the base image, then apt-get install of the packages (no recommends, lists removed). Pure. */
export function packageTierDockerfile(baseImage: string, packages: readonly string[]): string {
  for (const p of packages) if (!DEBIAN_PACKAGE_NAME.test(p)) throw new RangeError(`not a Debian package name: ${p}`);
  return [
    `FROM ${baseImage}`,
    'ENV DEBIAN_FRONTEND=noninteractive',
    'RUN apt-get update \\',
    ` && apt-get install -y --no-install-recommends ${normalizePackages(packages).join(' ')} \\`,
    ' && rm -rf /var/lib/apt/lists/*',
    '',
  ].join('\n');
}

export interface PackageTierOptions {
  /** Where the setting came from, for messages (`repositories."owner/name"`). */
  readonly setting: string;
  readonly timeoutMs: number;
  readonly limits?: ContainerLimits;
  readonly tailChars?: number;
}

/**
 * The image a repository's builds start from: `baseImage` itself when no package is listed, else
 * its Debian-packages tier, built when missing (with the network: apt reads the base image's
 * Debian mirror). A missing base image or a failed install is a configuration error naming the
 * setting.
 */
export async function ensurePackageTier(
  docker: DockerService,
  repo: string,
  baseImage: string,
  packages: readonly string[],
  options: PackageTierOptions,
  signal?: AbortSignal,
): Promise<string> {
  const base = await docker.inspectImage(baseImage);
  if (!base) {
    throw new ConfigError(`${options.setting}: no base image ${baseImage} in the Docker engine`, {
      reason: 'no-base-image',
      fix: 'build it (scripts/build-base-image.sh, PERFMINE_DEBIAN_SUITE for another Debian release) or name another baseImage',
    });
  }
  if (packages.length === 0) return baseImage;
  const tag = packageTierTag(repo, base.id, packages);
  if (await docker.imageExists(tag)) return tag;
  const built = await docker.buildImage(
    {
      tag,
      context: [{ name: 'Dockerfile', content: packageTierDockerfile(baseImage, packages) }],
      labels: { 'org.perfmine.tier': 'packages', 'org.perfmine.packages': normalizePackages(packages).join(' ') },
      network: 'default',
      timeoutMs: options.timeoutMs,
      ...(options.limits ? { limits: options.limits } : {}),
      ...(options.tailChars ? { tailChars: options.tailChars } : {}),
    },
    signal,
  );
  if (!built.ok) {
    throw new ConfigError(
      `${options.setting}.debianPackages: installing ${normalizePackages(packages).join(' ')} on ${baseImage} failed: ${built.error ?? (built.timedOut ? 'timed out' : 'failed')}\n${built.log.slice(-2000)}`,
      { reason: 'package-tier-failed', fix: "check the package names against the base image's Debian release (apt-cache policy NAME)" },
    );
  }
  return tag;
}
