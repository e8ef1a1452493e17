import type { PullRequest } from '../../pipeline/concepts/records/pull-request.js';
import { parseAsvConfig } from '../../pipeline/concepts/asv-config.js';
import type { FilterConfig } from './config.js';
import { judgeMessage, type CueMatch } from './message.js';
import type { FilterOutput } from '../../pipeline/concepts/records/filter-output.js';
import { benchmarkDirGlob, globToRegExp, pathMatcher, type PathMatcher } from '../../pipeline/concepts/path-matcher.js';
import { withinTokens, type TextSource } from './tokens.js';

/** Every reason filter drops a pull request for: short, stable, shown by `perfmine status`. */
export const FILTER_REASONS = [
  'not-merged',
  'not-default-branch',
  'no-asv-config',
  'invalid-asv-config',
  'too-many-files',
  'too-many-lines',
  'no-core-files',
  'negative-message',
  'diff-too-large',
] as const;
export type FilterReason = (typeof FILTER_REASONS)[number];

export interface FilterDecision {
  readonly status: 'done' | 'dropped';
  readonly reason: FilterReason | null;
  /** One sentence about the decision. */
  readonly detail: string;
  readonly output: FilterOutput;
}

/** A pull request as the filter sees it: the record, with its diff known by size and read on demand. */
export type FilterSubject = Omit<PullRequest, 'diff'> & { readonly diff: string | TextSource };

const matchers = new WeakMap<FilterConfig, Map<string | null, PathMatcher>>();

/** The non-functional paths of a configuration plus a benchmark directory, as a matcher (one per pair). */
function matcherFor(config: FilterConfig, benchmarkDir: string | null): PathMatcher {
  let byDir = matchers.get(config);
  if (!byDir) matchers.set(config, (byDir = new Map()));
  let matcher = byDir.get(benchmarkDir);
  if (!matcher)
    byDir.set(
      benchmarkDir,
      (matcher = pathMatcher([...config.nonFunctionalPaths, ...config.extraNonFunctionalPaths, ...(benchmarkDir ? [benchmarkDir] : [])])),
    );
  return matcher;
}

/**
 * The positive cue of a pull request that changes files under the base commit's asv
 * `benchmark_dir` next to core files (a benchmark added or changed for the code it changes), or
 * null. Its text names the files, relative to the benchmark directory.
 */
export function benchmarksChanged(
  files: readonly { readonly path: string; readonly previousPath: string | null }[],
  benchmarkDirGlob: string | null,
  coreFiles: number,
): CueMatch | null {
  if (benchmarkDirGlob === null || coreFiles === 0) return null;
  const re = globToRegExp(benchmarkDirGlob);
  const dir = benchmarkDirGlob.slice(0, -'**'.length);
  const changed = files.filter((f) => re.test(f.path) || (f.previousPath !== null && re.test(f.previousPath))).map((f) => f.path);
  if (changed.length === 0) return null;
  const names = changed.map((p) => (p.startsWith(dir) ? p.slice(dir.length) : p)).join(', ');
  const text = `benchmarks changed: ${names}`;
  return { cue: 'benchmarks', where: 'files', text: text.length <= 60 ? text : `${text.slice(0, 59)}…` };
}

/**
 * The filter's decision about one collected pull request. Pure: the record, its content hash and
 * the configuration in, the decision out. Rules run cheapest first and the first failing one is
 * the reason; the diff is measured only when every other rule passed, and read only when its size
 * alone cannot tell.
 */
export function decideFilter(
  pr: FilterSubject,
  contentHash: string,
  config: FilterConfig,
  measure: (diff: string | TextSource, limit: number) => { within: boolean; tokens: number | null; bytes: number } = (diff, limit) =>
    withinTokens(diff, limit, config.tokenizer),
): FilterDecision {
  const message = judgeMessage(pr);
  const asv = pr.asvConfig ? parseAsvConfig(pr.asvConfig.text) : null;
  const benchmarkDir = pr.asvConfig && asv?.ok ? benchmarkDirGlob(pr.asvConfig.path, asv.config.benchmark_dir ?? 'benchmarks') : null;
  const matcher = matcherFor(config, benchmarkDir);
  // A rename counts as core when either side of it is core (moving a module out of the package changes it).
  const coreFiles = pr.files
    .filter((f) => matcher.nonFunctional(f.path) === null || (f.previousPath !== null && matcher.nonFunctional(f.previousPath) === null))
    .map((f) => f.path);
  const benchmarkCue = benchmarksChanged(pr.files, benchmarkDir, coreFiles.length);
  // Changed benchmarks do not outweigh a negative title (deprecations, renames and reverts update
  // the benchmarks that use what they change): they turn only an ambiguous message positive.
  const positiveCues = benchmarkCue ? [...message.positive, benchmarkCue] : message.positive;
  const messageVerdict = benchmarkCue && message.verdict === 'ambiguous' ? 'positive' : message.verdict;
  const changedFiles = Math.max(pr.changedFiles, pr.files.length);
  const changedLines = pr.additions + pr.deletions;

  // One output object per decision, its diff fields filled in once the diff is measured (a
  // spread copy of it per decision cost more than the rules themselves over 30,000 items).
  const output: FilterOutput = {
    repo: pr.repo,
    number: pr.number,
    mergedAt: pr.mergedAt,
    baseSha: pr.baseSha,
    mergeSha: pr.mergeSha,
    contentHash,
    messageVerdict,
    positiveCues: [...positiveCues],
    negativeCues: [...message.negative],
    coreFiles,
    changedFiles,
    changedLines,
    tokenizer: config.tokenizer,
    asvConfigPath: pr.asvConfig?.path ?? null,
    benchmarkDir: benchmarkDir ? benchmarkDir.slice(0, -'/**'.length) : null,
    diffTokens: null,
    diffBytes: null,
  };
  const drop = (reason: FilterReason, detail: string): FilterDecision => ({ status: 'dropped', reason, detail, output });

  if (!pr.mergedAt || !pr.mergeSha) return drop('not-merged', 'the pull request was not merged');
  if (!pr.mergedIntoDefault) return drop('not-default-branch', `merged into ${pr.baseRef}, not the default branch ${pr.defaultBranch}`);
  if (!pr.asvConfig) return drop('no-asv-config', `no asv config in the tree at the base commit ${pr.baseSha.slice(0, 12)}`);
  if (asv && !asv.ok) return drop('invalid-asv-config', `${pr.asvConfig.path} at the base commit: ${asv.error}`);
  if (changedFiles > config.maxFiles) return drop('too-many-files', `${changedFiles} changed files (limit ${config.maxFiles})`);
  if (changedLines > config.maxChangedLines)
    return drop('too-many-lines', `${changedLines} changed lines (limit ${config.maxChangedLines})`);
  if (coreFiles.length === 0) {
    return drop('no-core-files', `all ${pr.files.length} changed files are tests, docs, benchmarks, CI, packaging or prose`);
  }
  if (messageVerdict === 'negative') {
    const cues = message.negative.map((c) => `${c.cue} ("${c.text}")`).join(', ');
    const bench = benchmarkCue ? ` (${benchmarkCue.text}: not enough against the title)` : '';
    return drop('negative-message', `the message says ${cues} and gives no performance cue${bench}`);
  }
  const diff = measure(pr.diff, config.maxDiffTokens);
  output.diffTokens = diff.tokens;
  output.diffBytes = diff.bytes;
  if (!diff.within) {
    return drop('diff-too-large', `the diff has ${diff.tokens} tokens (${config.tokenizer}; limit ${config.maxDiffTokens})`);
  }
  const size = diff.tokens === null ? `a diff of ${diff.bytes} bytes (so at most that many tokens)` : `${diff.tokens} diff tokens`;
  const cues = positiveCues.map((c) => c.cue);
  return {
    status: 'done',
    reason: null,
    detail:
      messageVerdict === 'ambiguous'
        ? `${coreFiles.length} core files, ${size}; no message cue either way (the LLM decides)`
        : `${coreFiles.length} core files, ${size}; performance cues: ${[...new Set(cues)].join(', ')}`,
    output,
  };
}
