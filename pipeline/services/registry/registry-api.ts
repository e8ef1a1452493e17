import { z } from 'zod';
import { OutsideServiceError } from '../../errors.js';
import { DIGEST } from './image-ref.js';
import { isLoopbackHost } from '../loopback.js';

/**
 * What perfmine asks of an OCI distribution registry over its HTTP API (the distribution spec's
 * `/v2/`): whether it holds a manifest (HEAD, its `Docker-Content-Digest`), and which of the blobs
 * an image's manifest names it lacks (a registry that lost a layer still answers for the
 * manifest). Pushing and pulling go through the Docker engine; this only looks. A registry on
 * loopback is spoken to over HTTP, as the Docker engine does; any other over HTTPS. No
 * authentication (a registry that asks for it is named in the error).
 */

export const MANIFEST_TYPES = [
  'application/vnd.oci.image.manifest.v1+json',
  'application/vnd.docker.distribution.manifest.v2+json',
  'application/vnd.oci.image.index.v1+json',
  'application/vnd.docker.distribution.manifest.list.v2+json',
] as const;

const descriptor = z.object({ digest: z.string().regex(DIGEST), mediaType: z.string().optional() });
const manifestSchema = z.object({
  mediaType: z.string().optional(),
  config: descriptor.optional(),
  layers: z.array(descriptor).optional(),
  manifests: z.array(descriptor).optional(),
});

export interface RegistryApiOptions {
  readonly fetch?: typeof fetch;
  readonly timeoutMs?: number;
}

export function registryBaseUrl(host: string): string {
  return `${isLoopbackHost(host) ? 'http' : 'https'}://${host}/v2`;
}

export class RegistryApi {
  readonly #fetch: typeof fetch;
  readonly #timeoutMs: number;

  constructor(options: RegistryApiOptions = {}) {
    this.#fetch = options.fetch ?? fetch;
    this.#timeoutMs = options.timeoutMs ?? 30_000;
  }

  async #request(host: string, path: string, method: 'HEAD' | 'GET'): Promise<Response> {
    const url = `${registryBaseUrl(host)}/${path}`;
    let response: Response;
    try {
      response = await this.#fetch(url, {
        method,
        headers: { accept: MANIFEST_TYPES.join(', ') },
        signal: AbortSignal.timeout(this.#timeoutMs),
      });
    } catch (error) {
      throw new OutsideServiceError(
        'registry',
        'registry-unreachable',
        `the registry ${host} does not answer (${method} ${url}): ${(error as Error).message}`,
        {
          retryable: true,
          fix: `check that the registry runs and this machine reaches ${host} (scripts/setup-registry.sh starts one on loopback)`,
          cause: error,
        },
      );
    }
    if (response.status === 401 || response.status === 403)
      throw new OutsideServiceError(
        'registry',
        'registry-auth',
        `the registry ${host} refused ${method} ${path} (HTTP ${response.status})`,
        {
          status: response.status,
          fix: 'perfmine speaks to registries without credentials: use a registry that allows this machine to push and pull',
        },
      );
    if (response.status >= 500)
      throw new OutsideServiceError(
        'registry',
        'registry-failed',
        `the registry ${host} failed ${method} ${path} (HTTP ${response.status})`,
        {
          status: response.status,
          retryable: true,
        },
      );
    return response;
  }

  /** The digest of the manifest `name:reference` (a tag or a digest); null when the registry does not have it. */
  async manifestDigest(host: string, name: string, reference: string): Promise<string | null> {
    const response = await this.#request(host, `${name}/manifests/${reference}`, 'HEAD');
    if (response.status === 404) return null;
    if (!response.ok)
      throw new OutsideServiceError(
        'registry',
        'registry-failed',
        `the registry ${host} answered HTTP ${response.status} for ${name}:${reference}`,
        {
          status: response.status,
        },
      );
    const digest = response.headers.get('docker-content-digest');
    return digest && DIGEST.test(digest) ? digest : DIGEST.test(reference) ? reference : null;
  }

  /**
   * What the registry lacks of the image `name@digest`: the manifest itself, or the config and
   * layer blobs it names (of every image of an index); empty when it is whole.
   */
  async missing(host: string, name: string, digest: string): Promise<string[]> {
    const response = await this.#request(host, `${name}/manifests/${digest}`, 'GET');
    if (response.status === 404) return [`manifest ${digest}`];
    if (!response.ok)
      throw new OutsideServiceError(
        'registry',
        'registry-failed',
        `the registry ${host} answered HTTP ${response.status} for ${name}@${digest}`,
        {
          status: response.status,
        },
      );
    const parsed = manifestSchema.safeParse(await response.json().catch(() => null));
    if (!parsed.success)
      throw new OutsideServiceError(
        'registry',
        'registry-failed',
        `the registry ${host} served a manifest for ${name}@${digest} that is not one`,
      );
    const out: string[] = [];
    for (const child of parsed.data.manifests ?? []) out.push(...(await this.missing(host, name, child.digest)));
    for (const blob of [...(parsed.data.config ? [parsed.data.config] : []), ...(parsed.data.layers ?? [])]) {
      const head = await this.#request(host, `${name}/blobs/${blob.digest}`, 'HEAD');
      if (head.status === 404) out.push(`${blob === parsed.data.config ? 'config' : 'layer'} ${blob.digest}`);
      else if (!head.ok)
        throw new OutsideServiceError(
          'registry',
          'registry-failed',
          `the registry ${host} answered HTTP ${head.status} for the blob ${blob.digest} of ${name}`,
          {
            status: head.status,
          },
        );
    }
    return out;
  }
}
