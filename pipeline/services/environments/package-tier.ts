/**
 * A repository's Debian-packages tier: its base image with the system packages the repository
 * needs (GEOS, HDF5, a Fortran compiler; or, on hosts without a Python index, the Python
 * libraries Debian packages), built once per base image and package list and named by both, so
 * that the same list on the same base is the same image. Builds of that repository start from it
 * instead of the base image (synthesize passes it on as the commit's base image). Its lock (the
 * exact versions it installed, debian-lock.ts) is what a task's Dockerfile installs.
 */
import { ConfigError, OutsideServiceError } from '../../errors.js';
import { sha256 } from '../../hash.js';
import type { ContainerLimits, DockerService } from '../docker.js';
import {
  DEBIAN_LOCK_LABEL,
  debianLockFromLabels,
  debianLockLabel,
  debianLockOf,
  DPKG_LIST_COMMAND,
  parseDpkgList,
  type DpkgList,
} from './debian-lock.js';
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
  /** Network of apt's build step: `default` (the base image's Debian mirror), or `host` (a mirror on this host's loopback). */
  readonly network?: 'default' | 'host';
}

/** A repository's tier as its builds and its task folders use it. */
export interface PackageTier {
  /** The image builds start from: the tier, or the base image itself when no package is listed. */
  readonly image: string;
  /** What the tier installed or changed on the base image, `name=version` (debian-lock.ts); empty without packages. */
  readonly debianLock: readonly string[];
}

/** What synthesize's output records of a tier (`packageTier`), for a task folder; `debianLock` absent in records made before locks. */
export interface PackageTierRecord {
  readonly baseImage: string;
  readonly debianPackages: readonly string[];
  readonly debianLock?: readonly string[] | undefined;
}

/**
 * The image a repository's builds start from: `baseImage` itself when no package is listed, else
 * its Debian-packages tier, built when missing (with the network: apt reads the base image's
 * Debian mirror), with its lock: what it installed or changed, read with dpkg-query in the base
 * image and the tier and kept in the tier's label `org.perfmine.debian-lock` (a tier built before
 * locks has no label: its lock is read again each time, and the tier is left as it is, so that
 * the images built on it stay valid). A missing base image or a failed install is a configuration
 * error naming the setting.
 */
export async function ensurePackageTier(
  docker: DockerService,
  repo: string,
  baseImage: string,
  packages: readonly string[],
  options: PackageTierOptions,
  signal?: AbortSignal,
): Promise<PackageTier> {
  const base = await docker.inspectImage(baseImage);
  if (!base) {
    throw new ConfigError(`${options.setting}: no base image ${baseImage} in the Docker engine`, {
      reason: 'no-base-image',
      fix: 'build it (scripts/build-base-image.sh, PERFMINE_DEBIAN_SUITE for another Debian release) or name another baseImage',
    });
  }
  if (packages.length === 0) return { image: baseImage, debianLock: [] };
  const tag = packageTierTag(repo, base.id, packages);
  const existing = await docker.inspectImage(tag);
  if (existing) {
    return {
      image: tag,
      debianLock: debianLockFromLabels(existing.labels) ?? (await readDebianLock(docker, baseImage, tag, options, signal)),
    };
  }
  const built = await docker.buildImage(
    {
      tag,
      context: [{ name: 'Dockerfile', content: packageTierDockerfile(baseImage, packages) }],
      labels: { 'org.perfmine.tier': 'packages', 'org.perfmine.packages': normalizePackages(packages).join(' ') },
      network: options.network ?? 'default',
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
  const debianLock = await readDebianLock(docker, baseImage, tag, options, signal);
  // the lock is known once the tier exists: a layer of metadata only puts it in the tier's label
  const labelled = await docker.buildImage(
    {
      tag,
      context: [{ name: 'Dockerfile', content: `FROM ${tag}\n` }],
      labels: { [DEBIAN_LOCK_LABEL]: debianLockLabel(debianLock) },
      timeoutMs: options.timeoutMs,
    },
    signal,
  );
  if (!labelled.ok) {
    throw new OutsideServiceError(
      'docker',
      'docker-build-failed',
      `labelling ${tag} with its Debian lock failed: ${labelled.error ?? 'failed'}`,
      {
        fix: 'check the Docker engine (docker info) and run again',
      },
    );
  }
  return { image: tag, debianLock };
}

/** Limits of the dpkg-query containers when the caller sets none. */
const DPKG_QUERY_LIMITS: ContainerLimits = { cpus: 1, memoryMb: 256, pidsLimit: 64 };

/** The tier's lock, read with dpkg-query in the base image and in the tier (containers without network). */
async function readDebianLock(
  docker: DockerService,
  baseImage: string,
  tier: string,
  options: PackageTierOptions,
  signal?: AbortSignal,
): Promise<string[]> {
  const list = async (image: string): Promise<DpkgList> => {
    const run = await docker.run(
      { image, cmd: DPKG_LIST_COMMAND, timeoutMs: options.timeoutMs, limits: options.limits ?? DPKG_QUERY_LIMITS, tailChars: 2_000_000 },
      signal,
    );
    if (run.exitCode !== 0) {
      throw new ConfigError(
        `${options.setting}.debianPackages: listing the Debian packages of ${image} (dpkg-query -W) failed: ${run.timedOut ? 'timed out' : `exit ${run.exitCode}`}\n${run.stderr.slice(-2000)}`,
        {
          reason: 'package-tier-lock-failed',
          fix: 'the base image must be a Debian image with dpkg (scripts/build-base-image.sh builds one); name another baseImage',
        },
      );
    }
    return parseDpkgList(run.stdout);
  };
  return debianLockOf(await list(baseImage), await list(tier));
}
