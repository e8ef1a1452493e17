import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type Db } from '../../cache/store.js';
import { runStage } from '../../pipeline/runner.js';
import { identifiersAtBase } from '../../stages/classify/base-tree.js';
import { classifyStage } from '../../stages/classify/index.js';
import { addedIdentifierCandidates } from '../../pipeline/concepts/leak-check.js';
import { classifyOutputSchema } from '../../pipeline/concepts/records/classify-output.js';
import type { LinkedIssue, PullRequest } from '../../pipeline/concepts/records/pull-request.js';
import { filterStage } from '../../stages/filter/index.js';
import { monthScope, testConfig, testContext } from '../helpers/context.js';
import { storeCollected } from '../helpers/pull-request.js';
import type { GitRepo } from '../helpers/git.js';
import { makeCase, type SolutionCase } from './solution-prs.js';

/**
 * The leak check's base-tree basis, on a real repository: a helper defined at the base in another
 * module and first called by the patch is not new (the diff alone cannot tell), a name the patch
 * brings is. The classify stage uses the tree when the source is the clone (`--source git:PATH`).
 */
const CASE: SolutionCase = {
  name: 'helper',
  title: 'PERF: faster table widths',
  body: 'Use the precomputed table.',
  branch: 'ann/table',
  base: {
    'textlib/helpers.py': 'def fast_width_table(limit):\n    return [1] * limit\n',
    'textlib/widths.py': 'def width(ch):\n    return 1 if ord(ch) < 127 else 2\n',
  },
  patch: {
    'textlib/widths.py':
      'from textlib.helpers import fast_width_table\n\n_WIDTH_LOOKUP = fast_width_table(127)\n\n\ndef width(ch):\n    return 1 if ord(ch) < 127 else 2\n',
  },
  improved: [],
  solutionWords: [],
  category: null,
};

const issue: LinkedIssue = {
  repo: 'acme/textlib',
  number: 2,
  title: 'width() is slow',
  body: 'width() takes 2 µs per character.\n\nWe already have `fast_width_table` in helpers; is it used here?\n\nA module-level `_WIDTH_LOOKUP` would help.',
  state: 'closed',
  author: 'zed',
  createdAt: '2025-03-01T00:00:00Z',
  labels: [],
  comments: [],
  via: 'closing-keyword',
};

let repo: GitRepo;
let pr: PullRequest;
let db: Db;

beforeAll(() => {
  const made = makeCase(CASE, { linkedIssues: [issue] });
  repo = made.repo;
  pr = made.pr;
  db = openStore(':memory:');
});
afterAll(() => {
  repo.remove();
  db.close();
});

describe('identifiers at the base commit, from the clone', () => {
  it('finds the candidates the base tree holds as whole words, and says when the commit is missing', async () => {
    const ctx = testContext(db);
    const candidates = addedIdentifierCandidates(pr.diff, ['textlib/widths.py']);
    expect(candidates).toEqual(['_WIDTH_LOOKUP', 'fast_width_table', 'helpers']);
    // `fast_width_table` is in a file, `helpers` is a module (a path)
    expect(await identifiersAtBase(ctx.services.git, repo.dir, pr.baseSha, candidates)).toEqual(new Set(['fast_width_table', 'helpers']));
    expect(await identifiersAtBase(ctx.services.git, repo.dir, pr.baseSha, ['fast_width'])).toEqual(new Set());
    expect(await identifiersAtBase(ctx.services.git, repo.dir, '0'.repeat(40), candidates)).toBeNull();
  });
});

describe('the classify stage with and without the clone', () => {
  it('judges from the base tree with --source git:PATH, from the diff otherwise, and keeps or leaves out the issue text accordingly', async () => {
    storeCollected(db, pr);
    const ctx = testContext(db, { config: testConfig({ llm: { mode: 'none' } }) });
    await runStage(ctx, filterStage, monthScope());

    const clone = monthScope('2025-04', { source: { kind: 'git', path: repo.dir }, repos: ['acme/textlib'] });
    expect(await runStage(ctx, classifyStage, clone)).toMatchObject({ done: 1 });
    const exact = classifyOutputSchema.parse(ctx.ledger.get('classify', 'acme/textlib#7')!.output);
    expect(exact.leakCheck).toMatchObject({ basis: 'base-tree', identifiers: ['_WIDTH_LOOKUP'] });
    expect(exact.problemStatement).toContain('We already have `fast_width_table` in helpers; is it used here?');
    expect(exact.problemStatement).not.toContain('_WIDTH_LOOKUP');
    expect(exact.leakingIssueParts).toBe(1);

    // the GitHub source has no tree at hand: the helper first called here looks new
    expect(await runStage(ctx, classifyStage, monthScope())).toMatchObject({ ran: 1, done: 1 });
    const fromDiff = classifyOutputSchema.parse(ctx.ledger.get('classify', 'acme/textlib#7')!.output);
    expect(fromDiff.leakCheck).toMatchObject({ basis: 'diff', identifiers: ['_WIDTH_LOOKUP', 'fast_width_table', 'helpers'] });
    expect(fromDiff.problemStatement).not.toContain('fast_width_table');
    expect(fromDiff.problemStatement).toContain('width() takes 2 µs per character.');
    expect(fromDiff.leakingIssueParts).toBe(2);
  });
});
