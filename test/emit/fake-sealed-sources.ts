import type { SealedSourcesFactory } from '../../stages/emit/sealed-sources.js';

/**
 * A stand-in for the sealed history of candidates that have no real repository (the stage tests'
 * canned candidates): a few bytes that name the commit, as `source/repo.bundle`.
 */
export const fakeSealedSources: SealedSourcesFactory = () => ({
  history: (s) => Promise.resolve(new Map([['source/repo.bundle', Buffer.from(`sealed history of ${s.repo}@${s.sha}\n`)]])),
});
