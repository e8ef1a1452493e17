import { renderPrompt, type Prompt } from '../../pipeline/prompts.js';
import type { LinkedIssue, PullRequest } from '../../pipeline/concepts/records/pull-request.js';
import { parseAsvConfig } from '../../pipeline/concepts/asv-config.js';
import { stripHtmlComments } from '../../pipeline/concepts/html-comments.js';
import { Anonymizer } from '../../pipeline/concepts/anonymize.js';
import { issueRef } from './sources.js';
import { MEASURING_TOOL_SLOT } from '../../pipeline/concepts/records/classify-output.js';

/**
 * The agent-facing problem statement, rendered from prompts/problem-statement.md. Pure.
 *
 * It holds the fixed instructions, the repository description, the observations (extracted
 * initial observations, or under `--llm none` the slot where emit puts the measured workloads),
 * and the linked issues opened before the pull request with their earlier comments, without the
 * parts that name the solution (leak-check.ts). It never holds the pull request's own title,
 * body, branch or commit messages under `--llm none`, nor the patch, the solution overview or
 * anything written after the pull request was opened: the callers pass only "before" texts (see
 * sources.ts). Handles and e-mail addresses are anonymized outside code.
 */
export interface StatementInput {
  readonly repo: string;
  readonly repositoryDescription: string;
  readonly observations: readonly string[];
  readonly issues: readonly LinkedIssue[];
}

export function renderProblemStatement(template: Prompt, input: StatementInput): string {
  const anon = new Anonymizer();
  const observations = input.observations.map((o) => anon.anonymize(o.trim())).join('\n\n');
  const issues = input.issues.length ? input.issues.map((issue) => renderIssue(input.repo, issue, anon)).join('\n\n') : 'No linked issues.';
  const { system, user } = renderPrompt(template, {
    repository: input.repo,
    repository_description: input.repositoryDescription,
    observations: observations || '(none)',
    linked_issues: issues,
    measuring_tool: MEASURING_TOOL_SLOT,
  });
  return `${system}\n\n${user}\n`;
}

function renderIssue(repo: string, issue: LinkedIssue, anon: Anonymizer): string {
  const title = issue.title.trim() ? `: ${anon.anonymize(issue.title)}` : '';
  const parts = [
    `## Issue ${issueRef({ repo }, issue)}${title}`,
    anon.anonymize(stripHtmlComments(issue.body).trim()) || '(no description)',
  ];
  issue.comments.forEach((c, i) => {
    parts.push(`### Comment ${i + 1}`, anon.anonymize(stripHtmlComments(c.body).trim()));
  });
  return parts.join('\n\n');
}

/** A few lines about the repository: its description (from discover, when known) and its asv suite. */
export function describeRepository(pr: Pick<PullRequest, 'repo' | 'asvConfig'>, description: string | null): string {
  const lines = [`\`${pr.repo}\`${description ? `: ${description.trim()}` : ''}`];
  if (pr.asvConfig) {
    const parsed = parseAsvConfig(pr.asvConfig.text);
    if (parsed.ok) {
      const { project, project_url: url, benchmark_dir: dir } = parsed.config;
      if (project) lines.push(`Python project: ${project}${url ? ` (${url})` : ''}.`);
      const base = pr.asvConfig.path.includes('/') ? pr.asvConfig.path.slice(0, pr.asvConfig.path.lastIndexOf('/') + 1) : '';
      lines.push(
        `Benchmarks: an asv suite configured in \`${pr.asvConfig.path}\`, with benchmarks in \`${base}${(dir ?? 'benchmarks').replace(/^\.\//, '')}\`.`,
      );
    }
  }
  return lines.join('\n\n');
}
