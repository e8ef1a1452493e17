import { prepared } from './prepared.js';
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
  const row = statements(db).load.get(repo, sha);
  if (!row) return undefined;
  return row.path === null || row.text === null ? null : { path: row.path, text: row.text };
}

/** Many lookups of one repository in one query: the commits looked up before, by SHA. */
export function loadAsvConfigs(db: Db, repo: string, shas: Iterable<string>): Map<string, AsvConfigFile | null> {
  const rows = prepared<[string, string], { sha: string; path: string | null; text: string | null }>(
    db,
    'SELECT a.sha, a.path, a.text FROM json_each(?) AS wanted JOIN asv_configs AS a ON a.repo = ? AND a.sha = wanted.value',
  ).all(JSON.stringify([...new Set(shas)]), repo);
  return new Map(rows.map((r) => [r.sha, r.path === null || r.text === null ? null : { path: r.path, text: r.text }]));
}

export function saveAsvConfig(db: Db, repo: string, sha: string, config: AsvConfigFile | null): void {
  statements(db).save.run(repo, sha, config?.path ?? null, config?.text ?? null, nowIso());
}

/** Many lookups of one repository in one transaction. */
export function saveAsvConfigs(db: Db, repo: string, configs: ReadonlyMap<string, AsvConfigFile | null>): void {
  const save = statements(db).save;
  const now = nowIso();
  db.transaction(() => {
    for (const [sha, config] of configs) save.run(repo, sha, config?.path ?? null, config?.text ?? null, now);
  })();
}

const LOAD = 'SELECT path, text FROM asv_configs WHERE repo = ? AND sha = ?';
const SAVE = `INSERT INTO asv_configs (repo, sha, path, text, checked_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (repo, sha) DO UPDATE SET path = excluded.path, text = excluded.text, checked_at = excluded.checked_at`;

function statements(db: Db) {
  return {
    load: prepared<[string, string], { path: string | null; text: string | null }>(db, LOAD),
    save: prepared<[string, string, string | null, string | null, string]>(db, SAVE),
  };
}
