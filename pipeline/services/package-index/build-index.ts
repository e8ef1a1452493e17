import type { Db } from '../../../cache/store.js';
import type { Logger } from '../../logging.js';
import { indexAccess, type IndexAccess } from './build-access.js';
import { resolveCutoff } from './cutoff.js';
import { startTimeMachine, type TimeMachine } from './time-machine.js';

/** `synthesize.index` of the configuration (stages/synthesize/config.ts), as this service reads it. */
export interface IndexSettings {
  readonly upstream: string;
  readonly cutoff: string;
  readonly slackDays: number;
  readonly missingUploadTime: 'exclude' | 'include';
  readonly timeoutSeconds: number;
  readonly retries: number;
}

export interface BuildIndex {
  readonly timeMachine: TimeMachine;
  /** Mounts, environment and the forwarder's start line for the build container. */
  readonly access: IndexAccess;
}

/**
 * The index of one build: a time machine at the cutoff the settings give for this commit (its
 * committer date, ISO 8601), and what the build container needs to reach it. The caller closes
 * `timeMachine` when the build's container has stopped, after reading `served()` and `problems()`.
 */
export async function startBuildIndex(
  settings: IndexSettings,
  build: {
    readonly commitDate: string | null;
    readonly store: Db | null;
    readonly log: Logger;
    /** Keep the bytes of the files served in the store (TimeMachineOptions.keepFiles). */
    readonly keepFiles?: boolean;
  },
): Promise<BuildIndex> {
  const cutoff = resolveCutoff(settings.cutoff, settings.slackDays, build.commitDate);
  const timeMachine = await startTimeMachine({
    upstream: settings.upstream,
    cutoff,
    missingUploadTime: settings.missingUploadTime,
    store: build.store,
    keepFiles: build.keepFiles ?? false,
    log: build.log,
    timeoutMs: settings.timeoutSeconds * 1000,
    retries: settings.retries,
  });
  const access = indexAccess({
    socketDir: timeMachine.socketDir,
    cutoff,
    missingUploadTime: settings.missingUploadTime,
    timeoutSeconds: settings.timeoutSeconds,
    retries: settings.retries,
  });
  return { timeMachine, access };
}
