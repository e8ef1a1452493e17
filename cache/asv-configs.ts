import type { Db } from './store.js';
import { nowIso } from './store.js';

export interface AsvConfigFile {
  readonly path: string;
  readonly text: string;
}

/**
 * The asv config found at a commit, per (repo, sha) (table `asv_configs`). A commit's tree never
 * changes, so an entry is final. `undefined`: never looked up; `null`: looked up, there is none.
 */
export function loadAsvConfig(db: Db, repo: string, sha: string): AsvConfigFile | null | undefined {
  const row = db
    .prepare<[string, string], { path: string | null; text: string | null }>('SELECT path, text FROM asv_configs WHERE repo = ? AND sha = ?')
    .get(repo, sha);
  if (!row) return undefined;
  return row.path === null || row.text === null ? null : { path: row.path, text: row.text };
}

export function saveAsvConfig(db: Db, repo: string, sha: string, config: AsvConfigFile | null): void {
  db.prepare(
    `INSERT INTO asv_configs (repo, sha, path, text, checked_at) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (repo, sha) DO UPDATE SET path = excluded.path, text = excluded.text, checked_at = excluded.checked_at`,
  ).run(repo, sha, config?.path ?? null, config?.text ?? null, nowIso());
}
