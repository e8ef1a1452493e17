/**
 * Image references as Docker reads them (`[host[:port]/]path[:tag][@sha256:digest]`), for the
 * images `perfmine publish --registry` pushes and the Dockerfiles that name them by digest. Pure.
 */

export interface ImageRef {
  /** `host:port` (or a host name with a dot or `localhost`); null: Docker Hub. */
  readonly registry: string | null;
  /** The repository path inside the registry (`perfmine/base`). */
  readonly repository: string;
  readonly tag: string | null;
  readonly digest: string | null;
}

export const DIGEST = /^sha256:[0-9a-f]{64}$/;
/** A repository path component (the distribution spec's grammar, lower case). */
const COMPONENT = /^[a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*$/;
const TAG = /^[\w][\w.-]{0,127}$/;

function isRegistryHost(first: string): boolean {
  return first.includes('.') || first.includes(':') || first === 'localhost';
}

/** Parses an image reference; null when it is not one. */
export function parseImageRef(ref: string): ImageRef | null {
  let rest = ref.trim();
  let digest: string | null = null;
  const at = rest.indexOf('@');
  if (at >= 0) {
    digest = rest.slice(at + 1);
    rest = rest.slice(0, at);
    if (!DIGEST.test(digest)) return null;
  }
  const parts = rest.split('/');
  const registry = parts.length > 1 && isRegistryHost(parts[0]!) ? parts.shift()! : null;
  let last = parts.pop() ?? '';
  let tag: string | null = null;
  const colon = last.lastIndexOf(':');
  if (colon >= 0) {
    tag = last.slice(colon + 1);
    last = last.slice(0, colon);
    if (!TAG.test(tag)) return null;
  }
  parts.push(last);
  if (!parts.every((p) => COMPONENT.test(p))) return null;
  return { registry, repository: parts.join('/'), tag, digest };
}

/** The reference's text: `registry/repository[:tag][@digest]`. */
export function formatImageRef(ref: ImageRef): string {
  return `${ref.registry ? `${ref.registry}/` : ''}${ref.repository}${ref.tag ? `:${ref.tag}` : ''}${ref.digest ? `@${ref.digest}` : ''}`;
}

/**
 * A registry setting (`host:port`, optionally with a path prefix: `host:port/team`): its host and
 * the prefix every pushed repository gets; null when it is not one.
 */
export function parseRegistry(value: string): { host: string; prefix: string } | null {
  const trimmed = value.trim().replace(/\/+$/, '');
  const [host, ...path] = trimmed.split('/');
  if (!host || !/^[A-Za-z0-9.-]+(:\d{1,5})?$/.test(host) || !isRegistryHost(host)) return null;
  if (!path.every((p) => COMPONENT.test(p))) return null;
  return { host, prefix: path.join('/') };
}

/** A repository path made from any name: lower case, other characters as `-`. */
export function repositoryComponent(name: string): string {
  const cleaned = name
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^[^a-z0-9]+|[^a-z0-9]+$/g, '')
    .replace(/[._-]{2,}/g, (m) => (m === '__' ? m : '-'));
  return cleaned || 'image';
}
