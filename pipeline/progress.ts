import type { Logger } from './logging.js';
import type { RunnerEvents } from './runner.js';
import type { Emitter } from './events.js';
import type { StatusLine } from './terminal.js';

interface Counts {
  total: number;
  finished: number;
  done: number;
  dropped: number;
  failed: number;
  skipped: number;
  startedAt: number;
}

export interface ProgressOptions {
  /** A terminal gets a bar per stage; anything else gets a line every `intervalMs`. */
  readonly statusLine: StatusLine | null;
  readonly log: Logger;
  readonly intervalMs: number;
}

/** Shows runner progress: a bar on a terminal, periodic log lines otherwise. Returns a detach function. */
export function attachProgress(events: Emitter<RunnerEvents>, options: ProgressOptions): () => void {
  const stages = new Map<string, Counts>();
  let timer: NodeJS.Timeout | undefined;

  const line = (stage: string, c: Counts): string => {
    const width = 24;
    const ratio = c.total === 0 ? 1 : c.finished / c.total;
    const filled = Math.round(ratio * width);
    const bar = `${'#'.repeat(filled)}${'.'.repeat(width - filled)}`;
    const secs = Math.round((Date.now() - c.startedAt) / 1000);
    return `${stage.padEnd(10)} [${bar}] ${c.finished}/${c.total}  done ${c.done}  dropped ${c.dropped}  failed ${c.failed}  (${secs}s)`;
  };

  const report = () => {
    for (const [stage, c] of stages) {
      if (c.finished < c.total)
        options.log.info({ stage, finished: c.finished, total: c.total, done: c.done, dropped: c.dropped, failed: c.failed }, 'progress');
    }
  };

  const offs = [
    events.on('stage-start', (e) => {
      stages.set(e.stage, { total: e.toRun, finished: 0, done: 0, dropped: 0, failed: 0, skipped: e.skipped, startedAt: Date.now() });
      if (options.statusLine) options.statusLine.set(line(e.stage, stages.get(e.stage)!));
      else if (!timer) {
        timer = setInterval(report, options.intervalMs);
        timer.unref();
      }
    }),
    events.on('item-end', (e) => {
      const c = stages.get(e.stage);
      if (!c) return;
      c.finished += 1;
      if (e.status === 'done') c.done += 1;
      else if (e.status === 'dropped') c.dropped += 1;
      else c.failed += 1;
      options.statusLine?.set(line(e.stage, c));
    }),
    events.on('stage-end', (e) => {
      const c = stages.get(e.report.stage);
      if (c && options.statusLine) {
        options.statusLine.set(line(e.report.stage, c));
        options.statusLine.commit();
      }
      stages.delete(e.report.stage);
    }),
  ];

  return () => {
    for (const off of offs) off();
    if (timer) clearInterval(timer);
  };
}
