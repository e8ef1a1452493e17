import { describe, expect, it } from 'vitest';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { latestSchemaVersion, migrations, openStore, schemaStatus } from '../../cache/store.js';
import { ConfigError } from '../../pipeline/errors.js';
import { runCli, tempDir } from '../helpers/index.js';

describe('SQLite store', () => {
  it('applies every numbered migration in order, in WAL mode, once', () => {
    const path = join(tempDir(), 'a.db');
    const db = openStore(path);
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.pragma('busy_timeout', { simple: true })).toBe(10_000);
    const ids = migrations().map((m) => m.id);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(schemaStatus(db)).toEqual({ applied: ids, latest: latestSchemaVersion(), pending: [] });
    db.close();
    const again = openStore(path);
    expect(again.prepare('SELECT COUNT(*) AS n FROM schema_migrations').get()).toEqual({ n: ids.length });
    again.close();
  });

  it('refuses a database written by a newer perfmine, with a fix', async () => {
    const path = join(tempDir(), 'newer.db');
    openStore(path).close();
    const raw = new Database(path);
    raw.prepare('INSERT INTO schema_migrations (id, name, applied_at) VALUES (?, ?, ?)').run(9999, 'from-the-future', '2030-01-01');
    raw.close();
    expect(() => openStore(path)).toThrow(ConfigError);
    expect(() => openStore(path)).toThrow(/written by a newer perfmine \(schema 9999; this version knows up to \d+\)/);
    const cli = await runCli(['status', '--db', path]);
    expect(cli.code).toBe(2);
    expect(cli.stderr).toMatch(/newer perfmine/);
    expect(cli.stderr).toMatch(/fix: upgrade perfmine, or point --db at another file/);
  });
});
