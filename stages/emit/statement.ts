import type { ImprovedWorkload } from '../../cache/improved-workloads.js';
import { describeLeaks, exemptWords, findLeaks, leakCheckOf, patchVocabulary, type Leak } from '../../pipeline/concepts/leak-check.js';
import {
  MEASURED_WORKLOADS_SLOT,
  MEASURING_TOOL_SLOT,
  type ClassifyOutput,
  type PatchVocabulary,
} from '../../pipeline/concepts/records/classify-output.js';
import type { FileChange } from '../../pipeline/concepts/records/pull-request.js';
import { DEFAULT_NON_FUNCTIONAL_PATHS } from '../../pipeline/concepts/path-matcher.js';
import { pathMatcher } from '../../pipeline/concepts/path-matcher.js';
import { measuredWorkloadsSection } from './measured-workloads.js';

/**
 * The problem statement a task is emitted with, and the leak check every statement passes before
 * it is emitted, whatever classified it (pipeline/concepts/leak-check.ts defines the check). Pure.
 */

export interface StatementInput {
  readonly classify: ClassifyOutput;
  readonly improved: readonly ImprovedWorkload[];
  /** The expert patch (the pull request's diff) and its files. */
  readonly diff: string;
  readonly files: readonly FileChange[];
  /** The statement template's own text (statementTemplateText). */
  readonly templateText: string;
  /** How to measure in the task's environment (measuring-tool.ts): fills MEASURING_TOOL_SLOT. */
  readonly measuringTool: string;
}

export type StatementResult =
  | { readonly ok: true; readonly statement: string; readonly vocabulary: PatchVocabulary }
  | {
      readonly ok: false;
      readonly reason: 'statement-leaks-solution' | 'no-measured-workloads';
      readonly detail: string;
      readonly leaks: readonly Leak[];
    };

/** The vocabulary classify recorded, or (a record from before it did) one from the diff alone over the default core files. */
function vocabularyOf(input: StatementInput): PatchVocabulary {
  if (input.classify.leakCheck) return input.classify.leakCheck;
  const paths = pathMatcher(DEFAULT_NON_FUNCTIONAL_PATHS);
  const core = input.files.filter((f) => !f.binary && paths.nonFunctional(f.path) === null).map((f) => f.path);
  return patchVocabulary(input.diff, core, null);
}

export function emittedStatement(input: StatementInput): StatementResult {
  const { classify } = input;
  if (classify.problemSource === 'pr-text') {
    return {
      ok: false,
      reason: 'statement-leaks-solution',
      leaks: [],
      detail:
        "the statement is the pull request's own text (classified by a version before 2): run `perfmine stage classify --force` for it",
    };
  }
  let statement = classify.problemStatement;
  if (classify.problemSource === 'measured') {
    const at = statement.indexOf(MEASURED_WORKLOADS_SLOT);
    if (at < 0 || input.improved.length === 0) {
      return {
        ok: false,
        reason: 'no-measured-workloads',
        leaks: [],
        detail:
          at < 0 ? 'the rules-only statement has no place for the measured workloads' : 'no improved workload to describe the task with',
      };
    }
    statement = `${statement.slice(0, at)}${measuredWorkloadsSection(input.improved)}${statement.slice(at + MEASURED_WORKLOADS_SLOT.length)}`;
  }
  // a statement classified before the slot existed keeps its own words
  statement = statement.replaceAll(MEASURING_TOOL_SLOT, input.measuringTool);
  const vocabulary = vocabularyOf(input);
  const exempt = exemptWords(
    input.templateText,
    input.measuringTool,
    classify.repositoryDescription ?? '',
    classify.repo,
    ...input.improved.map((w) => `${w.name} ${w.params ?? ''}`),
  );
  const leaks = findLeaks(statement, leakCheckOf(vocabulary, input.diff), exempt);
  if (leaks.length > 0)
    return { ok: false, reason: 'statement-leaks-solution', leaks, detail: `the statement names the solution: ${describeLeaks(leaks)}` };
  return { ok: true, statement, vocabulary };
}
