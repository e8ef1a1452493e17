import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeMonth, type MonthTask } from '../../stages/emit/month-files.js';
import { tempDir } from '../helpers/harness.js';
import type { TaskRow } from '../../stages/emit/row.js';

const taskRow: TaskRow = {
  instance_id: 'a__b-1',
  repo: 'a/b',
  pull_number: 1,
  base_commit: 'b'.repeat(40),
  merge_commit: 'm'.repeat(40),
  created_at: '2025-04-01T00:00:00.000Z',
  merged_at: '2025-04-02T00:00:00.000Z',
  problem_statement: 'make it faster',
  patch: 'diff --git a/x.py b/x.py\n',
  image_name: 'perfmine/a-b:1',
  build_script: '#!/bin/bash\n',
  workloads: { count: 1, names: ['bench.time_x'] },
  expert_speedup: { all: 2, improved: 2 },
  category: null,
  difficulty: null,
  classifier: 'rules',
  month: '2025-04',
};

/** The manifest's production time is when the month's files were first produced: a re-emit of the same files keeps it. */
describe('the month manifest', () => {
  const task = (id: string): MonthTask => ({ row: { ...taskRow, instance_id: id }, files: { 'instruction.md': `# ${id}\n` }, blobs: {} });
  const manifest = (out: string) => JSON.parse(readFileSync(join(out, '2025-04', 'manifest.json'), 'utf8')) as { producedAt: string };

  it('keeps the production time while the content is the same, and takes the new one when it changes', () => {
    const out = tempDir('perfmine-month-files-');
    writeMonth(out, '2025-04', [task('a__b-1')], '2026-01-01T00:00:00.000Z', 'perfmine 1');
    const bytes = readFileSync(join(out, '2025-04', 'manifest.json'));
    writeMonth(out, '2025-04', [task('a__b-1')], '2026-02-01T00:00:00.000Z', 'perfmine 1');
    expect(readFileSync(join(out, '2025-04', 'manifest.json')).equals(bytes)).toBe(true);
    expect(manifest(out).producedAt).toBe('2026-01-01T00:00:00.000Z');

    writeMonth(out, '2025-04', [task('a__b-1'), task('a__b-2')], '2026-03-01T00:00:00.000Z', 'perfmine 1');
    expect(manifest(out).producedAt).toBe('2026-03-01T00:00:00.000Z');
    // another producer is another production, even with the same files
    writeMonth(out, '2025-04', [task('a__b-1'), task('a__b-2')], '2026-04-01T00:00:00.000Z', 'perfmine 2');
    expect(manifest(out).producedAt).toBe('2026-04-01T00:00:00.000Z');
    expect(statSync(join(out, '2025-04', 'a__b-2', 'instruction.md')).isFile()).toBe(true);
  });

  it('a manifest that cannot be read is replaced with one of this emit', () => {
    const out = tempDir('perfmine-month-files-');
    writeMonth(out, '2025-04', [task('a__b-1')], '2026-01-01T00:00:00.000Z', 'perfmine 1');
    const path = join(out, '2025-04', 'manifest.json');
    writeFileSync(path, '{"month": "2025-04", "producedAt"');
    writeMonth(out, '2025-04', [task('a__b-1')], '2026-02-01T00:00:00.000Z', 'perfmine 1');
    expect(manifest(out).producedAt).toBe('2026-02-01T00:00:00.000Z');
  });
});
