import { afterAll, describe, expect, it } from 'vitest';
import { DockerService } from '../../pipeline/services/docker.js';
import { fetchImage, publishImage, registryRef } from '../../pipeline/services/environments/image-registry.js';
import { memoryLogger, testLabel } from '../synthesize/harness.js';

/**
 * Verified images between nodes through a real Docker distribution registry (Debian's
 * docker-registry, started on loopback by scripts/setup-registry.sh) and the real engine: the
 * image synthesize verified is pushed, a node without it pulls it under its own name, and a
 * registry that lacks it or does not answer says so without failing (validate then rebuilds it).
 */
const REGISTRY = `127.0.0.1:${process.env.PERFMINE_REGISTRY_PORT ?? '5000'}`;
const BASE_IMAGE = 'perfmine/base:bookworm';
const label = testLabel('registry');
const docker = new DockerService({ runLabel: label });
const image = `perfmine/env-registry-test:${label
  .toLowerCase()
  .replace(/[^a-z0-9]/g, '')
  .slice(-12)}`;

async function registryAnswers(): Promise<string | null> {
  try {
    const response = await fetch(`http://${REGISTRY}/v2/`);
    return response.ok ? null : `GET /v2/ answered ${response.status}`;
  } catch (error) {
    return `no registry answers on ${REGISTRY} (${(error as Error).message}); run scripts/setup-registry.sh as root`;
  }
}
const unavailable = await registryAnswers();
if (unavailable) console.warn(`[registry tests skipped] ${unavailable}`);

afterAll(async () => {
  await docker.removeImage(image);
  await docker.removeImage(registryRef(REGISTRY, image));
});

describe.skipIf(unavailable !== null)('verified images through a registry', () => {
  it('pushes an image, and a node without it pulls it back under its own name', async () => {
    const { log, lines } = memoryLogger('info');
    await docker.tagImage(BASE_IMAGE, image);
    const id = (await docker.inspectImage(image))!.id;
    expect(await publishImage(docker, REGISTRY, image, log)).toBe(true);
    // the registry holds the manifest of that tag
    const manifest = await fetch(`http://${REGISTRY}/v2/${image.split(':')[0]}/manifests/${image.split(':')[1]}`, {
      headers: { accept: 'application/vnd.docker.distribution.manifest.v2+json' },
    });
    expect(manifest.status).toBe(200);
    // the transfer name is not left behind
    expect(await docker.imageExists(registryRef(REGISTRY, image))).toBe(false);

    await docker.removeImage(image);
    expect(await docker.imageExists(image)).toBe(false);
    expect(await fetchImage(docker, REGISTRY, image, log)).toBe(true);
    expect((await docker.inspectImage(image))!.id).toBe(id);
    expect(await docker.imageExists(registryRef(REGISTRY, image))).toBe(false);
    expect(lines.join('')).toMatch(/pulled the verified image from the registry/);
  });

  it('an image the registry lacks, or a registry that does not answer, is a false, not a failure', async () => {
    const { log, lines } = memoryLogger('info');
    expect(await fetchImage(docker, REGISTRY, 'perfmine/env-never-pushed:abc', log)).toBe(false);
    expect(lines.join('')).toMatch(/the registry does not have the image/);
    await docker.tagImage(BASE_IMAGE, image);
    expect(await publishImage(docker, '127.0.0.1:9', image, log)).toBe(false);
    expect(lines.join('')).toMatch(/could not push the verified image; nodes without it will build it again/);
    expect(await docker.imageExists(image)).toBe(true);
  });
});
