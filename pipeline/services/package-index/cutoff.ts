import { InternalError } from '../../errors.js';

/** `synthesize.index.cutoff`: the base commit's committer date, no cutoff, or a fixed day (UTC). */
export type CutoffSetting = 'commit-date' | 'none' | string;

const DAY_MS = 86_400_000;

/**
 * The instant before which files must have been uploaded: the setting's instant plus `slackDays`
 * days, or null for `none`. A fixed `YYYY-MM-DD` means that day's start, UTC; `commit-date` needs
 * the base commit's committer date (ISO 8601, any offset). Pure.
 */
export function resolveCutoff(setting: CutoffSetting, slackDays: number, commitDate: string | Date | null): Date | null {
  if (setting === 'none') return null;
  let base: number;
  if (setting === 'commit-date') {
    if (commitDate === null)
      throw new InternalError('index-cutoff-without-date', 'synthesize.index.cutoff is commit-date but the commit has no date');
    base = typeof commitDate === 'string' ? Date.parse(commitDate) : commitDate.getTime();
  } else {
    const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(setting);
    base = m ? Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])) : Number.NaN;
  }
  if (Number.isNaN(base))
    throw new InternalError('index-cutoff-invalid', `not a cutoff: ${JSON.stringify(setting === 'commit-date' ? commitDate : setting)}`);
  return new Date(base + slackDays * DAY_MS);
}
