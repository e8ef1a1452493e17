import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadInvocations } from '../../cache/measurements.js';
import type { Db } from '../../cache/store.js';

/**
 * Writes a candidate's kept invocations as files, one per invocation, in the schedule's layout
 * (`<dir>/<role>/<seq>.json`): the directories `perfmine compare` reads
 * (`compare DIR/base DIR/expert --calibration DIR/calibration-first DIR/calibration-second`).
 * Returns the paths written.
 */
export function exportInvocations(db: Db, key: string, dir: string): string[] {
  const written: string[] = [];
  for (const inv of loadInvocations(db, key)) {
    if (inv.status !== 'ok' || inv.results === null) continue;
    const path = join(dir, inv.role, `${String(inv.seq).padStart(3, '0')}.json`);
    mkdirSync(join(dir, inv.role), { recursive: true });
    writeFileSync(path, inv.results);
    written.push(path);
  }
  return written;
}
