import type { ContainerSession } from '../../../pipeline/services/container-session.js';
import { HARNESS_CONTAINER_PATH } from '../../../pipeline/services/environments/harness-files.js';
import type { HarnessWorker } from './interleave.js';
import {
  readBatchAnswer,
  readFingerprintAnswer,
  readModulesAnswer,
  readOutlineAnswer,
  readRestartAnswer,
  readStart,
  type BatchCommand,
  type BatchResult,
  type FatalMessage,
  type FingerprintResult,
  type OutlineResult,
  type ReadyMessage,
  type RestartResult,
  type WorkloadRef,
} from './messages.js';

/**
 * A harness worker in a container: the harness's `serve` mode on the other end of a
 * ContainerSession. The harness bounds each batch by its own time limit and answers `timeout`;
 * this side only guards against a harness that stops answering at all (it is killed, and every
 * later batch fails as crashed).
 */

/** Added to a batch's own time limit before the driver gives up on the harness itself. */
const ANSWER_MARGIN_MS = 60_000;
/** asv's default benchmark timeout, when neither the command nor the benchmark gives one. */
const DEFAULT_TIMEOUT_S = 60;

export interface ServeCommand {
  readonly python: string;
  readonly configPath: string;
  readonly bench: string | null;
}

/** The container's command: the harness serving the suite of the checkout's asv config. */
export function serveCommand(c: ServeCommand): string[] {
  const args = ['--config', c.configPath, 'serve', ...(c.bench === null ? [] : ['--bench', c.bench])];
  return [c.python, '-u', HARNESS_CONTAINER_PATH, ...args];
}

export class ContainerHarnessWorker implements HarnessWorker {
  readonly start: ReadyMessage | FatalMessage;
  readonly #session: ContainerSession;
  /** How long a fresh worker process may take to import the suite. */
  readonly #startMs: number;
  #next = 1;
  #dead: string | null = null;

  private constructor(session: ContainerSession, start: ReadyMessage | FatalMessage, startMs: number) {
    this.#session = session;
    this.#startMs = startMs;
    this.start = start;
    if (start.event !== 'ready') this.#dead = start.message;
  }

  /** Waits for the harness's first line (the suite imported, or why not) within `startMs`. */
  static async start(session: ContainerSession, startMs: number, signal?: AbortSignal): Promise<ContainerHarnessWorker> {
    const first = await session.nextLine(startMs, signal);
    let start: ReadyMessage | FatalMessage;
    if ('line' in first) start = readStart(first.line);
    else {
      const why =
        'timedOut' in first
          ? `the harness did not load the suite within ${Math.round(startMs / 1000)} s`
          : `the harness exited before loading the suite (exit ${await session.exited})`;
      start = {
        event: 'fatal',
        reason: 'timedOut' in first ? 'start-timeout' : 'worker-exited',
        message: `${why}: ${lastLines(session.stderr(), 12)}`,
      };
    }
    return new ContainerHarnessWorker(session, start, startMs);
  }

  async batch(command: Omit<BatchCommand, 'id' | 'op'>, signal?: AbortSignal): Promise<BatchResult> {
    if (this.#dead !== null) return { ok: false, status: 'crashed', message: this.#dead };
    const id = this.#next++;
    this.#session.send(JSON.stringify({ id, op: 'batch', ...command }));
    const info = this.start.event === 'ready' ? this.start.benchmarks[command.benchmark] : undefined;
    const limitMs = (command.timeout ?? info?.timeout ?? DEFAULT_TIMEOUT_S) * 1000 + ANSWER_MARGIN_MS;
    for (;;) {
      const read = await this.#session.nextLine(limitMs, signal);
      if ('line' in read) {
        const answer = readBatchAnswer(read.line);
        if (answer.id !== null && answer.id !== id) continue; // a late answer to an earlier command
        const { id: _id, ...result } = answer;
        return result;
      }
      this.#dead =
        'timedOut' in read
          ? `the harness stopped answering (no answer within ${Math.round(limitMs / 1000)} s); it was killed`
          : `the harness exited (exit ${await this.#session.exited})`;
      if ('timedOut' in read) await this.#session.kill();
      return { ok: false, status: 'crashed', message: `${this.#dead}: ${lastLines(this.#session.stderr(), 8)}` };
    }
  }

  async restart(signal?: AbortSignal, benchmarks?: readonly string[]): Promise<RestartResult> {
    if (this.#dead !== null) return { ok: false, message: this.#dead };
    const id = this.#next++;
    this.#session.send(JSON.stringify({ id, op: 'restart', ...(benchmarks && benchmarks.length > 0 ? { benchmarks } : {}) }));
    for (;;) {
      const read = await this.#session.nextLine(this.#startMs + ANSWER_MARGIN_MS, signal);
      if (!('line' in read)) {
        this.#dead =
          'timedOut' in read
            ? 'the harness did not start a fresh worker in time; it was killed'
            : `the harness exited (exit ${await this.#session.exited})`;
        if ('timedOut' in read) await this.#session.kill();
        return { ok: false, message: `${this.#dead}: ${lastLines(this.#session.stderr(), 8)}` };
      }
      const { id: answered, ...answer } = readRestartAnswer(read.line);
      if (answered !== null && answered !== id) continue;
      if (!answer.ok) this.#dead = answer.message;
      return answer;
    }
  }

  /** Sends a command and reads its answer (a later line with another id is skipped); null when the harness is gone. */
  async #ask(
    command: Record<string, unknown>,
    limitMs: number,
    signal?: AbortSignal,
  ): Promise<{ id: number; line: string } | { id: number; gone: string }> {
    const id = this.#next++;
    if (this.#dead !== null) return { id, gone: this.#dead };
    this.#session.send(JSON.stringify({ id, ...command }));
    for (;;) {
      const read = await this.#session.nextLine(limitMs, signal);
      if ('line' in read) {
        const parsed = /"id":\s*(\d+|null)/.exec(read.line);
        if (parsed && parsed[1] !== 'null' && Number(parsed[1]) !== id) continue;
        return { id, line: read.line };
      }
      this.#dead =
        'timedOut' in read
          ? `the harness stopped answering (no answer within ${Math.round(limitMs / 1000)} s); it was killed`
          : `the harness exited (exit ${await this.#session.exited})`;
      if ('timedOut' in read) await this.#session.kill();
      return { id, gone: `${this.#dead}: ${lastLines(this.#session.stderr(), 8)}` };
    }
  }

  async fingerprint(ref: WorkloadRef, timeoutSeconds: number | null, signal?: AbortSignal): Promise<FingerprintResult> {
    const info = this.start.event === 'ready' ? this.start.benchmarks[ref.benchmark] : undefined;
    const limitMs = (timeoutSeconds ?? info?.timeout ?? DEFAULT_TIMEOUT_S) * 1000 + ANSWER_MARGIN_MS;
    const r = await this.#ask({ op: 'fingerprint', benchmark: ref.benchmark, param: ref.param, timeout: timeoutSeconds }, limitMs, signal);
    if ('gone' in r) return { ok: false, status: 'crashed', message: r.gone };
    const { id: _id, ...result } = readFingerprintAnswer(r.line);
    return result;
  }

  async outline(files: readonly string[], signal?: AbortSignal): Promise<OutlineResult | null> {
    const r = await this.#ask({ op: 'outline', files }, ANSWER_MARGIN_MS, signal);
    return 'gone' in r ? null : readOutlineAnswer(r.line).files;
  }

  async modules(signal?: AbortSignal): Promise<readonly string[] | null> {
    const r = await this.#ask({ op: 'modules' }, ANSWER_MARGIN_MS, signal);
    return 'gone' in r ? null : readModulesAnswer(r.line).files;
  }

  log(): string {
    return this.#session.stderr();
  }

  async close(): Promise<void> {
    if (this.#dead === null) this.#session.send(JSON.stringify({ id: this.#next++, op: 'exit' }));
    await this.#session.close(10_000);
  }
}

function lastLines(text: string, n: number): string {
  return text.trimEnd().split('\n').slice(-n).join('\n');
}
