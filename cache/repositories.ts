import { z } from 'zod';
import type { Db } from './store.js';
import { nowIso } from './store.js';

/** A repository as discover stored it (table `repositories`). */
export const repositoryRecordSchema = z.object({
  /** Canonical `owner/name` (after a rename). */
  name: z.string(),
  githubId: z.number().int().nullable(),
  source: z.enum(['github', 'git']),
  /** The local clone, for repositories read with git. */
  localPath: z.string().nullable(),
  stars: z.number().int().nullable(),
  forks: z.number().int().nullable(),
  fork: z.boolean(),
  archived: z.boolean(),
  disabled: z.boolean(),
  defaultBranch: z.string(),
  pushedAt: z.string().nullable(),
  /** Path of asv.conf.json(c) in the default branch, when known. */
  asvConfigPath: z.string().nullable(),
  /** What the Python version check read (`requires-python >=3.9`, classifiers), or null. */
  pythonRequires: z.string().nullable(),
  /** Former names that GitHub redirects (301) to this one. */
  formerNames: z.array(z.string()),
  /** `kept`, or the reason discover dropped it. */
  verdict: z.string(),
});
export type RepositoryRecord = z.infer<typeof repositoryRecordSchema>;

interface RawRow {
  name: string;
  github_id: number | null;
  source: 'github' | 'git';
  local_path: string | null;
  stars: number | null;
  forks: number | null;
  is_fork: number;
  archived: number;
  disabled: number;
  default_branch: string;
  pushed_at: string | null;
  asv_config_path: string | null;
  python_requires: string | null;
  verdict: string;
}

function fromRaw(row: RawRow, formerNames: string[]): RepositoryRecord {
  return {
    name: row.name,
    githubId: row.github_id,
    source: row.source,
    localPath: row.local_path,
    stars: row.stars,
    forks: row.forks,
    fork: row.is_fork === 1,
    archived: row.archived === 1,
    disabled: row.disabled === 1,
    defaultBranch: row.default_branch,
    pushedAt: row.pushed_at,
    asvConfigPath: row.asv_config_path,
    pythonRequires: row.python_requires,
    formerNames,
    verdict: row.verdict,
  };
}

/** Writes (or replaces) a repository and its former names. Call inside the stage's transaction. */
export function saveRepository(db: Db, repo: RepositoryRecord): void {
  db.prepare(
    `INSERT INTO repositories (name, github_id, source, local_path, stars, forks, is_fork, archived, disabled,
                               default_branch, pushed_at, asv_config_path, python_requires, verdict, updated_at)
     VALUES (@name, @githubId, @source, @localPath, @stars, @forks, @fork, @archived, @disabled,
             @defaultBranch, @pushedAt, @asvConfigPath, @pythonRequires, @verdict, @now)
     ON CONFLICT (name) DO UPDATE SET github_id = excluded.github_id, source = excluded.source,
       local_path = excluded.local_path, stars = excluded.stars, forks = excluded.forks, is_fork = excluded.is_fork,
       archived = excluded.archived, disabled = excluded.disabled, default_branch = excluded.default_branch,
       pushed_at = excluded.pushed_at, asv_config_path = excluded.asv_config_path,
       python_requires = excluded.python_requires, verdict = excluded.verdict, updated_at = excluded.updated_at`,
  ).run({
    ...repo,
    fork: repo.fork ? 1 : 0,
    archived: repo.archived ? 1 : 0,
    disabled: repo.disabled ? 1 : 0,
    now: nowIso(),
  });
  const alias = db.prepare(
    'INSERT INTO repository_aliases (alias, name) VALUES (?, ?) ON CONFLICT (alias) DO UPDATE SET name = excluded.name',
  );
  for (const former of repo.formerNames) if (former.toLowerCase() !== repo.name.toLowerCase()) alias.run(former, repo.name);
}

/** The canonical name of a repository known under this name or a former one (case-insensitive). */
export function canonicalRepoName(db: Db, name: string): string | undefined {
  const direct = db.prepare<[string], { name: string }>('SELECT name FROM repositories WHERE name = ? COLLATE NOCASE').get(name);
  if (direct) return direct.name;
  return db.prepare<[string], { name: string }>('SELECT name FROM repository_aliases WHERE alias = ? COLLATE NOCASE').get(name)?.name;
}

/** A stored repository, looked up by its name or a former name. */
export function loadRepository(db: Db, name: string): RepositoryRecord | undefined {
  const canonical = canonicalRepoName(db, name);
  if (canonical === undefined) return undefined;
  const row = db.prepare<[string], RawRow>('SELECT * FROM repositories WHERE name = ?').get(canonical);
  if (!row) return undefined;
  return fromRaw(row, formerNamesOf(db, canonical));
}

/** Every stored repository, by name; `kept` only when asked. */
export function listRepositories(db: Db, options: { keptOnly?: boolean } = {}): RepositoryRecord[] {
  const rows = db.prepare<[], RawRow>(`SELECT * FROM repositories${options.keptOnly ? " WHERE verdict = 'kept'" : ''} ORDER BY name`).all();
  return rows.map((row) => fromRaw(row, formerNamesOf(db, row.name)));
}

function formerNamesOf(db: Db, name: string): string[] {
  return db
    .prepare<[string], { alias: string }>('SELECT alias FROM repository_aliases WHERE name = ? ORDER BY alias')
    .all(name)
    .map((r) => r.alias);
}
