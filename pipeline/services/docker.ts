import type { Duplex } from 'node:stream';
import type Docker from 'dockerode';
import { lazyRequire } from './lazy-require.js';

const dockerode = lazyRequire<typeof Docker>('dockerode');
import { InternalError, OutsideServiceError } from '../errors.js';
import type { Metrics } from '../metrics.js';
import { currentOwner, formatOwner, ownerIsGone } from './owner.js';
import { ContainerSession } from './container-session.js';
import { TailBuffer } from './tail.js';
import { packEntries, unpackToMap, type TarEntry } from './tar.js';

/** Every container and image perfmine creates carries this label (value: the run id or `1`). */
const MIB = 1024 * 1024;

export const PERFMINE_LABEL = 'org.perfmine';
/**
 * Who created a container (`host/pidns:pid:starttime`): how leftovers of a crashed run are
 * recognised. Images carry it empty (containers inherit their image's labels, and a container
 * someone else starts from a perfmine image must not look like this process's leftover); an
 * image's creator is IMAGE_OWNER_LABEL instead.
 */
export const OWNER_LABEL = 'org.perfmine.owner';
export const IMAGE_OWNER_LABEL = 'org.perfmine.image-owner';
/** Tags of images that are not (yet) results end with this suffix and a number. */
export const TRANSIENT_TAG_RE = /-attempt-\d+$/;
/** Environment variable names that never enter a container (credentials, and the engine itself). */
export const FORBIDDEN_ENV_RE = /TOKEN|SECRET|PASSWORD|API_KEY|CREDENTIAL|^DOCKER_|^GOOGLE_APPLICATION/i;
/**
 * Marks every layer of one build (a LABEL right after the first FROM, so intermediate layers
 * carry it too): a failed build's dangling layers are found by it and pruned.
 */
export const BUILD_LABEL = 'org.perfmine.build';

/** The Dockerfile with `LABEL org.perfmine.build=<id>` right after its first FROM. Pure. */
export function labelledDockerfile(dockerfile: string, buildId: string): string {
  const lines = dockerfile.split('\n');
  const from = lines.findIndex((l) => /^\s*FROM\s/i.test(l));
  if (from < 0) return dockerfile;
  lines.splice(from + 1, 0, `LABEL ${BUILD_LABEL}=${buildId}`);
  return lines.join('\n');
}

let buildSequence = 0;

/**
 * Whether an image's builder (IMAGE_OWNER_LABEL) no longer needs it: unrecorded (built before
 * the label), this process (`mine`), or provably gone. An image of another live process, or of
 * one this host cannot judge (another host or PID namespace), may be in use: that process may
 * be about to build on it by its tag. Pure but for the process table `gone` reads.
 */
export function imageBuilderDone(builder: string | undefined, mine: string, gone: (owner: string) => boolean = ownerIsGone): boolean {
  if (builder === undefined || builder === '' || builder === mine) return true;
  return gone(builder);
}

export interface ContainerLimits {
  readonly cpus: number;
  readonly memoryMb: number;
  readonly pidsLimit: number;
  /**
   * What the container may write, in MiB: no file may grow past it (RLIMIT_FSIZE: the writer gets
   * SIGXFSZ), and the container is killed when its writable layer outgrows it (a watchdog checks
   * every `diskCheckMs`). Unset: neither.
   */
  readonly diskMb?: number;
  readonly diskCheckMs?: number;
}

/** The limits of every container, as the `docker` section of the configuration sets them. */
export function containerLimits(docker: {
  cpus: number;
  memoryMb: number;
  pidsLimit: number;
  diskMb: number;
  diskCheckSeconds: number;
}): ContainerLimits {
  return {
    cpus: docker.cpus,
    memoryMb: docker.memoryMb,
    pidsLimit: docker.pidsLimit,
    diskMb: docker.diskMb,
    diskCheckMs: docker.diskCheckSeconds * 1000,
  };
}

/** A host directory or file bind-mounted into a container (`HostConfig.Binds`). */
export interface BindMount {
  /** Absolute path on the Docker engine's host. */
  readonly source: string;
  /** Absolute path in the container. */
  readonly target: string;
  readonly readOnly?: boolean;
}

export interface RunSpec {
  readonly image: string;
  readonly cmd: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
  /** `none` (default) or `bridge` for the rare step that needs the network. */
  readonly network?: 'none' | 'bridge';
  readonly timeoutMs: number;
  readonly limits: ContainerLimits;
  readonly workingDir?: string;
  /** Characters of stdout and stderr kept (default 8,000 each). */
  readonly tailChars?: number;
  readonly labels?: Readonly<Record<string, string>>;
  /** Files written into the container before it starts (paths relative to `/`). */
  readonly files?: readonly TarEntry[];
  /**
   * Host paths bind-mounted into the container (e.g. the package index's socket directory). Not
   * part of an image committed from it (`docker commit` leaves mounts out).
   */
  readonly mounts?: readonly BindMount[];
  /** CPUs the container may run on (`HostConfig.CpusetCpus`), e.g. `1`; null or absent: any. */
  readonly cpuset?: string | null;
  /** Paths (files or directories) read out of the container after it stops, before it is removed. */
  readonly collect?: readonly string[];
  /** Bytes of collected files kept in all (default 64 MiB); files past it are left out. */
  readonly collectMaxBytes?: number;
  /** Commit the stopped container to this image when it exited 0 within its time. */
  readonly commit?: { readonly repo: string; readonly tag: string; readonly changes?: readonly string[] };
  /** Live output, for logs at debug level. */
  readonly onOutput?: (stream: 'stdout' | 'stderr', text: string) => void;
}

export interface SessionSpec extends Omit<RunSpec, 'timeoutMs' | 'collect' | 'collectMaxBytes' | 'commit' | 'onOutput'> {
  /** CPUs the container may run on (`HostConfig.CpusetCpus`), e.g. `1`; null or absent: any. */
  readonly cpuset?: string | null;
  /** The session is killed after this long, whatever it is doing. */
  readonly maxLifetimeMs: number;
}

export interface RunResult {
  /** Null when the container was killed at its timeout. */
  readonly exitCode: number | null;
  readonly timedOut: boolean;
  /** Killed because its writable layer outgrew `limits.diskMb`. */
  readonly diskExceeded: boolean;
  readonly stdout: string;
  readonly stderr: string;
  readonly durationMs: number;
  /** The committed image (`RunSpec.commit`), or null when nothing was committed. */
  readonly imageId: string | null;
  /** Collected files by archive path (a collected directory `d` gives `d/...` entries). */
  readonly files: ReadonlyMap<string, Buffer>;
}

export interface BuildSpec {
  /** The build context: must hold a `Dockerfile`. */
  readonly context: readonly TarEntry[];
  /** `name:tag`. */
  readonly tag: string;
  readonly labels?: Readonly<Record<string, string>>;
  readonly buildArgs?: Readonly<Record<string, string>>;
  /**
   * Network of the build's RUN steps: `none` (default), `default` (e.g. a clone from GitHub), or
   * `host` (a package index served on this host's loopback, as `perfmine replay --index` does).
   */
  readonly network?: 'none' | 'default' | 'host';
  /** Build every step again, whatever the engine's build cache holds (`docker build --no-cache`). */
  readonly noCache?: boolean;
  readonly timeoutMs: number;
  readonly limits?: ContainerLimits;
  readonly tailChars?: number;
}

export interface BuildResult {
  readonly ok: boolean;
  readonly imageId: string | null;
  readonly timedOut: boolean;
  /** Tail of the build output. */
  readonly log: string;
  /** The engine's error message, when the build failed. */
  readonly error: string | null;
  readonly durationMs: number;
}

export interface ImageFacts {
  readonly id: string;
  readonly tags: readonly string[];
  readonly labels: Readonly<Record<string, string>>;
  readonly created: string;
  /** `registry/repository@sha256:...` of each registry the image was pushed to or pulled from. */
  readonly repoDigests: readonly string[];
}

/** What the engine says of its machine (`docker info`), for the record of a measurement; null where it does not say. */
export interface EngineFacts {
  readonly cpus: number | null;
  readonly memoryBytes: number | null;
  readonly kernel: string | null;
  readonly os: string | null;
  readonly serverVersion: string | null;
  readonly cgroupVersion: string | null;
}

export interface DockerServiceOptions {
  readonly docker?: Docker;
  /** Value of the `org.perfmine` label on everything this service creates. */
  readonly runLabel?: string;
  readonly metrics?: Metrics;
}

/** The container adapter: everything perfmine does with the Docker engine goes through here. */
export class DockerService {
  readonly docker: Docker;
  readonly runLabel: string;
  readonly #owner: string;
  readonly #metrics: Metrics | undefined;

  constructor(options: DockerServiceOptions = {}) {
    // dockerode reads DOCKER_HOST (and DOCKER_TLS_VERIFY / DOCKER_CERT_PATH) itself.
    this.docker = options.docker ?? new (dockerode())();
    this.runLabel = options.runLabel ?? '1';
    this.#owner = formatOwner(currentOwner());
    this.#metrics = options.metrics;
  }

  /** The labels of every container this service creates. */
  labels(extra: Readonly<Record<string, string>> = {}): Record<string, string> {
    return { ...extra, [PERFMINE_LABEL]: this.runLabel, [OWNER_LABEL]: this.#owner };
  }

  /**
   * Whether this process may untag an image it found superseded (an older clone of a
   * repository): only when nothing another live perfmine process built is taken from under it.
   */
  mayUntag(image: Pick<Docker.ImageInfo, 'Labels'>): boolean {
    return imageBuilderDone(image.Labels?.[IMAGE_OWNER_LABEL], this.#owner);
  }

  /** The labels of every image this service builds or commits. */
  imageLabels(extra: Readonly<Record<string, string>> = {}): Record<string, string> {
    return { ...extra, [PERFMINE_LABEL]: this.runLabel, [IMAGE_OWNER_LABEL]: this.#owner, [OWNER_LABEL]: '' };
  }

  /** The engine's version, or an OutsideServiceError that says how to start one. */
  async ping(): Promise<{ version: string; apiVersion: string }> {
    try {
      const v = await this.docker.version();
      return { version: v.Version, apiVersion: v.ApiVersion };
    } catch (error) {
      throw new OutsideServiceError('docker', 'docker-unreachable', `the Docker engine does not answer: ${(error as Error).message}`, {
        fix: 'start it with scripts/setup-docker.sh (as root), or set DOCKER_HOST',
        cause: error,
      });
    }
  }

  /** CPUs of the engine's machine (`docker info`'s NCPU). */
  async hostCpus(): Promise<number> {
    try {
      const info = (await this.docker.info()) as { NCPU?: number };
      return info.NCPU ?? 1;
    } catch (error) {
      throw wrap(error, 'docker-info-failed');
    }
  }

  /** The engine's machine as `docker info` describes it. */
  async engineFacts(): Promise<EngineFacts> {
    let info: Record<string, unknown>;
    try {
      info = (await this.docker.info()) as Record<string, unknown>;
    } catch (error) {
      throw wrap(error, 'docker-info-failed');
    }
    const str = (k: string) => (typeof info[k] === 'string' && info[k] !== '' ? (info[k] as string) : null);
    const num = (k: string) => (typeof info[k] === 'number' ? (info[k] as number) : null);
    return {
      cpus: num('NCPU'),
      memoryBytes: num('MemTotal'),
      kernel: str('KernelVersion'),
      os: str('OperatingSystem'),
      serverVersion: str('ServerVersion'),
      cgroupVersion: str('CgroupVersion'),
    };
  }

  async imageExists(tag: string): Promise<boolean> {
    return (await this.inspectImage(tag)) !== null;
  }

  /** Id, tags and labels of an image, or null when there is none. */
  async inspectImage(tag: string): Promise<ImageFacts | null> {
    try {
      const info = await this.docker.getImage(tag).inspect();
      return {
        id: info.Id,
        tags: info.RepoTags ?? [],
        labels: info.Config?.Labels ?? {},
        created: info.Created,
        repoDigests: info.RepoDigests ?? [],
      };
    } catch (error) {
      if ((error as { statusCode?: number }).statusCode === 404) return null;
      throw wrap(error, 'docker-inspect-failed');
    }
  }

  /** An image's id and configured environment (`Config.Env`, `NAME=value`), or null when there is none. */
  async imageConfig(image: string): Promise<{ id: string; env: string[] } | null> {
    try {
      const info = await this.docker.getImage(image).inspect();
      return { id: info.Id, env: info.Config?.Env ?? [] };
    } catch (error) {
      if ((error as { statusCode?: number }).statusCode === 404) return null;
      throw wrap(error, 'docker-inspect-failed');
    }
  }

  /**
   * Hands an image's filesystem, as a tar stream, to `consume`, running nothing from the image: a
   * container is created from it and never started, its export read, and the container removed
   * whatever happens (it carries the labels of every container, so a crashed run's is removed at
   * the next start). The stream is destroyed when `consume` ends early or `signal` aborts.
   */
  async exportImage<T>(image: string, consume: (archive: NodeJS.ReadableStream) => Promise<T>, signal?: AbortSignal): Promise<T> {
    let container: Docker.Container;
    try {
      container = await this.docker.createContainer({
        Image: image,
        // Never started: an entrypoint that does not exist, so that a start by mistake runs nothing.
        Entrypoint: ['/perfmine-export-never-started'],
        Cmd: [],
        Labels: this.labels({ 'org.perfmine.role': 'export' }),
        NetworkDisabled: true,
        HostConfig: { NetworkMode: 'none', Privileged: false, AutoRemove: false, Binds: [] },
      });
    } catch (error) {
      throw wrap(error, 'docker-create-failed');
    }
    let archive: NodeJS.ReadableStream | undefined;
    const destroy = () => (archive as { destroy?: (error?: Error) => void } | undefined)?.destroy?.(new Error('export aborted'));
    signal?.addEventListener('abort', destroy, { once: true });
    try {
      try {
        archive = await container.export();
      } catch (error) {
        throw wrap(error, 'docker-export-failed');
      }
      if (signal?.aborted) destroy();
      return await consume(archive);
    } finally {
      signal?.removeEventListener('abort', destroy);
      (archive as { destroy?: () => void } | undefined)?.destroy?.();
      await container.remove({ force: true }).catch(() => undefined);
    }
  }

  /** Adds a tag (`name:tag`) to an image. */
  async tagImage(image: string, target: string): Promise<void> {
    const { repo, tag } = splitTag(target);
    try {
      await this.docker.getImage(image).tag({ repo, tag });
    } catch (error) {
      throw wrap(error, 'docker-tag-failed');
    }
  }

  /**
   * Pushes an image (`host:port/name:tag`) to its registry and returns the manifest's digest the
   * registry answered (`sha256:...`; null when the engine did not report one); the registry's
   * refusal is an OutsideServiceError.
   */
  async pushImage(ref: string): Promise<string | null> {
    const { repo, tag } = splitTag(ref);
    try {
      const stream = (await this.docker.getImage(repo).push({ tag })) as NodeJS.ReadableStream;
      let digest: string | null = null;
      await this.#progress(stream, (event) => {
        const d = (event.aux as { Digest?: unknown } | undefined)?.Digest;
        if (typeof d === 'string' && /^sha256:[0-9a-f]{64}$/.test(d)) digest = d;
      });
      return digest;
    } catch (error) {
      throw wrap(error, 'docker-push-failed');
    }
  }

  /** Pulls an image (`host:port/name:tag`); false when the registry does not have it. */
  async pullImage(ref: string): Promise<boolean> {
    try {
      const stream = (await this.docker.pull(ref)) as NodeJS.ReadableStream;
      await this.#progress(stream);
      return true;
    } catch (error) {
      const status = (error as { statusCode?: number }).statusCode;
      if (status === 404 || /not found|manifest unknown/i.test((error as Error).message)) return false;
      throw wrap(error, 'docker-pull-failed');
    }
  }

  /** Follows a push or pull to its end; an error event in the stream rejects. */
  #progress(stream: NodeJS.ReadableStream, onEvent?: (event: { error?: string; aux?: unknown }) => void): Promise<void> {
    return new Promise((resolve, reject) => {
      let failure: string | null = null;
      this.docker.modem.followProgress(
        stream,
        (err: Error | null) => {
          const message = err?.message ?? failure;
          if (message) reject(new Error(message));
          else resolve();
        },
        (event: { error?: string; aux?: unknown }) => {
          if (event.error) failure ??= event.error;
          onEvent?.(event);
        },
      );
    });
  }

  /** Removes a tag (the image goes when its last tag does). Missing images are fine. */
  async removeImage(tag: string): Promise<void> {
    try {
      await this.docker.getImage(tag).remove({ noprune: false });
    } catch (error) {
      const status = (error as { statusCode?: number }).statusCode;
      if (status === 404) return;
      if (status === 409) return; // still used by a container or another tag's children: keep it
      throw wrap(error, 'docker-remove-failed');
    }
  }

  /**
   * Builds an image from a generated context (a tar stream). The build is cancelled at its
   * timeout (the request is aborted, and the engine stops the build and removes its containers).
   * A failed build is a result, not an error: only an engine that does not answer throws. Every
   * layer of the build carries a build label, so that a failed build's dangling layers are pruned.
   */
  async buildImage(spec: BuildSpec, signal?: AbortSignal): Promise<BuildResult> {
    const buildId = `${this.runLabel}-${process.pid}-${++buildSequence}`;
    const context = spec.context.map((entry) =>
      entry.name === 'Dockerfile' && (typeof entry.content === 'string' || Buffer.isBuffer(entry.content))
        ? { ...entry, content: labelledDockerfile(entry.content.toString(), buildId) }
        : entry,
    );
    const result = await this.#build({ ...spec, context }, signal);
    if (!result.ok) {
      await this.docker.pruneImages({ filters: { dangling: ['true'], label: [`${BUILD_LABEL}=${buildId}`] } }).catch(() => undefined);
    }
    return result;
  }

  async #build(spec: BuildSpec, signal?: AbortSignal): Promise<BuildResult> {
    const started = Date.now();
    const log = new TailBuffer(spec.tailChars ?? 8_000);
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, spec.timeoutMs);
    const onAbort = () => controller.abort();
    signal?.addEventListener('abort', onAbort, { once: true });
    const limits = spec.limits;
    let imageId: string | null = null;
    let error: string | null = null;
    try {
      const stream = await this.docker.buildImage(packEntries(spec.context) as unknown as NodeJS.ReadableStream, {
        t: spec.tag,
        labels: this.imageLabels(spec.labels),
        buildargs: { ...spec.buildArgs },
        networkmode: spec.network ?? 'none',
        ...(spec.noCache ? { nocache: true } : {}),
        rm: true,
        forcerm: true,
        ...(limits
          ? {
              memory: limits.memoryMb * 1024 * 1024,
              memswap: limits.memoryMb * 1024 * 1024,
              cpuperiod: 100_000,
              cpuquota: Math.round(limits.cpus * 100_000),
            }
          : {}),
        abortSignal: controller.signal,
      });
      await new Promise<void>((resolve) => {
        this.docker.modem.followProgress(
          stream,
          (err: Error | null) => {
            if (err && !error) error = err.message;
            resolve();
          },
          (event: { stream?: string; error?: string; aux?: { ID?: string } }) => {
            if (event.stream) log.write(event.stream);
            if (event.error) {
              error = event.error;
              log.write(`${event.error}\n`);
            }
            if (event.aux?.ID) imageId = event.aux.ID;
          },
        );
      });
    } catch (e) {
      if (!timedOut && !signal?.aborted) {
        const status = (e as { statusCode?: number }).statusCode;
        // A 4xx/5xx from /build with a message is the build's own failure (e.g. a bad Dockerfile).
        if (status === undefined) throw wrap(e, 'docker-build-failed');
      }
      error = (e as Error).message;
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    }
    if (timedOut) error = `build timed out after ${spec.timeoutMs} ms`;
    const durationMs = Date.now() - started;
    this.#metrics?.add('docker.builds');
    this.#metrics?.add('docker.buildMs', durationMs);
    const ok = !timedOut && error === null && imageId !== null;
    return { ok, imageId: ok ? imageId : null, timedOut, log: log.text(), error, durationMs };
  }

  /**
   * Runs a command in a fresh container with limits, never privileged, with no network unless
   * asked, and kills it at its timeout. Optionally puts files in before it starts, reads files
   * out and commits it to an image after it stops. The container is removed in every case.
   */
  async run(spec: RunSpec, signal?: AbortSignal): Promise<RunResult> {
    const started = Date.now();
    const tail = spec.tailChars ?? 8_000;
    const stdout = new ForwardingTail(tail, spec.onOutput && ((text) => spec.onOutput?.('stdout', text)));
    const stderr = new ForwardingTail(tail, spec.onOutput && ((text) => spec.onOutput?.('stderr', text)));
    let container: Docker.Container;
    const options = this.#containerOptions(spec, { stdin: false });
    try {
      container = await this.docker.createContainer(options);
    } catch (error) {
      throw wrap(error, 'docker-create-failed');
    }
    let timedOut = false;
    let diskExceeded = false;
    const kill = () => container.kill().catch(() => undefined);
    try {
      if (spec.files && spec.files.length > 0) {
        await container.putArchive(packEntries(spec.files) as unknown as NodeJS.ReadableStream, { path: '/' });
      }
      const stream = await container.attach({ stream: true, stdout: true, stderr: true });
      const ended = new Promise<void>((resolve) => {
        stream.on('end', resolve);
        stream.on('close', resolve);
        stream.on('error', () => resolve());
      });
      this.docker.modem.demuxStream(stream, stdout, stderr);
      // `next-exit`: the default (`not-running`) may answer at once for a container not started yet.
      const waited = container.wait({ condition: 'next-exit' }) as Promise<{ StatusCode: number }>;
      await container.start();
      const timer = setTimeout(() => {
        timedOut = true;
        void kill();
      }, spec.timeoutMs);
      const onAbort = () => void kill();
      signal?.addEventListener('abort', onAbort, { once: true });
      const watchdog =
        spec.limits.diskMb === undefined
          ? null
          : this.#watchDisk(container, spec.limits.diskMb, spec.limits.diskCheckMs ?? 10_000, () => {
              diskExceeded = true;
              void kill();
            });
      let status: { StatusCode: number };
      try {
        status = await waited;
      } finally {
        clearTimeout(timer);
        if (watchdog) clearInterval(watchdog);
        signal?.removeEventListener('abort', onAbort);
      }
      await ended;
      const exitCode = timedOut || diskExceeded ? null : status.StatusCode;
      const files = new Map<string, Buffer>();
      for (const path of spec.collect ?? []) {
        try {
          const archive = await container.getArchive({ path });
          for (const [name, data] of await unpackToMap(archive, spec.collectMaxBytes)) files.set(name, data);
        } catch (error) {
          if ((error as { statusCode?: number }).statusCode !== 404) throw error;
        }
      }
      let imageId: string | null = null;
      if (spec.commit && exitCode === 0) {
        const committed = (await container.commit({
          repo: spec.commit.repo,
          tag: spec.commit.tag,
          changes: [...(spec.commit.changes ?? []), ...Object.entries(this.imageLabels()).map(([k, v]) => `LABEL ${k}=${v}`)],
        })) as { Id?: string; id?: string };
        imageId = committed.Id ?? committed.id ?? null;
        this.#metrics?.add('docker.builds');
        this.#metrics?.add('docker.buildMs', Date.now() - started);
      }
      return {
        exitCode,
        timedOut,
        diskExceeded,
        stdout: stdout.text(),
        stderr: stderr.text(),
        durationMs: Date.now() - started,
        imageId,
        files,
      };
    } catch (error) {
      throw wrap(error, 'docker-run-failed');
    } finally {
      await container.remove({ force: true }).catch(() => undefined);
    }
  }

  /**
   * The create options of every container: limits, labels, no privileges, no mounts but the ones
   * asked for, no network unless asked, never a credential in the environment.
   */
  #containerOptions(
    spec: Omit<RunSpec, 'timeoutMs'> & { readonly cpuset?: string | null },
    io: { readonly stdin: boolean },
  ): Docker.ContainerCreateOptions {
    const forbidden = Object.keys(spec.env ?? {}).filter((k) => FORBIDDEN_ENV_RE.test(k));
    if (forbidden.length > 0)
      throw new InternalError('credential-in-container', `refusing to pass ${forbidden.join(', ')} into a container`);
    return {
      Image: spec.image,
      Cmd: [...spec.cmd],
      Env: Object.entries(spec.env ?? {}).map(([k, v]) => `${k}=${v}`),
      WorkingDir: spec.workingDir ?? '',
      Tty: false,
      AttachStdout: true,
      AttachStderr: true,
      ...(io.stdin ? { AttachStdin: true, OpenStdin: true, StdinOnce: true } : {}),
      Labels: this.labels(spec.labels),
      NetworkDisabled: (spec.network ?? 'none') === 'none',
      HostConfig: {
        NetworkMode: spec.network ?? 'none',
        NanoCpus: Math.round(spec.limits.cpus * 1e9),
        ...(spec.cpuset ? { CpusetCpus: spec.cpuset } : {}),
        Memory: spec.limits.memoryMb * 1024 * 1024,
        MemorySwap: spec.limits.memoryMb * 1024 * 1024,
        PidsLimit: spec.limits.pidsLimit,
        ...(spec.limits.diskMb === undefined
          ? {}
          : { Ulimits: [{ Name: 'fsize', Soft: spec.limits.diskMb * MIB, Hard: spec.limits.diskMb * MIB }] }),
        Privileged: false,
        CapDrop: ['NET_RAW', 'SYS_CHROOT', 'MKNOD', 'AUDIT_WRITE', 'SETFCAP'],
        SecurityOpt: ['no-new-privileges'],
        AutoRemove: false,
        Binds: (spec.mounts ?? []).map((m) => `${m.source}:${m.target}${m.readOnly ? ':ro' : ''}`),
      },
    };
  }

  /**
   * Starts a long-lived container to talk to in lines (stdin open, stdout read by line, stderr
   * kept as a tail), with the limits, labels and isolation of `run`, optionally pinned to CPUs
   * (`cpuset`, e.g. `1` or `0-1`). It is killed after `maxLifetimeMs` whatever happens; the
   * caller closes it (which removes it). A crashed perfmine's sessions are removed at the next
   * start like any labelled container.
   */
  async session(spec: SessionSpec, signal?: AbortSignal): Promise<ContainerSession> {
    let container: Docker.Container;
    const options = this.#containerOptions(spec, { stdin: true });
    try {
      container = await this.docker.createContainer(options);
    } catch (error) {
      throw wrap(error, 'docker-create-failed');
    }
    try {
      if (spec.files && spec.files.length > 0) {
        await container.putArchive(packEntries(spec.files) as unknown as NodeJS.ReadableStream, { path: '/' });
      }
      const stream = (await container.attach({ stream: true, stdin: true, stdout: true, stderr: true, hijack: true })) as unknown as Duplex;
      const waited = container.wait({ condition: 'next-exit' }) as Promise<{ StatusCode: number }>;
      await container.start();
      const session = new ContainerSession({
        container,
        stream,
        demux: (s, out, err) => this.docker.modem.demuxStream(s, out, err),
        waited,
        stderrChars: spec.tailChars ?? 64_000,
        maxLifetimeMs: spec.maxLifetimeMs,
      });
      // Removed when the session ends: a stage's signal outlives thousands of sessions, and each
      // listener left on it would keep its session (and the session's stderr tail) alive.
      const onAbort = () => void session.kill();
      signal?.addEventListener('abort', onAbort, { once: true });
      void session.exited.finally(() => signal?.removeEventListener('abort', onAbort));
      if (spec.limits.diskMb !== undefined) {
        const watchdog = this.#watchDisk(container, spec.limits.diskMb, spec.limits.diskCheckMs ?? 10_000, () => void session.kill());
        void session.exited.finally(() => clearInterval(watchdog));
      }
      return session;
    } catch (error) {
      await container.remove({ force: true }).catch(() => undefined);
      throw wrap(error, 'docker-run-failed');
    }
  }

  /** Checks the container's writable layer every `everyMs`; calls `exceeded` once it is larger than `limitMb`. */
  #watchDisk(container: Docker.Container, limitMb: number, everyMs: number, exceeded: () => void): NodeJS.Timeout {
    let checking = false;
    const timer = setInterval(() => {
      if (checking) return;
      checking = true;
      // `size=1` asks the engine for SizeRw (dockerode passes options as the query; its types lack it).
      const inspect = container.inspect.bind(container) as unknown as (options: { size: boolean }) => Promise<{ SizeRw?: number }>;
      inspect({ size: true })
        .then((info) => {
          if ((info.SizeRw ?? 0) > limitMb * MIB) {
            clearInterval(timer);
            exceeded();
          }
        })
        .catch(() => undefined)
        .finally(() => (checking = false));
    }, everyMs);
    timer.unref();
    return timer;
  }

  /** Containers carrying the perfmine label (with this value, when given). */
  async containers(labelValue?: string): Promise<Docker.ContainerInfo[]> {
    try {
      return await this.docker.listContainers({
        all: true,
        filters: { label: [labelValue === undefined ? PERFMINE_LABEL : `${PERFMINE_LABEL}=${labelValue}`] },
      });
    } catch (error) {
      throw wrap(error, 'docker-list-failed');
    }
  }

  /** Images carrying the perfmine label (with this value, when given). */
  async images(labelValue?: string): Promise<Docker.ImageInfo[]> {
    try {
      return await this.docker.listImages({
        all: false,
        filters: { label: [labelValue === undefined ? PERFMINE_LABEL : `${PERFMINE_LABEL}=${labelValue}`] },
      });
    } catch (error) {
      throw wrap(error, 'docker-list-failed');
    }
  }

  /**
   * Removes what a crashed perfmine process left behind: every labelled container whose owner
   * process is provably gone, and images of unfinished attempts (only transient tags) of such
   * owners. Objects of live processes, other hosts or other PID namespaces are never touched.
   * `labelValue` restricts it to one run label (tests).
   */
  async removeLeftovers(options: { readonly labelValue?: string } = {}): Promise<{ containers: string[]; images: string[] }> {
    const removedContainers: string[] = [];
    const removedImages: string[] = [];
    let containers: Docker.ContainerInfo[];
    let images: Docker.ImageInfo[];
    const label = [OWNER_LABEL, ...(options.labelValue === undefined ? [] : [`${PERFMINE_LABEL}=${options.labelValue}`])];
    try {
      containers = await this.docker.listContainers({ all: true, filters: { label } });
      images = await this.docker.listImages({ all: false, filters: { label: [IMAGE_OWNER_LABEL, ...label.slice(1)] } });
    } catch (error) {
      throw wrap(error, 'docker-list-failed');
    }
    for (const c of containers) {
      const owner = c.Labels?.[OWNER_LABEL];
      if (!owner || !ownerIsGone(owner)) continue;
      await this.docker
        .getContainer(c.Id)
        .remove({ force: true })
        .then(() => removedContainers.push(c.Id))
        .catch(() => undefined);
    }
    for (const image of images) {
      const owner = image.Labels?.[IMAGE_OWNER_LABEL];
      if (!owner || !ownerIsGone(owner)) continue;
      const tags = (image.RepoTags ?? []).filter((t) => t !== '<none>:<none>');
      if (tags.length === 0 || !tags.every((t) => TRANSIENT_TAG_RE.test(t))) continue;
      for (const tag of tags) {
        await this.removeImage(tag).catch(() => undefined);
      }
      removedImages.push(image.Id);
    }
    return { containers: removedContainers, images: removedImages };
  }

  /** Removes every image and container carrying `org.perfmine=<labelValue>` (tests; `--clean`). */
  async removeLabelled(labelValue: string): Promise<{ containers: number; images: number }> {
    let containers = 0;
    let images = 0;
    for (const c of await this.containers(labelValue)) {
      await this.docker
        .getContainer(c.Id)
        .remove({ force: true })
        .catch(() => undefined);
      containers += 1;
    }
    // Children must go before their parents: retry the ones that still have children while
    // each pass removes something.
    let pending = await this.images(labelValue);
    while (pending.length > 0) {
      const blocked: Docker.ImageInfo[] = [];
      for (const image of pending) {
        try {
          await this.docker.getImage(image.Id).remove({ force: true });
          images += 1;
        } catch (error) {
          const status = (error as { statusCode?: number }).statusCode;
          if (status === 409) blocked.push(image);
          else if (status !== 404) throw wrap(error, 'docker-remove-failed');
        }
      }
      if (blocked.length === pending.length) break;
      pending = blocked;
    }
    return { containers, images };
  }
}

/** A tail buffer that also hands every chunk to a listener (live logs). */
class ForwardingTail extends TailBuffer {
  readonly #listener: ((text: string) => void) | undefined;

  constructor(limit: number, listener: ((text: string) => void) | undefined) {
    super(limit);
    this.#listener = listener;
  }

  override _write(chunk: Buffer | string, encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.#listener?.(typeof chunk === 'string' ? chunk : chunk.toString('utf8'));
    super._write(chunk, encoding, callback);
  }
}

export function splitTag(ref: string): { repo: string; tag: string } {
  const slash = ref.lastIndexOf('/');
  const colon = ref.lastIndexOf(':');
  if (colon > slash) return { repo: ref.slice(0, colon), tag: ref.slice(colon + 1) };
  return { repo: ref, tag: 'latest' };
}

function wrap(error: unknown, reason: string): OutsideServiceError {
  if (error instanceof OutsideServiceError) return error;
  const status = (error as { statusCode?: number }).statusCode;
  return new OutsideServiceError('docker', reason, `Docker: ${(error as Error).message}`, {
    ...(status === undefined ? {} : { status }),
    retryable: status === undefined || status >= 500,
    cause: error,
  });
}
