import { parquetWriteBuffer } from 'hyparquet-writer';
import { sortRows, type TaskRow } from './row.js';

/**
 * tasks.parquet: the same rows as tasks.jsonl, sorted the same way, with an explicit schema
 * (strings UTF-8, pull_number INT32, workloads a struct of a count and a list of names,
 * expert_speedup a struct of two nullable doubles). hyparquet-writer writes no timestamps, so the
 * same rows give the same bytes. Pure.
 */

const utf8 = (name: string, repetition: 'REQUIRED' | 'OPTIONAL' = 'REQUIRED') => ({
  name,
  type: 'BYTE_ARRAY' as const,
  converted_type: 'UTF8' as const,
  repetition_type: repetition,
});

const SCHEMA = [
  { name: 'root', num_children: 19 },
  utf8('instance_id'),
  utf8('repo'),
  { name: 'pull_number', type: 'INT32' as const, repetition_type: 'REQUIRED' as const },
  utf8('base_commit'),
  utf8('merge_commit'),
  utf8('created_at'),
  utf8('merged_at'),
  utf8('problem_statement'),
  utf8('patch'),
  utf8('image_name'),
  utf8('build_script'),
  { name: 'workloads', repetition_type: 'REQUIRED' as const, num_children: 2 },
  { name: 'count', type: 'INT32' as const, repetition_type: 'REQUIRED' as const },
  { name: 'names', repetition_type: 'REQUIRED' as const, converted_type: 'LIST' as const, num_children: 1 },
  { name: 'list', repetition_type: 'REPEATED' as const, num_children: 1 },
  utf8('element'),
  { name: 'expert_speedup', repetition_type: 'REQUIRED' as const, num_children: 2 },
  { name: 'all', type: 'DOUBLE' as const, repetition_type: 'OPTIONAL' as const },
  { name: 'improved', type: 'DOUBLE' as const, repetition_type: 'OPTIONAL' as const },
  utf8('category', 'OPTIONAL'),
  utf8('difficulty', 'OPTIONAL'),
  utf8('classifier'),
  utf8('month'),
  utf8('docker_image', 'OPTIONAL'),
  utf8('base_image', 'OPTIONAL'),
];

const COLUMNS = [
  'instance_id',
  'repo',
  'pull_number',
  'base_commit',
  'merge_commit',
  'created_at',
  'merged_at',
  'problem_statement',
  'patch',
  'image_name',
  'build_script',
  'workloads',
  'expert_speedup',
  'category',
  'difficulty',
  'classifier',
  'month',
  'docker_image',
  'base_image',
] as const satisfies readonly (keyof TaskRow)[];

export function tasksParquet(rows: readonly TaskRow[]): Uint8Array {
  const ordered = sortRows(rows);
  const buffer = parquetWriteBuffer({
    columnData: COLUMNS.map((name) => ({ name, data: ordered.map((r) => r[name] ?? null) })),
    schema: SCHEMA,
    createdBy: 'perfmine',
  });
  return new Uint8Array(buffer);
}
