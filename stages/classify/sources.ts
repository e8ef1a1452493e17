import type { Comment, FileChange, LinkedIssue, PullRequest } from '../../pipeline/concepts/records/pull-request.js';
import { stripHtmlComments } from '../../pipeline/concepts/html-comments.js';
import { benchmarkCue, type FilterOutput } from '../../pipeline/concepts/records/filter-output.js';

/**
 * The texts classify shows to the LLM and checks extractions against. Pure.
 *
 * "Before" texts are what existed when the pull request was opened: its title and body, and the
 * linked issues opened before it with their comments written before it. Everything else (the
 * pull request's conversation and review comments, issues opened later) is "discussion": usable
 * to describe the solution, never for the problem statement.
 */
export interface ProblemSources {
  /** Labelled text for the prompts: title, labels, body, earlier linked issues and comments. */
  readonly problemText: string;
  /** Labelled text for the prompts: the pull request's comments and later issues. */
  readonly discussion: string;
  /** The raw "before" texts joined (no labels): what initial observations must come from. */
  readonly beforeSource: string;
  /** beforeSource plus the raw discussion texts: what the other extracted fields must come from. */
  readonly allSource: string;
  /** Linked issues opened before the pull request, with only their earlier comments. */
  readonly earlierIssues: readonly LinkedIssue[];
}

/** How the body is labelled for the LLM: a commit's body describes commits, not the problem. */
const BODY_LABEL = {
  'pull-request': 'Pull request description',
  'squash-commit': "Body of the squash commit (the pull request's commits as git kept them; its description is not in the history)",
  'merge-commit': 'Body of the merge commit (under the pull request title)',
} as const;

function before(iso: string, limit: string): boolean {
  const a = Date.parse(iso);
  const b = Date.parse(limit);
  return Number.isFinite(a) && Number.isFinite(b) && a < b;
}

/** Cuts a text to `max` characters with a visible marker. */
export function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}\n[... cut: ${text.length - max} more characters ...]`;
}

export function issueRef(pr: Pick<PullRequest, 'repo'>, issue: Pick<LinkedIssue, 'repo' | 'number'>): string {
  return issue.repo === pr.repo ? `#${issue.number}` : `${issue.repo}#${issue.number}`;
}

export function problemSources(pr: PullRequest, maxChars: number): ProblemSources {
  const body = stripHtmlComments(pr.body).trim();
  const earlierIssues = pr.linkedIssues
    .filter((issue) => before(issue.createdAt, pr.createdAt))
    .map((issue) => ({
      ...issue,
      body: stripHtmlComments(issue.body).trim(),
      comments: issue.comments.filter((c) => before(c.createdAt, pr.createdAt)),
    }));
  const laterIssues = pr.linkedIssues.filter((issue) => !before(issue.createdAt, pr.createdAt));

  const problemParts = [`Pull request title: ${pr.title}`];
  if (pr.labels.length > 0) problemParts.push(`Labels: ${pr.labels.join(', ')}`);
  problemParts.push(`${BODY_LABEL[pr.bodySource ?? 'pull-request']}:\n${body || '(empty)'}`);
  for (const issue of earlierIssues) {
    problemParts.push(`Linked issue ${issueRef(pr, issue)}: ${issue.title}\n${issue.body || '(empty)'}`);
    for (const c of issue.comments) problemParts.push(`Comment on issue ${issueRef(pr, issue)}:\n${stripHtmlComments(c.body).trim()}`);
  }

  const discussionParts: string[] = [];
  for (const c of pr.comments) discussionParts.push(`${commentLabel(c)}:\n${stripHtmlComments(c.body).trim()}`);
  for (const issue of laterIssues) {
    discussionParts.push(
      `Issue ${issueRef(pr, issue)} (opened after the pull request): ${issue.title}\n${stripHtmlComments(issue.body).trim()}`,
    );
    for (const c of issue.comments) discussionParts.push(`Comment on issue ${issueRef(pr, issue)}:\n${stripHtmlComments(c.body).trim()}`);
  }

  const beforeRaw = [
    pr.title,
    body,
    ...earlierIssues.flatMap((i) => [i.title, i.body, ...i.comments.map((c) => stripHtmlComments(c.body))]),
  ];
  const laterRaw = [
    ...pr.comments.map((c) => stripHtmlComments(c.body)),
    ...laterIssues.flatMap((i) => [i.title, stripHtmlComments(i.body), ...i.comments.map((c) => stripHtmlComments(c.body))]),
  ];
  const beforeSource = beforeRaw.filter(Boolean).join('\n\n');
  return {
    problemText: clip(problemParts.join('\n\n'), maxChars),
    discussion: clip(discussionParts.join('\n\n') || '(no discussion)', maxChars),
    beforeSource,
    allSource: [beforeSource, ...laterRaw.filter(Boolean)].join('\n\n'),
    earlierIssues,
  };
}

function commentLabel(c: Comment): string {
  return c.kind === 'review' ? `Review comment${c.path ? ` on ${c.path}` : ''}` : 'Comment on the pull request';
}

/** A markdown table of the changed files: path, status, added and deleted lines. */
export function fileChangesTable(files: readonly FileChange[], max = 200): string {
  const rows = files.slice(0, max).map((f) => {
    const path = f.previousPath && f.previousPath !== f.path ? `${f.previousPath} → ${f.path}` : f.path;
    return `| ${path.replace(/\|/g, '\\|')} | ${f.status}${f.binary ? ' (binary)' : ''} | +${f.additions} | -${f.deletions} |`;
  });
  const more = files.length > max ? [`| ... ${files.length - max} more files | | | |`] : [];
  return ['| file | status | added | deleted |', '| --- | --- | ---: | ---: |', ...rows, ...more].join('\n');
}

/**
 * The file table with the facts filter established about the files: asv benchmarks changed
 * beside the core files (a benchmark added or updated for the code the pull request changes).
 */
export function withFacts(table: string, filter: Pick<FilterOutput, 'positiveCues' | 'benchmarkDir'>): string {
  const cue = benchmarkCue({ positive: filter.positiveCues });
  if (!cue) return table;
  const dir = filter.benchmarkDir ?? 'the benchmark directory';
  return `${table}\n\nFact: this pull request changes asv benchmarks (under ${dir}/) together with library code; ${cue.text}.`;
}
