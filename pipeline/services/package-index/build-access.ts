import type { BindMount } from '../docker.js';
import { FORWARDER_FILE, forwarderStartLine, SOCKET_FILE } from './forwarder.js';

/**
 * Where a build container sees the time machine's socket directory (mounted read-only). `/mnt`
 * exists (empty) in Debian images, so mounting there leaves nothing in an image committed from the
 * container; a new mount point would stay behind as an empty directory.
 */
export const INDEX_MOUNT_DIR = '/mnt';
/** The port the forwarder listens on inside the container (its own network namespace: any port is free). */
export const INDEX_PORT = 3141;

export interface IndexAccessOptions {
  /** `TimeMachine.socketDir`. */
  readonly socketDir: string;
  /** `TimeMachine.cutoff`. */
  readonly cutoff: Date | null;
  readonly missingUploadTime: 'exclude' | 'include';
  /** `synthesize.index.timeoutSeconds` and `retries`: the clients wait at least as long as the time machine may. */
  readonly timeoutSeconds: number;
  readonly retries: number;
  readonly port?: number;
  /** Where the socket's directory is mounted (default INDEX_MOUNT_DIR). */
  readonly mountDir?: string;
}

/** What a build container needs to reach the time machine and nothing else. */
export interface IndexAccess {
  /** Add to the container's RunSpec (`mounts`). */
  readonly mounts: readonly BindMount[];
  /** The index URL inside the container. */
  readonly indexUrl: string;
  /** The environment pip and uv read (see `indexEnvironment`). */
  readonly env: Readonly<Record<string, string>>;
  /** Starts the forwarder; returns once it listens, non-zero when it cannot. */
  readonly startLine: string;
  /**
   * One shell line for the top of the build command: the forwarder started, then `env` exported.
   * Exported by the shell rather than given as the container's environment, so that
   * `docker commit` does not keep a dead index address in the image's configuration.
   */
  readonly prelude: string;
}

/**
 * The environment of a build behind the time machine, for whichever installer the image has:
 * - `PIP_INDEX_URL`, `UV_INDEX_URL` (older uv) and `UV_DEFAULT_INDEX`: the time machine;
 * - `UV_EXCLUDE_NEWER`: the cutoff, when every served file has an upload time (uv leaves out
 *   files without one when it is set; with `missingUploadTime: include` it is not set);
 * - `PIP_NO_CACHE_DIR`, `UV_NO_CACHE`: no installer cache, because the cache would enter the
 *   committed image (size, and files no lock records) and because every build's time machine
 *   answers at the same address with another cutoff;
 * - `PIP_DEFAULT_TIMEOUT`, `UV_HTTP_TIMEOUT`: longer than the time machine may take over an
 *   upstream request with its retries, so that the client does not give up first.
 */
export function indexEnvironment(
  options: Omit<IndexAccessOptions, 'socketDir' | 'port' | 'mountDir'> & { readonly indexUrl: string },
): Record<string, string> {
  const backoffSeconds = 0.5 * (2 ** options.retries - 1);
  const patience = String(Math.ceil(options.timeoutSeconds * (options.retries + 1) + backoffSeconds + 5));
  return {
    PIP_INDEX_URL: options.indexUrl,
    UV_INDEX_URL: options.indexUrl,
    UV_DEFAULT_INDEX: options.indexUrl,
    ...(options.cutoff !== null && options.missingUploadTime === 'exclude' ? { UV_EXCLUDE_NEWER: options.cutoff.toISOString() } : {}),
    PIP_NO_CACHE_DIR: '1',
    UV_NO_CACHE: '1',
    PIP_DEFAULT_TIMEOUT: patience,
    UV_HTTP_TIMEOUT: patience,
  };
}

/** Mounts, environment and the forwarder's start line of a build behind the time machine. */
export function indexAccess(options: IndexAccessOptions): IndexAccess {
  const port = options.port ?? INDEX_PORT;
  const indexUrl = `http://127.0.0.1:${port}/simple/`;
  const env = indexEnvironment({ ...options, indexUrl });
  const mountDir = options.mountDir ?? INDEX_MOUNT_DIR;
  const startLine = forwarderStartLine({ script: `${mountDir}/${FORWARDER_FILE}`, socket: `${mountDir}/${SOCKET_FILE}`, port });
  const exports = Object.entries(env)
    .map(([k, v]) => `${k}='${v.replace(/'/g, "'\\''")}'`)
    .join(' ');
  return {
    mounts: [{ source: options.socketDir, target: mountDir, readOnly: true }],
    indexUrl,
    env,
    startLine,
    prelude: `${startLine} && export ${exports}`,
  };
}
