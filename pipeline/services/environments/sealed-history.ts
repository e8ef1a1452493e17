import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { ItemError, OutsideServiceError } from '../../errors.js';
import { SEAL_SCRIPT } from './seal.js';
import { TASK_SOURCE_DIR } from './source-tier.js';

const execFileP = promisify(execFile);

/**
 * A task folder's sealed history (`source/repo.bundle`, `source/modules/NAME.bundle`), made on
 * this host from a local clone with the same script the images use (seal.ts `export`): the bytes
 * are those `seal.sh bundle` writes inside the commit's source tier.
 */
export async function exportSealedHistory(clonePath: string, sha: string, signal?: AbortSignal): Promise<Map<string, Buffer>> {
  const dir = await mkdtemp(join(tmpdir(), 'perfmine-seal-'));
  try {
    const script = join(dir, 'seal.sh');
    await writeFile(script, SEAL_SCRIPT);
    const out = join(dir, 'out');
    try {
      await execFileP('bash', [script, 'export', clonePath, sha, out], { maxBuffer: 16 * 1024 * 1024, ...(signal ? { signal } : {}) });
    } catch (error) {
      const e = error as { code?: number | string; stderr?: string; message: string };
      if (typeof e.code === 'number')
        throw new ItemError('seal-failed', `sealing ${sha.slice(0, 12)} of ${clonePath}: ${(e.stderr ?? e.message).trim().slice(-2000)}`);
      throw new OutsideServiceError('git', 'git-unavailable', `bash/git: ${e.message}`, { cause: error });
    }
    return await readTree(out, TASK_SOURCE_DIR);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Every file under `dir`, keyed `prefix/relative/path`. */
async function readTree(dir: string, prefix: string): Promise<Map<string, Buffer>> {
  const files = new Map<string, Buffer>();
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    files.set(`${prefix}/${relative(dir, path)}`, await readFile(path));
  }
  return new Map([...files].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
