import type { Services } from './index.js';
import type { DockerService, RunSpec } from './docker.js';

/**
 * Thrown by a check-only adapter where the real run would change something outside (build or tag
 * an image, commit a container): a dry run stops that stage's checks there and says what the real
 * run would do. Not a PerfmineError: it never reaches an item or the ledger.
 */
export class WouldChange extends Error {
  readonly would: string;

  constructor(would: string) {
    super(`a real run would ${would} here; a dry run builds and changes nothing`);
    this.name = 'WouldChange';
    this.would = would;
  }
}

/**
 * The Docker adapter of a dry run: it answers what is there (the engine, images, a probe container
 * that is removed when it ends) and changes nothing that lasts: a build, a tag or a commit throws
 * WouldChange; removals (leftovers of a crashed run) do nothing and report nothing removed.
 */
export function checkOnlyDocker(docker: DockerService): DockerService {
  const refused: Record<string, (...args: never[]) => unknown> = {
    buildImage: (spec: { tag: string }) => Promise.reject(new WouldChange(`build the image ${spec.tag}`)),
    tagImage: (image: string, target: string) => Promise.reject(new WouldChange(`tag ${image} as ${target}`)),
    removeImage: () => Promise.resolve(),
    removeLeftovers: () => Promise.resolve({ containers: [], images: [] }),
    removeLabelled: () => Promise.resolve({ containers: 0, images: 0 }),
    run: (spec: RunSpec, signal?: AbortSignal) =>
      spec.commit ? Promise.reject(new WouldChange(`build the image ${spec.commit.repo}:${spec.commit.tag}`)) : docker.run(spec, signal),
  };
  return new Proxy(docker, {
    get(target, property) {
      if (typeof property === 'string' && property in refused) return refused[property];
      const value: unknown = Reflect.get(target, property);
      // Methods run on the real adapter (its private fields live there, not on the proxy).
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** The adapters of a dry run: Docker check-only (see checkOnlyDocker), the others as they are (they only read while planning). */
export function checkOnlyServices(services: Services): Services {
  let docker: DockerService | undefined;
  return {
    get docker() {
      return (docker ??= checkOnlyDocker(services.docker));
    },
    get llm() {
      return services.llm;
    },
    get github() {
      return services.github;
    },
    get git() {
      return services.git;
    },
    get bigquery() {
      return services.bigquery;
    },
  };
}
