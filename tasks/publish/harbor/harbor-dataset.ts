import type { MonthTask } from '../../../stages/emit/month-files.js';
import { harborTaskFiles, type HarborFile, type HarborOptions } from './harbor-task.js';
import { harborReadme } from './harbor-readme.js';

/**
 * The published tasks as a Harbor dataset: a folder of task folders, one per task, named by its
 * instance id (`harbor run -p DIR` runs them all, `-p DIR/<instance_id>` one), and README.md (what
 * they need of Harbor, their images, the network). Pure.
 */

export function harborDatasetFiles(tasks: readonly MonthTask[], options: HarborOptions): Map<string, HarborFile> {
  const out = new Map<string, HarborFile>();
  const sorted = [...tasks].sort((a, b) => (a.row.instance_id < b.row.instance_id ? -1 : a.row.instance_id > b.row.instance_id ? 1 : 0));
  for (const task of sorted) {
    for (const [path, file] of harborTaskFiles(task, options)) out.set(`${task.row.instance_id}/${path}`, file);
  }
  out.set('README.md', { content: harborReadme(sorted, options), mode: 0o644 });
  return out;
}
