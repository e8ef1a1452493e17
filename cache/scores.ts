import type { Db } from './store.js';
import { nowIso } from './store.js';

/**
 * perfmine score's results (migration 0009): one row per measured side of a task, the expert's
 * patch once per task and each model's prediction once, keyed by the patch's sha256. A finished
 * row is never measured again (unless `--force`); a side whose scoring broke on an outside
 * failure is not stored, so the next run tries it again.
 */

export type ScoreSide = 'expert' | 'agent';

export interface StoredScore {
  readonly instanceId: string;
  readonly side: ScoreSide;
  readonly model: string;
  readonly patchSha256: string;
  readonly failure: string | null;
  readonly result: unknown;
}

interface Row {
  failure: string | null;
  result: string;
}

export class ScoreStore {
  constructor(private readonly db: Db) {}

  get(instanceId: string, side: ScoreSide, model: string, patchSha256: string): StoredScore | null {
    const row = this.db
      .prepare<[string, string, string, string], Row>(
        'SELECT failure, result FROM score_results WHERE instance_id = ? AND side = ? AND model = ? AND patch_sha256 = ?',
      )
      .get(instanceId, side, model, patchSha256);
    return row ? { instanceId, side, model, patchSha256, failure: row.failure, result: JSON.parse(row.result) as unknown } : null;
  }

  save(score: StoredScore): void {
    this.db
      .prepare(
        `INSERT INTO score_results (instance_id, side, model, patch_sha256, failure, result, measured_at) VALUES (?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (instance_id, side, model, patch_sha256) DO UPDATE SET failure = excluded.failure, result = excluded.result, measured_at = excluded.measured_at`,
      )
      .run(score.instanceId, score.side, score.model, score.patchSha256, score.failure, JSON.stringify(score.result), nowIso());
  }

  count(): number {
    return this.db.prepare<[], { n: number }>('SELECT count(*) AS n FROM score_results').get()?.n ?? 0;
  }
}
