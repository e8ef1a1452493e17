import { Readable } from 'node:stream';
import { pack } from 'tar-stream';
import { OutsideServiceError } from '../errors.js';
import { PERFMINE_LABEL, type DockerService } from './docker.js';
import { TailBuffer } from './tail.js';

/**
 * Derived images from an in-memory build context (a Dockerfile and a few files), built with
 * dockerode's `buildImage`, labelled like everything perfmine creates. Small functions beside the
 * foundation's DockerService rather than inside it (another branch extends that class); the
 * integrator may fold them in.
 */

export interface BuildSpec {
  readonly tag: string;
  readonly dockerfile: string;
  /** Context files by path (relative, `/`-separated). */
  readonly files?: Readonly<Record<string, string | Buffer>>;
  readonly labels?: Readonly<Record<string, string>>;
  /** `none` builds without network; default the engine's (bridge). */
  readonly network?: 'none' | 'default';
  readonly timeoutMs: number;
  /** Characters of build output kept (default 8,000). */
  readonly tailChars?: number;
}

export interface BuildResult {
  readonly ok: boolean;
  /** The engine's error message when the build failed. */
  readonly error: string | null;
  /** The tail of the build output (RUN steps' stdout and stderr included). */
  readonly log: string;
  readonly timedOut: boolean;
  readonly durationMs: number;
}

/** A tar archive of the context, entries sorted by path (same files, same bytes). */
export async function contextTar(files: Readonly<Record<string, string | Buffer>>): Promise<Buffer> {
  const archive = pack();
  const chunks: Buffer[] = [];
  archive.on('data', (c: unknown) => void chunks.push(c as Buffer));
  const done = new Promise<void>((resolve, reject) => {
    archive.on('end', resolve);
    archive.on('error', reject);
  });
  for (const path of Object.keys(files).sort()) {
    const content = files[path]!;
    archive.entry({ name: path, mode: path.endsWith('.sh') ? 0o755 : 0o644, mtime: new Date(0) }, typeof content === 'string' ? Buffer.from(content, 'utf8') : content);
  }
  archive.finalize();
  await done;
  return Buffer.concat(chunks);
}

interface BuildMessage {
  stream?: string;
  error?: string;
  errorDetail?: { message?: string };
}

/** The label that marks every layer of one build, so that a failed build's leftovers can be pruned. */
export const BUILD_LABEL = 'org.perfmine.build';

/** The Dockerfile with a LABEL right after its first FROM: intermediate layers then carry it too. */
export function labelledDockerfile(dockerfile: string, buildId: string): string {
  const lines = dockerfile.split('\n');
  const from = lines.findIndex((l) => /^\s*FROM\s/i.test(l));
  if (from < 0) return dockerfile;
  lines.splice(from + 1, 0, `LABEL ${BUILD_LABEL}=${buildId}`);
  return lines.join('\n');
}

let builds = 0;

/**
 * Builds a derived image; a failing Dockerfile step is a result (ok: false), an unreachable
 * engine an OutsideServiceError. A failed build's dangling intermediate layers are removed.
 */
export async function buildImage(service: DockerService, spec: BuildSpec, runLabel: string, signal?: AbortSignal): Promise<BuildResult> {
  const started = Date.now();
  const buildId = `${runLabel}-${process.pid}-${++builds}`;
  const result = await build(service, spec, runLabel, buildId, started, signal);
  if (!result.ok) {
    await service.docker.pruneImages({ filters: { dangling: ['true'], label: [`${BUILD_LABEL}=${buildId}`] } }).catch(() => undefined);
  }
  return result;
}

async function build(service: DockerService, spec: BuildSpec, runLabel: string, buildId: string, started: number, signal?: AbortSignal): Promise<BuildResult> {
  const tar = await contextTar({ ...spec.files, Dockerfile: labelledDockerfile(spec.dockerfile, buildId) });
  const timeout = AbortSignal.timeout(spec.timeoutMs);
  const abort = signal ? AbortSignal.any([signal, timeout]) : timeout;
  const log = new TailBuffer(spec.tailChars ?? 8_000);
  let stream: NodeJS.ReadableStream;
  try {
    stream = await service.docker.buildImage(Readable.from([tar]), {
      t: spec.tag,
      labels: { [PERFMINE_LABEL]: runLabel, ...spec.labels },
      forcerm: true,
      rm: true,
      ...(spec.network === 'none' ? { networkmode: 'none' } : {}),
      abortSignal: abort,
    });
  } catch (error) {
    if (timeout.aborted) return { ok: false, error: `the build ran past ${spec.timeoutMs} ms`, log: '', timedOut: true, durationMs: Date.now() - started };
    throw new OutsideServiceError('docker', 'docker-build-failed', `Docker: cannot start the build of ${spec.tag}: ${(error as Error).message}`, { retryable: true, cause: error });
  }
  let failure: string | null = null;
  try {
    await new Promise<void>((resolve, reject) => {
      service.docker.modem.followProgress(
        stream,
        (error) => (error ? reject(error) : resolve()),
        (message: BuildMessage) => {
          if (message.stream) log.write(message.stream);
          if (message.error) {
            failure = message.errorDetail?.message ?? message.error;
            log.write(`${failure}\n`);
          }
        },
      );
    });
  } catch (error) {
    if (timeout.aborted) return { ok: false, error: `the build ran past ${spec.timeoutMs} ms`, log: log.text(), timedOut: true, durationMs: Date.now() - started };
    if (signal?.aborted) throw error;
    failure ??= (error as Error).message;
  }
  return { ok: failure === null, error: failure, log: log.text(), timedOut: false, durationMs: Date.now() - started };
}

/** Removes an image perfmine built (missing is fine). */
export async function removeImage(service: DockerService, tag: string): Promise<void> {
  try {
    await service.docker.getImage(tag).remove({ force: true });
  } catch (error) {
    if ((error as { statusCode?: number }).statusCode === 404) return;
    throw new OutsideServiceError('docker', 'docker-remove-failed', `Docker: cannot remove image ${tag}: ${(error as Error).message}`, { retryable: true, cause: error });
  }
}
