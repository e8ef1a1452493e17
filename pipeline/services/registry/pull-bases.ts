import { ItemError, OutsideServiceError } from '../../errors.js';
import type { DockerService } from '../docker.js';
import { parseImageRef } from './image-ref.js';
import { RegistryApi } from './registry-api.js';

/**
 * The images a Dockerfile starts from by digest in a registry (a folder `perfmine publish
 * --registry` wrote), in this engine before its build: each one missing is pulled, and one the
 * registry cannot give (it lost the manifest or a layer, or does not answer) is an ItemError naming
 * the image and what the registry lacks, before anything is built or recorded. Images named
 * otherwise are left to the build.
 */
export async function pullBaseImages(
  docker: DockerService,
  bases: readonly string[],
  what: string,
  api: RegistryApi = new RegistryApi(),
): Promise<string[]> {
  const pulled: string[] = [];
  for (const base of bases) {
    const ref = parseImageRef(base);
    if (!ref?.registry || !ref.digest) continue;
    if (await docker.imageExists(base)) continue;
    let failure: string;
    try {
      if (await docker.pullImage(base)) {
        pulled.push(base);
        continue;
      }
      failure = 'the registry does not have it';
    } catch (error) {
      failure = (error as Error).message;
    }
    const lacks = await api
      .missing(ref.registry, ref.repository, ref.digest)
      .catch((e: unknown) => (e instanceof OutsideServiceError ? [`(${e.message})`] : []));
    throw new ItemError(
      'base-image-unavailable',
      `${what}: its Dockerfile starts from ${base}, which cannot be pulled: ${lacks.length > 0 ? `the registry lacks ${lacks.join(', ')}` : failure}`,
      {
        fix: 'publish the task again with --registry from the machine that built it (it pushes what the registry lost), or point the Dockerfile at a registry that has the image',
      },
    );
  }
  return pulled;
}
