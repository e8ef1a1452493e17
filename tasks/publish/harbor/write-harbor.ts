import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { contentBytes } from '../../../stages/emit/month-files.js';
import type { WriteReport } from '../write-dataset.js';
import type { HarborFile } from './harbor-task.js';

/**
 * Writes a Harbor dataset folder: a file is written only when its bytes or its mode differ (an
 * unchanged export touches nothing); in the task folders perfmine wrote before (a task.toml with
 * `source = "perfmine"`), files the export no longer has are removed, and so are such task
 * folders of tasks no longer published. Anything else in the folder is left alone.
 */

const PERFMINE_TASK = /^source = "perfmine"$/m;

function perfmineTaskDirs(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .filter((name) => {
      try {
        return PERFMINE_TASK.test(readFileSync(join(dir, name, 'task.toml'), 'utf8'));
      } catch {
        return false;
      }
    });
}

function filesUnder(root: string, dir: string): string[] {
  return readdirSync(join(root, dir), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() || e.isSymbolicLink())
    .map((e) => relative(root, join(e.parentPath, e.name)));
}

function same(path: string, bytes: Buffer, mode: number): boolean {
  if (!existsSync(path)) return false;
  return (statSync(path).mode & 0o777) === mode && readFileSync(path).equals(bytes);
}

export function writeHarbor(dir: string, files: ReadonlyMap<string, HarborFile>): WriteReport {
  mkdirSync(dir, { recursive: true });
  const before = perfmineTaskDirs(dir);
  const written: string[] = [];
  let unchanged = 0;
  for (const [path, file] of files) {
    const full = join(dir, path);
    const content = contentBytes(file.content);
    const bytes = typeof content === 'string' ? Buffer.from(content, 'utf8') : Buffer.from(content);
    if (same(full, bytes, file.mode)) {
      unchanged++;
      continue;
    }
    mkdirSync(dirname(full), { recursive: true });
    writeFileSync(full, bytes, { mode: file.mode });
    chmodSync(full, file.mode);
    written.push(path);
  }
  // tests/ holds the expert's patch: its owner's alone (Harbor copies it into the container's /tests, also root's alone)
  for (const path of files.keys()) {
    const tests = path.match(/^([^/]+\/tests)\//)?.[1];
    if (tests !== undefined && (statSync(join(dir, tests)).mode & 0o777) !== 0o700) chmodSync(join(dir, tests), 0o700);
  }
  const removed = before
    .flatMap((task) => filesUnder(dir, task))
    .filter((p) => !files.has(p))
    .sort();
  for (const p of removed) rmSync(join(dir, p));
  for (const task of before) if (filesUnder(dir, task).length === 0) rmSync(join(dir, task), { recursive: true, force: true });
  return { written, unchanged, removed };
}
