import type { Logger } from '../../pipeline/logging.js';
import type { Prompt } from '../../pipeline/prompts.js';
import type { LlmService } from '../../pipeline/services/llm-port.js';
import type { Outcome } from '../../pipeline/stage.js';
import type { LinkedIssue, PullRequest } from '../../pipeline/concepts/records/pull-request.js';
import { readableDiff } from '../../pipeline/concepts/readable-diff.js';
import { textCues } from '../../pipeline/concepts/records/filter-output.js';
import type { FilterOutput } from '../../pipeline/concepts/records/filter-output.js';
import { categoryAnswer, perfIntentAnswer, problemExtractAnswer } from './answers.js';
import type { ClassifyConfig } from './config.js';
import { changeShape } from './change-shape.js';
import { exemptWords, issuesWithoutLeaks, leakCheckOf } from '../../pipeline/concepts/leak-check.js';
import {
  MEASURED_WORKLOADS_SLOT,
  type ClassifyOutput,
  type ExtractedProblem,
  type PatchVocabulary,
} from '../../pipeline/concepts/records/classify-output.js';
import { statementTemplateText } from '../../pipeline/concepts/leak-check.js';
import { renderProblemStatement } from './problem-statement.js';
import { clip, fileChangesTable, problemSources, withFacts } from './sources.js';
import { indexSource, keepVerbatim } from './verbatim.js';

/** Every reason classify drops a candidate for: short, stable, shown by `perfmine status`. */
export const CLASSIFY_REASONS = ['not-performance', 'no-perf-cue', 'no-initial-observations'] as const;
export type ClassifyReason = (typeof CLASSIFY_REASONS)[number];

/** One candidate: the collected record, the filter's verdict on it, and what is known of its repository. */
export interface PullRequestCandidate {
  readonly pr: PullRequest;
  readonly filter: FilterOutput;
  readonly repositoryDescription: string;
}

export interface ClassifyDeps extends StatementDeps {
  readonly config: ClassifyConfig;
  /** The item key, recorded with every LLM request. */
  readonly item: string;
  readonly signal?: AbortSignal;
  readonly log?: Logger;
}

function ids(c: PullRequestCandidate) {
  return {
    repo: c.pr.repo,
    number: c.pr.number,
    baseSha: c.pr.baseSha,
    mergeSha: c.pr.mergeSha,
    mergedAt: c.pr.mergedAt,
    contentHash: c.filter.contentHash,
    positiveCues: [...new Set(c.filter.positiveCues.map((p) => p.cue))],
  };
}

/** What the problem statement is rendered with, besides the candidate. */
export interface StatementDeps {
  /** prompts/problem-statement.md. */
  readonly statementTemplate: Prompt;
  /** What the patch brings that the base did not have (leak-check.ts). */
  readonly vocabulary: PatchVocabulary;
}

/** The earlier linked issues without their parts that name the solution. */
function checkedIssues(
  c: PullRequestCandidate,
  issues: readonly LinkedIssue[],
  deps: StatementDeps,
): { issues: LinkedIssue[]; droppedParts: number } {
  const exempt = exemptWords(statementTemplateText(deps.statementTemplate), c.repositoryDescription, c.pr.repo);
  const checked = issuesWithoutLeaks(issues, leakCheckOf(deps.vocabulary, c.pr.diff), exempt);
  return { issues: checked.issues, droppedParts: checked.droppedParts };
}

/**
 * `--llm none`: YES only when the filter found a positive performance cue in the title, the body
 * or the name of the branch the pull request came from, or asv benchmarks changed beside the
 * core files (labels do not count). The problem statement never holds the pull request's own title,
 * body, branch name or commit messages (they describe the change, not the symptom): it holds the
 * repository, the linked issues written before the pull request (without their parts that name
 * the solution), and MEASURED_WORKLOADS_SLOT where emit puts the workloads validate measured
 * (`problemSource: 'measured'`). Category and difficulty come from rules on the diff
 * (change-shape.ts), marked `heuristic`, with the reason. Pure.
 */
export function classifyHeuristically(c: PullRequestCandidate, deps: StatementDeps): Outcome<ClassifyOutput> {
  const cues = textCues({ positive: c.filter.positiveCues });
  if (cues.length === 0) {
    return {
      status: 'dropped',
      reason: 'no-perf-cue',
      detail: 'heuristic (--llm none): no performance cue in the title, body or branch name, and no asv benchmark changed',
    };
  }
  const listed = [...new Set(cues.map((m) => `${m.cue} ("${m.text}" in the ${m.where})`))].join(', ');
  const shape = changeShape(c.pr.diff, c.pr.files, c.filter.coreFiles);
  const { issues, droppedParts } = checkedIssues(c, problemSources(c.pr, Number.MAX_SAFE_INTEGER).earlierIssues, deps);
  const output: ClassifyOutput = {
    ...ids(c),
    classifier: 'heuristic',
    reasoning: `heuristic (--llm none): performance cues ${listed}`,
    category: shape.category,
    difficulty: shape.difficulty,
    problemStatement: renderProblemStatement(deps.statementTemplate, {
      repo: c.pr.repo,
      repositoryDescription: c.repositoryDescription,
      observations: [MEASURED_WORKLOADS_SLOT],
      issues,
    }),
    problemSource: 'measured',
    problem: null,
    categoryModel: 'heuristic',
    categoryReason: shape.reason,
    repositoryDescription: c.repositoryDescription,
    leakCheck: deps.vocabulary,
    leakingIssueParts: droppedParts,
  };
  return {
    status: 'done',
    output,
    detail: `heuristic YES: ${[...new Set(cues.map((m) => m.cue))].join(', ')}; ${shape.category ?? 'uncategorized'}, ${shape.difficulty ?? 'difficulty unknown'}${droppedParts > 0 ? `; ${droppedParts} issue part(s) left out for naming the solution` : ''}`,
  };
}

/**
 * With the LLM: the performance-intent judge, then the problem extractor (every sentence checked
 * near-verbatim against its source), then the category and difficulty classifier. An LLM failure
 * is thrown (an OutsideServiceError with a named reason) and recorded by the runner.
 */
export async function classifyWithLlm(c: PullRequestCandidate, llm: LlmService, deps: ClassifyDeps): Promise<Outcome<ClassifyOutput>> {
  const { config } = deps;
  const sources = problemSources(c.pr, config.maxDescriptionChars);
  const fileChanges = withFacts(fileChangesTable(c.pr.files), c.filter);
  const shownDiff = readableDiff(c.pr.diff);
  const common = { item: deps.item, ...(deps.signal ? { signal: deps.signal } : {}) };
  // both prompts read the same three inputs
  const inputs = { problem_description: sources.problemText, diff: shownDiff, file_changes: fileChanges };

  const judged = await llm.structured({
    prompt: 'perf-intent',
    inputs,
    schema: perfIntentAnswer,
    schemaName: 'perf_intent',
    ...common,
  });
  if (judged.value.label === 'NO') {
    return { status: 'dropped', reason: 'not-performance', detail: `${judged.model}: ${clip(judged.value.reasoning, 600)}` };
  }

  const extracted = await llm.structured({
    prompt: 'problem-extract',
    inputs: { problem_text: sources.problemText, discussion: sources.discussion },
    schema: problemExtractAnswer,
    schemaName: 'problem_extract',
    ...common,
  });
  const before = indexSource(sources.beforeSource);
  const all = indexSource(sources.allSource);
  const check = (passages: readonly string[], source: typeof before) =>
    keepVerbatim(passages, source, config.verbatimThreshold, config.verbatimWindowFactor);
  const initial = check(extracted.value.initial_observations, before);
  const triage = check(extracted.value.triage_attempts, all);
  const overview = check(extracted.value.solution_overview, all);
  const results = check(extracted.value.solution_observations, all);
  const droppedSentences = [initial, triage, overview, results].reduce((n, r) => n + r.dropped.length, 0);
  if (droppedSentences > 0) {
    deps.log?.info(
      {
        dropped: droppedSentences,
        worst: [...initial.dropped, ...triage.dropped]
          .slice(0, 3)
          .map((d) => ({ ratio: Number(d.ratio.toFixed(2)), sentence: d.sentence.slice(0, 120) })),
      },
      'extracted sentences failed the verbatim check',
    );
  }
  if (initial.kept.length === 0) {
    const returned = extracted.value.initial_observations.length;
    return {
      status: 'dropped',
      reason: 'no-initial-observations',
      detail:
        returned === 0
          ? `${extracted.model} extracted no initial observation`
          : `all ${initial.dropped.length} initial-observation sentences failed the verbatim check (threshold ${config.verbatimThreshold})`,
    };
  }
  const problem: ExtractedProblem = {
    initialObservations: initial.kept,
    triageAttempts: triage.kept,
    solutionOverview: overview.kept,
    solutionObservations: results.kept,
    droppedSentences,
  };

  let category: ClassifyOutput['category'] = null;
  let difficulty: ClassifyOutput['difficulty'] = null;
  let categoryModel: string | null = null;
  let categoryReason: string | null = 'not asked (classify.categorize is false)';
  if (config.categorize) {
    const classified = await llm.structured({
      prompt: 'optimization-category',
      inputs,
      schema: categoryAnswer,
      schemaName: 'optimization_category',
      ...common,
    });
    category = classified.value.category;
    difficulty = classified.value.difficulty;
    categoryModel = classified.model;
    categoryReason = classified.value.reasoning;
  }
  const checked = checkedIssues(c, sources.earlierIssues, deps);

  const output: ClassifyOutput = {
    ...ids(c),
    classifier: judged.model,
    reasoning: judged.value.reasoning,
    category,
    difficulty,
    problemStatement: renderProblemStatement(deps.statementTemplate, {
      repo: c.pr.repo,
      repositoryDescription: c.repositoryDescription,
      observations: problem.initialObservations,
      issues: checked.issues,
    }),
    problemSource: 'extracted',
    problem,
    categoryModel,
    categoryReason,
    repositoryDescription: c.repositoryDescription,
    leakCheck: deps.vocabulary,
    leakingIssueParts: checked.droppedParts,
  };
  return { status: 'done', output, detail: `${judged.model}: YES; ${category ?? 'uncategorized'}, ${difficulty ?? 'difficulty unknown'}` };
}
