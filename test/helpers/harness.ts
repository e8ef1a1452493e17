import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore, type Db } from '../../cache/store.js';
import { loadConfig } from '../../pipeline/config/load.js';
import type { ConfigInput } from '../../pipeline/config/schema.js';
import { createContext, type ContextOptions } from '../../pipeline/context.js';
import { readCredentials } from '../../pipeline/credentials.js';
import { memoryLogger } from './context.js';
import type { PipelineContext } from '../../pipeline/stage.js';

export function tempDir(prefix = 'perfmine-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export interface Harness {
  readonly ctx: PipelineContext;
  readonly db: Db;
  readonly lines: string[];
}

/** A pipeline context over a real SQLite store (`:memory:` unless a path is given), config from layers. */
export function harness(
  options: { db?: string; config?: Record<string, unknown>; env?: NodeJS.ProcessEnv } & Partial<
    Pick<ContextOptions, 'services' | 'runId' | 'signal'>
  > = {},
): Harness {
  const db = openStore(options.db ?? ':memory:');
  const { config } = loadConfig({
    env: options.env ?? {},
    flags: (options.config ?? {}) as ConfigInput as Record<string, unknown>,
    cwd: tempDir(),
  });
  const { log, lines } = memoryLogger();
  const ctx = createContext({
    config,
    credentials: readCredentials(options.env ?? {}),
    db,
    log,
    ...(options.services ? { services: options.services } : {}),
    ...(options.runId === undefined ? {} : { runId: options.runId }),
    ...(options.signal ? { signal: options.signal } : {}),
  });
  return { ctx, db, lines };
}
