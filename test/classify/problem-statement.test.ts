import { describe, expect, it } from 'vitest';
import { loadPrompt } from '../../pipeline/prompts.js';
import { classifyHeuristically } from '../../stages/classify/classify.js';
import { patchVocabulary } from '../../pipeline/concepts/leak-check.js';
import { MEASURED_WORKLOADS_SLOT, MEASURING_TOOL_SLOT } from '../../pipeline/concepts/records/classify-output.js';
import { describeRepository, renderProblemStatement } from '../../stages/classify/problem-statement.js';
import { fileChangesTable, problemSources } from '../../stages/classify/sources.js';
import { filterConfig } from '../../stages/filter/config.js';
import { decideFilter } from '../../stages/filter/decide.js';
import { file, makePullRequest } from '../helpers/pull-request.js';

const template = loadPrompt('problem-statement');

const issue = {
  repo: 'acme/fastlib',
  number: 77,
  title: 'groupby().sum() is 30x slower than in 1.5',
  body: 'Reported by @zed (zed@example.com): `df.groupby("k").sum()` takes 12 s.\n\n```python\n# from @zed\ndf.groupby("k").sum()\n```',
  state: 'closed',
  author: 'zed',
  createdAt: '2025-03-20T09:00:00Z',
  labels: ['Performance'],
  comments: [
    {
      author: 'ann',
      authorAssociation: 'MEMBER',
      body: 'Confirmed, @zed. The loop in _aggregate is the culprit.',
      createdAt: '2025-03-21T09:00:00Z',
      kind: 'issue' as const,
      path: null,
    },
    {
      author: 'ann',
      authorAssociation: 'MEMBER',
      body: 'LATE COMMENT: fixed by the PR, thanks!',
      createdAt: '2025-04-11T09:00:00Z',
      kind: 'issue' as const,
      path: null,
    },
  ],
  via: 'closing-keyword' as const,
};
const laterIssue = { ...issue, number: 90, title: 'LATER ISSUE: follow-up', createdAt: '2025-04-05T00:00:00Z', comments: [] };

const pr = makePullRequest({
  body: 'Closes #77.\n\nThe groupby sum loops in Python over every group. SOLUTION TEXT: this PR switches to np.add.reduceat.',
  linkedIssues: [issue, laterIssue],
  comments: [
    {
      author: 'rev',
      authorAssociation: 'MEMBER',
      body: 'REVIEW TEXT: looks good, 25x faster here.',
      createdAt: '2025-04-03T00:00:00Z',
      kind: 'review',
      path: 'fastlib/core.py',
    },
  ],
});

describe('problem sources', () => {
  const sources = problemSources(pr, 40_000);
  it('keeps issues opened before the pull request, with their earlier comments only', () => {
    expect(sources.earlierIssues.map((i) => i.number)).toEqual([77]);
    expect(sources.earlierIssues[0]!.comments.map((c) => c.body)).toEqual(['Confirmed, @zed. The loop in _aggregate is the culprit.']);
    expect(sources.beforeSource).not.toContain('LATE COMMENT');
    expect(sources.beforeSource).not.toContain('REVIEW TEXT');
    expect(sources.beforeSource).not.toContain('LATER ISSUE');
    expect(sources.allSource).toContain('REVIEW TEXT');
    expect(sources.discussion).toContain('Review comment on fastlib/core.py');
    expect(sources.discussion).toContain('opened after the pull request');
  });
  it('labels the prompt text but not the verbatim sources', () => {
    expect(sources.problemText).toContain('Pull request title: PERF: speed up groupby sum');
    expect(sources.beforeSource).not.toContain('Pull request title');
  });
  it('cuts a long text with a visible marker', () => {
    expect(problemSources(pr, 50).problemText).toMatch(/\[\.\.\. cut: \d+ more characters \.\.\.\]$/);
  });
  it('tables the file changes', () => {
    expect(fileChangesTable([file('a|b.py', 3, 1), file('new.py', 0, 0, { status: 'renamed', previousPath: 'old.py' })])).toBe(
      [
        '| file | status | added | deleted |',
        '| --- | --- | ---: | ---: |',
        '| a\\|b.py | modified | +3 | -1 |',
        '| old.py → new.py | renamed | +0 | -0 |',
      ].join('\n'),
    );
  });
});

describe('the agent-facing problem statement', () => {
  const statement = renderProblemStatement(template, {
    repo: pr.repo,
    repositoryDescription: describeRepository(pr, 'Fast numerical kernels.'),
    observations: ['Reported by @zed: the groupby sum loops in Python over every group.'],
    issues: problemSources(pr, 40_000).earlierIssues,
  });

  it('holds the fixed instructions, the repository description, the observations and the earlier issues', () => {
    expect(statement).toContain('`acme/fastlib`');
    expect(statement).toMatch(/pytest/);
    // how to measure depends on the environment: emit fills the slot (stages/emit/measuring-tool.ts)
    expect(statement).toContain(MEASURING_TOOL_SLOT);
    expect(statement).toContain('`acme/fastlib`: Fast numerical kernels.');
    expect(statement).toContain('Python project: fastlib (https://example.org/fastlib).');
    expect(statement).toContain('benchmarks in `benchmarks`');
    expect(statement).toContain('the groupby sum loops in Python over every group.');
    expect(statement).toContain('## Issue #77: groupby().sum() is 30x slower than in 1.5');
    expect(statement).toContain('The loop in _aggregate is the culprit.');
  });

  it('never holds the patch, the solution, or text written after the pull request was opened', () => {
    expect(statement).not.toContain('np.add.at');
    expect(statement).not.toContain('diff --git');
    expect(statement).not.toContain('SOLUTION TEXT');
    expect(statement).not.toContain('REVIEW TEXT');
    expect(statement).not.toContain('LATE COMMENT');
    expect(statement).not.toContain('LATER ISSUE');
  });

  it('anonymizes handles and e-mails outside code, consistently, and leaves code alone', () => {
    expect(statement).not.toMatch(/@zed\b(?![^`]*`)/);
    expect(statement).toContain('Reported by @user1: the groupby sum');
    expect(statement).toContain('Reported by @user1 (<email>): `df.groupby("k").sum()` takes 12 s.');
    expect(statement).toContain('Confirmed, @user1.');
    expect(statement).toContain('```python\n# from @zed\ndf.groupby("k").sum()\n```');
  });
});

describe('--llm none heuristic', () => {
  const config = filterConfig.parse({});
  const vocabulary = patchVocabulary(pr.diff, ['fastlib/core.py'], null);
  it("YES when the title or body has a performance cue: the statement leaves the pull request's text out and keeps a slot for the measured workloads", () => {
    const filter = decideFilter(pr, 'hash', config).output;
    const outcome = classifyHeuristically(
      { pr, filter, repositoryDescription: '`acme/fastlib`' },
      { statementTemplate: template, vocabulary },
    );
    expect(outcome.status).toBe('done');
    if (outcome.status !== 'done') return;
    expect(outcome.output).toMatchObject({
      classifier: 'heuristic',
      problemSource: 'measured',
      problem: null,
      contentHash: 'hash',
      categoryModel: 'heuristic',
      leakCheck: vocabulary,
    });
    expect(outcome.output.reasoning).toContain('speed');
    const statement = outcome.output.problemStatement;
    expect(statement).toContain(MEASURED_WORKLOADS_SLOT);
    expect(statement).not.toContain('PERF: speed up groupby sum');
    expect(statement).not.toContain('SOLUTION TEXT');
    expect(statement).not.toContain('The groupby sum loops in Python over every group.');
    // the linked issue written before the pull request is kept, with its earlier comment
    expect(statement).toContain('## Issue #77: groupby().sum() is 30x slower than in 1.5');
    expect(statement).toContain('The loop in _aggregate is the culprit.');
    expect(statement).not.toContain('LATE COMMENT');
  });

  it('NO when the only cue is a label, or there is none', () => {
    const plain = makePullRequest({ title: 'Rework the block manager', body: 'Internal cleanup.', labels: ['Performance'] });
    const filter = decideFilter(plain, 'hash', config).output;
    expect(filter.positiveCues.map((c) => c.where)).toEqual(['label']);
    expect(
      classifyHeuristically({ pr: plain, filter, repositoryDescription: '' }, { statementTemplate: template, vocabulary }),
    ).toMatchObject({ status: 'dropped', reason: 'no-perf-cue' });
  });
});
