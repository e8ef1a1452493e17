import type { Logger } from '../../logging.js';
import type { DockerService } from '../docker.js';

/**
 * Verified images between compute nodes (`executor.registry`, a Docker distribution registry):
 * synthesize pushes the image it verified, validate pulls it on a node that lacks it. Without a
 * registry, or when the registry fails, validate builds the image again from the stored script.
 */

/** An image's name in the registry: the same name and tag under the registry's `host:port`. */
export function registryRef(registry: string, image: string): string {
  return `${registry.replace(/\/+$/, '')}/${image}`;
}

/** Pushes a verified image; a failure is logged and returns false (the image can be rebuilt where it is needed). */
export async function publishImage(docker: DockerService, registry: string, image: string, log: Logger): Promise<boolean> {
  const ref = registryRef(registry, image);
  try {
    await docker.tagImage(image, ref);
    await docker.pushImage(ref);
    log.info({ image, ref }, 'pushed the verified image to the registry');
    return true;
  } catch (error) {
    log.warn({ image, ref, err: (error as Error).message }, 'could not push the verified image; nodes without it will build it again');
    return false;
  } finally {
    // the registry's name is only for the transfer: the local image keeps its own
    await docker.removeImage(ref).catch(() => undefined);
  }
}

/** Pulls an image this engine lacks and gives it its own name; false when the registry lacks it or fails. */
export async function fetchImage(docker: DockerService, registry: string, image: string, log: Logger): Promise<boolean> {
  const ref = registryRef(registry, image);
  try {
    if (!(await docker.pullImage(ref))) {
      log.info({ image, ref }, 'the registry does not have the image');
      return false;
    }
    await docker.tagImage(ref, image);
    log.info({ image, ref }, 'pulled the verified image from the registry');
    return true;
  } catch (error) {
    log.warn({ image, ref, err: (error as Error).message }, 'could not pull the verified image from the registry');
    return false;
  } finally {
    await docker.removeImage(ref).catch(() => undefined);
  }
}
