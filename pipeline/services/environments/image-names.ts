import { sha256 } from '../../hash.js';

/**
 * Image names of the tiers. Pure. Docker repository names are lower case `[a-z0-9._-]` parts;
 * an `owner/name` is folded into one such part.
 */
export function imageSlug(repo: string): string {
  const slug = repo
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/[._-]{2,}/g, '-')
    .replace(/^[._-]+|[._-]+$/g, '');
  return slug.length > 0 ? slug.slice(0, 100) : 'repo';
}

/** The toolchain tier (base image + asv from a wheelhouse), keyed by what it is made of. */
export function toolchainTag(baseImageId: string, wheelhouseDigest: string): string {
  return `perfmine/toolchain:${sha256(`${baseImageId}\n${wheelhouseDigest}`).slice(0, 16)}`;
}

/** The repository tier (the clone), keyed by the toolchain image and the clone's content. */
export function repoImageTag(repo: string, key: string): string {
  return `perfmine/repo-${imageSlug(repo)}:${sha256(key).slice(0, 16)}`;
}

/** A commit's source tier (the commit sealed at /repo), keyed by what it is made of. */
export function sourceImageTag(repo: string, sha: string, key: string): string {
  return `perfmine/src-${imageSlug(repo)}:${sha.slice(0, 12)}-${key.slice(0, 12)}`;
}

/** The verified environment of a commit. */
export function envImageTag(repo: string, sha: string): string {
  return `perfmine/env-${imageSlug(repo)}:${sha.slice(0, 12)}`;
}

/** An attempt's image until it is verified (transient: removed unless promoted). */
export function attemptImageTag(repo: string, sha: string, attempt: string | number): string {
  return `perfmine/env-${imageSlug(repo)}:${sha.slice(0, 12)}-attempt-${attempt}`;
}

/** Validate's expert side of a candidate (the base commit's environment with the pull request's patch). */
export function expertImageTag(repo: string, number: number): string {
  return `perfmine/expert-${imageSlug(repo)}:${number}`;
}

/** The expert image while it is in use (transient: removed after validation unless kept). */
export function expertAttemptTag(repo: string, number: number, attempt: string | number): string {
  return `${expertImageTag(repo, number)}-attempt-${attempt}`;
}
