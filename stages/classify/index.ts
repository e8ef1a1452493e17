import { z } from 'zod';
import { loadPullRequest } from '../../cache/pull-requests.js';
import { ItemError } from '../../pipeline/errors.js';
import { loadPrompt } from '../../pipeline/prompts.js';
import { openLocalRepository } from '../../pipeline/services/git.js';
import { resolveLlmApiKey } from '../../pipeline/services/llm-key.js';
import { previousOutputs } from '../../pipeline/previous-outputs.js';
import { defineStage, type WorkItem } from '../../pipeline/stage.js';
import { filterOutputSchema, type FilterOutput } from '../../pipeline/concepts/records/filter-output.js';
import { identifiersAtBase } from './base-tree.js';
import { classifyHeuristically, classifyWithLlm } from './classify.js';
import type { ClassifyOutput } from '../../pipeline/concepts/records/classify-output.js';
import { addedIdentifierCandidates, patchVocabulary } from '../../pipeline/concepts/leak-check.js';
import { describeRepository } from './problem-statement.js';
import { classifyResultSettings, type ClassifySettings } from './result-settings.js';

/** The prompt files classify uses; their hashes are part of every item's input. */
export const CLASSIFY_PROMPTS = ['perf-intent', 'problem-extract', 'optimization-category', 'problem-statement'] as const;

/** A filtered pull request, with the settings its result depends on (`llm`, and with an LLM `config`: result-settings.ts). */
export type ClassifyInput = ClassifySettings & {
  readonly filter: FilterOutput;
  /** sha256 of each prompt file: editing a prompt classifies again (answers to unchanged prompts come from the cache). */
  readonly prompts: Readonly<Record<string, string>>;
  /** The repository's description, when discover recorded one. */
  readonly repoDescription: string | null;
  /**
   * A local clone of the repository (`--source git:PATH`), where the leak check reads the base
   * commit's tree; null: it judges from the diff alone (see leak-check.ts).
   */
  readonly baseTree: string | null;
};

const discoverDescription = z.object({ description: z.string().nullable().optional() }).loose();

/**
 * classify: the LLM judges each filtered pull request (performance intent, problem extraction,
 * optimization category and difficulty) and renders the agent-facing problem statement. Under
 * `--llm none` rules decide (cues, the shape of the diff) and no LLM is ever contacted; the
 * statement then leaves the observations to emit (the measured workloads). Either way it records
 * the patch's vocabulary for the leak check.
 */
export const classifyStage = defineStage<ClassifyInput, ClassifyOutput>({
  name: 'classify',
  // 2: --llm none no longer puts the pull request's text in the statement (issue 18); heuristic
  // category and difficulty; linked issues without their parts that name the solution
  version: 2,
  description: 'LLM: performance intent, problem extraction (near-verbatim), optimization category and difficulty; the problem statement',
  system: 'llm',

  preflight(ctx) {
    // Throws the ConfigError that names OPENAI_API_KEY and says that --llm none works without it.
    if (ctx.config.llm.mode === 'openai') resolveLlmApiKey(ctx.config.llm, ctx.credentials);
  },

  async plan(ctx, scope) {
    const rows = previousOutputs(ctx, 'classify', 'filter', filterOutputSchema, scope);
    const prompts = Object.fromEntries(CLASSIFY_PROMPTS.map((name) => [name, loadPrompt(name).hash]));
    const settings = classifyResultSettings(ctx.config);
    const clone =
      scope.source.kind === 'git' && rows.length > 0
        ? { path: scope.source.path, repo: (await openLocalRepository(ctx.services.git, scope.source.path, scope.repos)).name }
        : null;
    const items: WorkItem<ClassifyInput>[] = [];
    for (const { row, output: filter } of rows) {
      const discovered = discoverDescription.safeParse(ctx.ledger.get('discover', filter.repo)?.output);
      items.push({
        key: row.key,
        repo: filter.repo,
        at: filter.mergedAt,
        input: {
          ...settings,
          filter,
          prompts,
          repoDescription: discovered.success ? (discovered.data.description ?? null) : null,
          baseTree: clone?.repo === filter.repo ? clone.path : null,
        },
      });
    }
    return items;
  },

  async run(ctx, item) {
    const { filter } = item.input;
    const pr = loadPullRequest(ctx.db, filter.repo, filter.number);
    if (!pr)
      throw new ItemError('pull-request-missing', `${item.key}: filter passed it but its record is not in the store`, {
        fix: 'run `perfmine stage collect --force` for it',
      });
    const candidate = { pr, filter, repositoryDescription: describeRepository(pr, item.input.repoDescription) };
    const { baseTree } = item.input;
    const atBase = baseTree
      ? await identifiersAtBase(ctx.services.git, baseTree, pr.baseSha, addedIdentifierCandidates(pr.diff, filter.coreFiles), ctx.signal)
      : null;
    if (baseTree && !atBase)
      ctx.log.warn(
        { path: baseTree, baseSha: pr.baseSha },
        'the clone does not have the base commit: the leak check judges from the diff alone',
      );
    const vocabulary = patchVocabulary(pr.diff, filter.coreFiles, atBase);
    // the rules of --llm none read no classify setting; with an LLM they are in the item's input
    const config = 'config' in item.input ? item.input.config : ctx.config.classify;
    const deps = {
      config,
      statementTemplate: loadPrompt('problem-statement'),
      vocabulary,
      item: item.key,
      signal: ctx.signal,
      log: ctx.log,
    };
    const outcome =
      item.input.llm.mode === 'none' ? classifyHeuristically(candidate, deps) : await classifyWithLlm(candidate, ctx.services.llm, deps);
    ctx.log.debug({ status: outcome.status, reason: outcome.status === 'dropped' ? outcome.reason : null }, 'classified');
    return outcome;
  },
});
