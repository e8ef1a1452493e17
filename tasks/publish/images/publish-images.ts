import { createHash } from 'node:crypto';
import { ConfigError, ItemError } from '../../../pipeline/errors.js';
import type { Logger } from '../../../pipeline/logging.js';
import type { ContainerLimits, DockerService } from '../../../pipeline/services/docker.js';
import { formatImageRef, parseImageRef, parseRegistry, repositoryComponent } from '../../../pipeline/services/registry/image-ref.js';
import type { RegistryApi } from '../../../pipeline/services/registry/registry-api.js';
import type { TarEntry } from '../../../pipeline/services/tar.js';
import { contentBytes, contentDigest } from '../../../pipeline/services/verifier/file-content.js';
import { harborEnvironmentFiles, type HarborFile } from '../../../pipeline/services/verifier/verifier-folder.js';
import type { MonthTask } from '../../../stages/emit/month-files.js';
import { dockerfileBases } from '../../../pipeline/services/registry/dockerfile-bases.js';
import { withBases, withImages, type TaskImages } from './with-images.js';

/**
 * `perfmine publish --registry REG`: every published task's images in an OCI registry, named by
 * digest. First the base images the tasks' Dockerfiles start from (pushed from this engine, where
 * synthesize built them: perfmine/base and a repository's own), then each task's environment
 * image, built from its Harbor `environment/` as Harbor builds it (no build arguments) with its
 * Dockerfile starting from the base by digest, and pushed under `REG/perfmine/<instance_id>:<key>`,
 * the key a digest of the environment's files: an environment the registry already holds whole
 * (manifest and every blob) is not built or pushed again, so a publish that stopped half-way goes
 * on where it stopped. Every image is checked whole in the registry after its push. Nothing is
 * written by this step: the tasks come back naming their images, and the folder is written only
 * when every image is in place; the first image that cannot be pushed ends the publish, named.
 */

export interface PublishImagesDeps {
  readonly docker: DockerService;
  readonly api: RegistryApi;
  readonly log: Logger;
  /** `host:port[/prefix]`. */
  readonly registry: string;
  readonly buildTimeoutMs: number;
  readonly limits?: ContainerLimits;
}

export interface PublishedImages {
  readonly tasks: readonly MonthTask[];
  /** References pushed by this run, and those the registry already held whole. */
  readonly pushed: readonly string[];
  readonly reused: readonly string[];
}

/** The environment's key: a digest of its files (path, mode, content), so that the same environment gets the same tag. */
export function environmentKey(files: ReadonlyMap<string, HarborFile>): string {
  const hash = createHash('sha256');
  for (const path of [...files.keys()].sort()) {
    const f = files.get(path)!;
    hash.update(`${path}\0${f.mode.toString(8)}\0${contentDigest(f.content)}\n`);
  }
  return hash.digest('hex').slice(0, 24);
}

function contextOf(files: ReadonlyMap<string, HarborFile>): TarEntry[] {
  return [...files].map(([name, f]) => {
    const bytes = contentBytes(f.content);
    return { name, content: typeof bytes === 'string' ? bytes : Buffer.from(bytes), mode: f.mode };
  });
}

export async function publishImages(tasks: readonly MonthTask[], deps: PublishImagesDeps): Promise<PublishedImages> {
  const target = parseRegistry(deps.registry);
  if (!target)
    throw new ConfigError(`--registry ${deps.registry}: not a registry (host:port, optionally with a path)`, {
      reason: 'usage',
      fix: 'name the registry as host:port, e.g. --registry 127.0.0.1:5000 or --registry registry.example.org/perfmine',
    });
  const { docker, api, log } = deps;
  const pushed: string[] = [];
  /** Pushes `named` (the image `what`), and returns the digest the registry gives it; a failure names the image. */
  const push = async (named: string, repository: string, tag: string, what: string): Promise<string> => {
    let digest: string | null;
    try {
      digest = (await docker.pushImage(named)) ?? (await api.manifestDigest(target.host, repository, tag));
    } catch (error) {
      await docker.removeImage(named).catch(() => undefined);
      throw new ItemError('push-failed', `${what}: pushing ${named} failed: ${(error as Error).message}`, {
        fix: `check that the registry ${target.host} runs and accepts pushes from this machine, then publish again (what was pushed is not pushed twice)`,
        cause: error,
      });
    }
    if (!digest) throw new ItemError('registry-no-digest', `${what}: pushed ${named}, but the registry names no digest for it`);
    return digest;
  };
  const reused: string[] = [];
  const repositoryOf = (path: string) => (target.prefix ? `${target.prefix}/${path}` : path);

  /** An image whole in the registry, or the error naming what it lacks. */
  const checkWhole = async (repository: string, digest: string, what: string): Promise<void> => {
    const missing = await api.missing(target.host, repository, digest);
    if (missing.length > 0)
      throw new ItemError(
        'registry-incomplete',
        `${what}: the registry ${target.host} lacks ${missing.join(', ')} of ${target.host}/${repository}@${digest}`,
        {
          fix: 'push the image again from an engine that has it (perfmine publish --registry from the machine that built it), or rebuild it',
        },
      );
  };

  // the base images, each once
  const bases = new Map<string, string>();
  for (const base of [...new Set(tasks.flatMap((t) => dockerfileBases(t.files['Dockerfile'] ?? '')))].sort()) {
    const ref = parseImageRef(base);
    if (!ref) throw new ItemError('bad-base-image', `a task's Dockerfile starts from ${base}, which is not an image reference`);
    if (ref.digest && ref.registry === target.host) {
      // already published by digest (a folder written by an earlier publish)
      await checkWhole(ref.repository, ref.digest, `the base image ${base}`);
      bases.set(base, base);
      reused.push(base);
      continue;
    }
    const facts = await docker.inspectImage(base);
    if (!facts)
      throw new ConfigError(`the base image ${base} is not in this Docker engine: publish pushes it from the engine that built the tasks`, {
        reason: 'no-base-image',
        fix: 'run publish on the machine that ran synthesize, or build the base there first (scripts/build-base-image.sh: the same recipe gives the same packages)',
      });
    const repository = repositoryOf(ref.repository);
    const named = `${target.host}/${repository}:${ref.tag ?? 'latest'}`;
    // pushed there before (the engine keeps the digest the registry gave it), and the registry holds it whole: nothing to push
    const known = facts.repoDigests.map(parseImageRef).find((r) => r?.registry === target.host && r.repository === repository && r.digest);
    // missing() names a lost manifest too: one look at the registry, not two
    if (known?.digest) {
      const missing = await api.missing(target.host, repository, known.digest);
      if (missing.length === 0) {
        const byDigest = formatImageRef({ registry: target.host, repository, tag: null, digest: known.digest });
        log.info({ image: base, ref: byDigest }, 'the base image is in the registry already');
        bases.set(base, byDigest);
        reused.push(byDigest);
        continue;
      }
      log.warn({ image: base, ref: named, missing }, 'the registry lost part of the base image: pushing it again');
    }
    log.info({ image: base, to: named }, 'pushing a base image');
    await docker.tagImage(base, named);
    const digest = await push(named, repository, ref.tag ?? 'latest', `the base image ${base}`);
    await checkWhole(repository, digest, `the base image ${base}`);
    const byDigest = formatImageRef({ registry: target.host, repository, tag: null, digest });
    bases.set(base, byDigest);
    pushed.push(byDigest);
  }

  const out: MonthTask[] = [];
  for (const task of tasks) {
    const id = task.row.instance_id;
    const own = dockerfileBases(task.files['Dockerfile'] ?? '');
    const rebased = withBases(task, new Map(own.map((b) => [b, bases.get(b)!])));
    const files = harborEnvironmentFiles(rebased);
    const repository = repositoryOf(`perfmine/${repositoryComponent(id)}`);
    const key = environmentKey(files);
    const named = `${target.host}/${repository}:${key}`;
    let digest = await api.manifestDigest(target.host, repository, key);
    if (digest && (await api.missing(target.host, repository, digest)).length === 0) {
      log.info({ task: id, image: named }, 'the environment image is in the registry already');
      reused.push(`${target.host}/${repository}@${digest}`);
    } else {
      log.info({ task: id, image: named }, 'building the environment image (as Harbor does: environment/, no build arguments)');
      const built = await docker.buildImage({
        tag: named,
        context: contextOf(files),
        labels: { 'org.perfmine.task': id },
        network: 'default',
        timeoutMs: deps.buildTimeoutMs,
        ...(deps.limits ? { limits: deps.limits } : {}),
      });
      if (!built.ok)
        throw new ItemError(
          'environment-build-failed',
          `${id}: its environment/ did not build, so ${named} was not pushed: ${built.error ?? (built.timedOut ? 'timed out' : 'failed')}\n${built.log.slice(-2000)}`,
          { fix: 'build the folder by hand (docker build environment/) to see why; the published folder was left as it was' },
        );
      log.info({ task: id, image: named }, 'pushing the environment image');
      digest = await push(named, repository, key, `${id}'s environment image`);
      await checkWhole(repository, digest, `${id}'s environment image`);
      pushed.push(`${target.host}/${repository}@${digest}`);
    }
    const images: TaskImages = {
      environment: formatImageRef({ registry: target.host, repository, tag: null, digest }),
      bases: Object.fromEntries(own.map((b) => [b, bases.get(b)!])),
    };
    out.push(withImages(rebased, images));
  }
  return { tasks: out, pushed, reused };
}
