import Docker from 'dockerode';
import { OutsideServiceError } from '../errors.js';
import { TailBuffer } from './tail.js';

/** Every container and image perfmine creates carries this label (value: the run id or `1`). */
export const PERFMINE_LABEL = 'org.perfmine';

export interface ContainerLimits {
  readonly cpus: number;
  readonly memoryMb: number;
  readonly pidsLimit: number;
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
}

export interface RunResult {
  /** Null when the container was killed at its timeout. */
  readonly exitCode: number | null;
  readonly timedOut: boolean;
  readonly stdout: string;
  readonly stderr: string;
  readonly durationMs: number;
}

/** The container adapter: everything perfmine does with the Docker engine goes through here. */
export class DockerService {
  readonly docker: Docker;
  readonly #runLabel: string;

  constructor(options: { docker?: Docker; runLabel?: string } = {}) {
    // dockerode reads DOCKER_HOST (and DOCKER_TLS_VERIFY / DOCKER_CERT_PATH) itself.
    this.docker = options.docker ?? new Docker();
    this.#runLabel = options.runLabel ?? '1';
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

  async imageExists(tag: string): Promise<boolean> {
    try {
      await this.docker.getImage(tag).inspect();
      return true;
    } catch (error) {
      if ((error as { statusCode?: number }).statusCode === 404) return false;
      throw wrap(error, 'docker-inspect-failed');
    }
  }

  /**
   * Runs a command in a fresh container with limits, never privileged, with no network unless
   * asked, and kills it at its timeout. The container is removed afterwards in every case.
   */
  async run(spec: RunSpec, signal?: AbortSignal): Promise<RunResult> {
    const started = Date.now();
    const tail = spec.tailChars ?? 8_000;
    const stdout = new TailBuffer(tail);
    const stderr = new TailBuffer(tail);
    let container: Docker.Container;
    try {
      container = await this.docker.createContainer({
        Image: spec.image,
        Cmd: [...spec.cmd],
        Env: Object.entries(spec.env ?? {}).map(([k, v]) => `${k}=${v}`),
        WorkingDir: spec.workingDir ?? '',
        Tty: false,
        AttachStdout: true,
        AttachStderr: true,
        Labels: { [PERFMINE_LABEL]: this.#runLabel, ...spec.labels },
        NetworkDisabled: (spec.network ?? 'none') === 'none',
        HostConfig: {
          NetworkMode: spec.network ?? 'none',
          NanoCpus: Math.round(spec.limits.cpus * 1e9),
          Memory: spec.limits.memoryMb * 1024 * 1024,
          MemorySwap: spec.limits.memoryMb * 1024 * 1024,
          PidsLimit: spec.limits.pidsLimit,
          Privileged: false,
          SecurityOpt: ['no-new-privileges'],
          AutoRemove: false,
        },
      });
    } catch (error) {
      throw wrap(error, 'docker-create-failed');
    }
    let timedOut = false;
    const kill = () => container.kill().catch(() => undefined);
    try {
      const stream = await container.attach({ stream: true, stdout: true, stderr: true });
      const ended = new Promise<void>((resolve) => {
        stream.on('end', resolve);
        stream.on('close', resolve);
        stream.on('error', () => resolve());
      });
      this.docker.modem.demuxStream(stream, stdout, stderr);
      // `next-exit`: a wait registered before start must not return for the not-yet-started container.
      const waited = container.wait({ condition: 'next-exit' }) as Promise<{ StatusCode: number }>;
      await container.start();
      const timer = setTimeout(() => {
        timedOut = true;
        void kill();
      }, spec.timeoutMs);
      const onAbort = () => void kill();
      signal?.addEventListener('abort', onAbort, { once: true });
      let status: { StatusCode: number };
      try {
        status = await waited;
      } finally {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
      }
      await ended;
      return {
        exitCode: timedOut ? null : status.StatusCode,
        timedOut,
        stdout: stdout.text(),
        stderr: stderr.text(),
        durationMs: Date.now() - started,
      };
    } catch (error) {
      throw wrap(error, 'docker-run-failed');
    } finally {
      await container.remove({ force: true }).catch(() => undefined);
    }
  }
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
