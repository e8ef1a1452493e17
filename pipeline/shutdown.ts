import type { Logger } from './logging.js';

export interface Shutdown {
  /** Aborted on the first SIGINT/SIGTERM: start nothing new, let in-flight items finish. */
  readonly drain: AbortSignal;
  /** Aborted on the second: stop at once. */
  readonly hard: AbortSignal;
  dispose(): void;
}

/**
 * First SIGINT (or SIGTERM, as systemd sends): in-flight items finish and are recorded, nothing
 * new starts. Second: `onHardStop` runs (synchronously: record what can be recorded) and the
 * process exits 130.
 */
export function installShutdown(log: Logger, onHardStop: () => void): Shutdown {
  const drain = new AbortController();
  const hard = new AbortController();
  const handler = (signal: NodeJS.Signals) => {
    if (!drain.signal.aborted) {
      log.warn({ signal }, 'stopping: in-flight items will finish and be recorded; send it again to stop at once');
      drain.abort();
      return;
    }
    log.warn({ signal }, 'stopping now');
    hard.abort();
    try {
      onHardStop();
    } finally {
      process.exit(130);
    }
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
  return {
    drain: drain.signal,
    hard: hard.signal,
    dispose() {
      process.off('SIGINT', handler);
      process.off('SIGTERM', handler);
    },
  };
}
