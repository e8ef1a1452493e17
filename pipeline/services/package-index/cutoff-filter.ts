import { uploadTimeMs, type IndexFile, type ProjectPage } from './index-page.js';

/**
 * What the time machine lets through. A file is kept when it was uploaded strictly before the
 * cutoff (`uploadTime < cutoff`). A file without an upload time (an HTML index, a JSON index that
 * does not record it) cannot be shown to predate the cutoff: `missingUploadTime: 'exclude'` (the
 * default) leaves it out, `'include'` keeps it. With no cutoff every file is kept. Yanked files are
 * kept, with their yanked mark (PEP 592), so that the installer applies PEP 592 itself: pip and uv
 * skip a yanked file unless the requirement pins its version exactly (`==`/`===`). The mark is the
 * index's current one: indexes do not publish when a file was yanked.
 */
export interface CutoffRule {
  /** Null: no cutoff (every file kept). */
  readonly cutoff: Date | null;
  readonly missingUploadTime: 'exclude' | 'include';
}

export interface FilteredPage {
  readonly page: ProjectPage;
  /** Files left out because they were uploaded at or after the cutoff. */
  readonly afterCutoff: number;
  /** Files left out because they have no upload time (missingUploadTime: exclude). */
  readonly missingUploadTime: number;
  /** Files kept although they have no upload time (missingUploadTime: include). */
  readonly keptWithoutUploadTime: number;
}

/** Whether one file passes the rule. Pure. */
export function passesCutoff(file: IndexFile, rule: CutoffRule): 'kept' | 'after-cutoff' | 'no-upload-time' {
  if (rule.cutoff === null) return 'kept';
  if (file.uploadTime === null) return rule.missingUploadTime === 'include' ? 'kept' : 'no-upload-time';
  return uploadTimeMs(file.uploadTime) < rule.cutoff.getTime() ? 'kept' : 'after-cutoff';
}

/** The page as the time machine serves it: only the files that pass the rule. Pure. */
export function filterPage(page: ProjectPage, rule: CutoffRule): FilteredPage {
  const files: IndexFile[] = [];
  let afterCutoff = 0;
  let missing = 0;
  let keptWithout = 0;
  for (const file of page.files) {
    const verdict = passesCutoff(file, rule);
    if (verdict === 'after-cutoff') afterCutoff += 1;
    else if (verdict === 'no-upload-time') missing += 1;
    else {
      files.push(file);
      if (file.uploadTime === null && rule.cutoff !== null) keptWithout += 1;
    }
  }
  return { page: { ...page, files }, afterCutoff, missingUploadTime: missing, keptWithoutUploadTime: keptWithout };
}
