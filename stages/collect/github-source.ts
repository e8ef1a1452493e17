/**
 * Collect through the GitHub REST API (the thin shell around github-record.ts).
 */
import { loadAsvConfig, saveAsvConfig, type AsvConfigFile } from '../../cache/asv-configs.js';
import { loadRepository, repositoryRecordSchema } from '../../cache/repositories.js';
import { ConfigError, ItemError, OutsideServiceError, PerfmineError, summarize } from '../../pipeline/errors.js';
import { pickAsvConfigPath } from '../../pipeline/services/git-parse.js';
import type { GitHubService } from '../../pipeline/services/github.js';
import type { Scope } from '../../pipeline/scope.js';
import type { ItemContext, PipelineContext, WorkItem } from '../../pipeline/stage.js';
import { normalizeInstant } from '../../pipeline/window.js';
import {
  assembleDiff,
  buildGitHubPullRequest,
  filesBeyondList,
  GITHUB_FILES_CAP,
  scanPullPage,
  toComment,
  toFileChange,
  toLinkedIssue,
} from './github-record.js';
import { completeBinaryDiff } from './github-binary.js';
import type { CollectInput, GitHubItemInput, ProblemItemInput } from './input.js';
import { findIssueRefs } from './linked-issues.js';
import { prKey } from '../../pipeline/concepts/keys.js';
import { pullRequestSchema, type Comment, type LinkedIssue, type PullRequest } from '../../pipeline/concepts/records/pull-request.js';
import { collectResultSettings } from './result-settings.js';

export type Collected = { readonly record: PullRequest } | { readonly dropped: string; readonly detail: string };

/** The repositories collect works on: `--repo`, else the repositories discover kept. */
export function repositoriesInScope(ctx: PipelineContext, scope: Scope): string[] {
  if (scope.repos.length > 0) return [...scope.repos];
  const names: string[] = [];
  for (const row of ctx.ledger.list('discover', { statuses: ['done'] })) {
    const parsed = repositoryRecordSchema.safeParse(row.output);
    if (parsed.success && parsed.data.source === 'github') names.push(parsed.data.name);
  }
  return [...new Set(names)];
}

/**
 * One item per pull request merged into the default branch with merged_at in the window: the
 * closed pull requests sorted by `updated` (newest first), read page by page until one is older
 * than the window's start (a PR merged in the window was updated at or after its merge). Every
 * page is a conditional request once seen, so an unchanged window costs no rate limit.
 */
export async function planGitHub(ctx: PipelineContext, scope: Scope): Promise<WorkItem<CollectInput>[]> {
  const repos = repositoriesInScope(ctx, scope);
  if (repos.length === 0) {
    ctx.log.warn({ stage: 'collect' }, 'no repositories to collect from: run discover first, or pass --repo');
    return [];
  }
  const items: WorkItem<CollectInput>[] = [];
  const seen = new Set<string>();
  let next = 0;
  const worker = async () => {
    while (next < repos.length) {
      const name = repos[next++]!;
      try {
        for (const item of await planRepository(ctx, scope, name)) {
          if (seen.has(item.key)) continue;
          seen.add(item.key);
          items.push(item);
        }
      } catch (error) {
        if (error instanceof ConfigError) throw error;
        const s = summarize(error);
        ctx.log.warn(
          { stage: 'collect', repo: name, reason: s.reason, err: s.message },
          'cannot list pull requests; recorded as a repository item',
        );
        const input: ProblemItemInput = {
          source: 'problem',
          repo: name,
          reason: s.reason,
          message: s.message,
          status: error instanceof OutsideServiceError ? (error.status ?? null) : null,
          window: scope.window.label,
        };
        if (!seen.has(name)) {
          seen.add(name);
          items.push({ key: name, repo: name, at: null, input });
        }
      }
    }
  };
  const parallel = Math.max(1, Math.min(ctx.config.github.concurrency, repos.length));
  await Promise.all(Array.from({ length: parallel }, worker));
  items.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return items;
}

async function planRepository(ctx: PipelineContext, scope: Scope, name: string): Promise<WorkItem<CollectInput>[]> {
  const gh = ctx.services.github;
  const known = loadRepository(ctx.db, name);
  let repo: string;
  let defaultBranch: string;
  if (known && known.source === 'github') {
    repo = known.name;
    defaultBranch = known.defaultBranch;
  } else {
    const info = await gh.getRepository(name);
    repo = info.full_name;
    defaultBranch = info.default_branch;
    if (repo.toLowerCase() !== name.toLowerCase())
      ctx.log.info({ stage: 'collect', from: name, to: repo }, 'repository renamed; following it');
  }
  const wanted = new Set(scope.prs);
  const settings = collectResultSettings(ctx.config);
  const items: WorkItem<CollectInput>[] = [];
  let pages = 0;
  for await (const page of gh.closedPullsByUpdated(repo, defaultBranch, ctx.config.collect.listPerPage)) {
    pages += 1;
    const scan = scanPullPage(page, scope.window);
    for (const p of scan.inWindow) {
      if (wanted.size > 0 && !wanted.has(p.number)) continue;
      const input: GitHubItemInput = {
        source: 'github',
        repo,
        number: p.number,
        defaultBranch,
        updatedAt: normalizeInstant(p.updated_at),
        headSha: p.head.sha,
        mergeSha: p.merge_commit_sha!,
        mergedAt: normalizeInstant(p.merged_at!),
        settings,
      };
      items.push({ key: prKey(repo, p.number), repo, at: input.mergedAt, input });
    }
    if (scan.done) break;
  }
  ctx.log.debug({ stage: 'collect', repo, pages, pulls: items.length }, 'listed pull requests');
  return items;
}

/** A repository that could not be listed: dropped when GitHub says it is gone, else failed again. */
export function runProblem(input: ProblemItemInput): Collected {
  if (input.reason === 'github-not-found' || input.reason === 'github-gone') {
    return { dropped: 'repo-not-found', detail: `${input.repo}: ${input.message}` };
  }
  throw new OutsideServiceError('github', input.reason, input.message, {
    ...(input.status === null ? {} : { status: input.status }),
    retryable: true,
  });
}

/** Everything about one merged pull request. */
export async function collectFromGitHub(ctx: ItemContext, input: GitHubItemInput): Promise<Collected> {
  const gh = ctx.services.github;
  const { repo, number } = input;
  const pull = await orNotFound(gh.getPull(repo, number));
  if (pull === null)
    return { dropped: 'pr-not-found', detail: `${repo}#${number} is gone from GitHub (repository or pull request deleted)` };
  if (pull.merged_at === null || pull.merge_commit_sha === null)
    return { dropped: 'not-merged', detail: `${repo}#${number} is not merged` };
  if (pull.base.ref !== input.defaultBranch) {
    return { dropped: 'not-default-branch', detail: `${repo}#${number} was merged into ${pull.base.ref}, not ${input.defaultBranch}` };
  }
  const mergeSha = pull.merge_commit_sha;
  const commit = await orNotFound(gh.getGitCommit(repo, mergeSha));
  if (commit === null)
    return { dropped: 'merge-commit-not-found', detail: `${repo}@${mergeSha} is not in the repository (force-pushed away?)` };
  const baseSha = commit.parents[0]?.sha;
  if (baseSha === undefined) throw new ItemError('merge-commit-without-parent', `${repo}@${mergeSha} has no parent`);

  const missing: string[] = [];
  const listed = await gh.listPullFiles(repo, number);
  const files = listed.files.map(toFileChange);
  if (files.length < pull.changed_files && listed.files.length >= GITHUB_FILES_CAP) {
    const [baseTree, mergeTree] = await Promise.all([gh.getTree(repo, baseSha, true), gh.getTree(repo, mergeSha, true)]);
    if (baseTree.truncated || mergeTree.truncated) missing.push('files');
    else {
      const extra = filesBeyondList(files, baseTree, mergeTree);
      files.push(...extra);
      if (extra.length > 0) missing.push('files.lineCounts');
    }
    ctx.log.info(
      { listed: listed.files.length, changedFiles: pull.changed_files, total: files.length },
      'pull request lists more files than GitHub pages out; completed from the trees',
    );
  }

  let diff = await gh.compareDiff(repo, baseSha, mergeSha);
  if (diff === null) {
    const assembled = assembleDiff(listed.files);
    diff = assembled.diff;
    if (!assembled.complete || files.length > listed.files.length) missing.push('diff.partial');
    ctx.log.info({ files: files.length }, 'GitHub will not render this diff; assembled from the file patches');
  }
  // Binary changes in full, so that the diff applies (GitHub shows them as placeholders).
  const completed = await completeBinaryDiff(gh, repo, baseSha, mergeSha, diff);
  diff = completed.diff;
  if (!completed.complete) missing.push('diff.binary');

  const comments: Comment[] = [];
  if (input.settings.comments) {
    if (pull.comments > 0) comments.push(...(await gh.listIssueComments(repo, number)).map((c) => toComment(c, 'issue')));
    if (pull.review_comments > 0) comments.push(...(await gh.listReviewComments(repo, number)).map((c) => toComment(c, 'review')));
  } else missing.push('comments');

  const linkedIssues = await fetchLinkedIssues(
    gh,
    repo,
    number,
    `${pull.title}\n${pull.body ?? ''}`,
    pull.created_at,
    input.settings.maxLinkedIssues,
  );
  const asvConfig = await asvConfigAt(ctx, gh, repo, baseSha);

  const record = buildGitHubPullRequest({
    repo,
    defaultBranch: input.defaultBranch,
    pull,
    baseSha,
    mergeSha,
    files,
    diff,
    comments,
    linkedIssues,
    asvConfig,
    missing,
  });
  return { record: pullRequestSchema.parse(record) };
}

async function fetchLinkedIssues(
  gh: GitHubService,
  repo: string,
  number: number,
  text: string,
  prCreatedAt: string,
  max: number,
): Promise<LinkedIssue[]> {
  if (max === 0) return [];
  const refs = findIssueRefs(text, repo, number).slice(0, max * 2);
  const out: LinkedIssue[] = [];
  for (const ref of refs) {
    if (out.length >= max) break;
    const issue = await gh.getIssue(ref.repo, ref.number).catch((error: unknown) => {
      // An issue in another repository we may not read is not this item's failure.
      if (error instanceof OutsideServiceError && error.reason === 'github-forbidden') return null;
      throw error;
    });
    if (issue === null || issue.pull_request !== undefined) continue;
    if (Date.parse(issue.created_at) >= Date.parse(prCreatedAt)) continue;
    const comments = issue.comments > 0 ? await gh.listIssueComments(ref.repo, ref.number) : [];
    const linked = toLinkedIssue(ref, issue, comments, prCreatedAt);
    if (linked) out.push(linked);
  }
  return out;
}

/**
 * The asv config at a commit, cached per (repo, sha): the path discover found, when it exists
 * at that commit; else a search of the recursive tree.
 */
export async function asvConfigAt(ctx: PipelineContext, gh: GitHubService, repo: string, sha: string): Promise<AsvConfigFile | null> {
  const cached = loadAsvConfig(ctx.db, repo, sha);
  if (cached !== undefined) return cached;
  const known = loadRepository(ctx.db, repo)?.asvConfigPath;
  if (known) {
    const text = await gh.getFileText(repo, known, sha);
    if (text !== null) {
      saveAsvConfig(ctx.db, repo, sha, { path: known, text });
      return { path: known, text };
    }
  }
  const tree = await gh.getTree(repo, sha, true);
  const path = pickAsvConfigPath(tree.tree.filter((e) => e.type === 'blob').map((e) => e.path));
  if (path === null) {
    if (!tree.truncated) saveAsvConfig(ctx.db, repo, sha, null);
    else ctx.log.warn({ repo, sha }, 'tree too large for GitHub to list; asv config unknown');
    return null;
  }
  const text = await gh.getFileText(repo, path, sha);
  const found = text === null ? null : { path, text };
  saveAsvConfig(ctx.db, repo, sha, found);
  return found;
}

async function orNotFound<T>(promise: Promise<T>): Promise<T | null> {
  try {
    return await promise;
  } catch (error) {
    if (error instanceof PerfmineError && (error.reason === 'github-not-found' || error.reason === 'github-gone')) return null;
    throw error;
  }
}
