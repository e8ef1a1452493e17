import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../cache/store.js';
import { runStage } from '../../pipeline/runner.js';
import { classifyStage } from '../../stages/classify/index.js';
import { collectStage } from '../../stages/collect/index.js';
import { filterStage } from '../../stages/filter/index.js';
import { GitHistoryBuilder, type GitHistory } from '../fixtures/git-history.js';
import { monthScope, testConfig, testContext } from '../helpers/context.js';

/**
 * The bar of issue 31 under `--llm none`, on a generated repository whose squash commits have the
 * shapes of networkx's April 2025 (titles and commit lists paraphrased; the real month labelled by
 * hand in the session's notes): the three performance pull requests are kept, and the four clear
 * non-performance ones whose squash bodies carry words that look like cues (a docstring's
 * "runtime complexity", an "energy" optimization, a test made "more performant", a new option) are
 * dropped, now that the squash bodies are read.
 */
let repo: GitHistory;
const R = 'acme/graphs';
const PERF = [7810, 7946, 7971];
const NOT_PERF = [7774, 7889, 7902, 7945];

beforeAll(async () => {
  const h = new GitHistoryBuilder({ defaultBranch: 'main' });
  h.commit({
    message: 'Initial import',
    files: {
      'benchmarks/asv.conf.json': '{"version": 1, "project": "graphs", "benchmark_dir": "benchmarks"}\n',
      'benchmarks/benchmarks/bench_cc.py': 'def time_cc():\n    pass\n',
      'graphs/__init__.py': '',
      'graphs/a.py': 'A = 0\n',
    },
    date: '2025-03-01T00:00:00Z',
  });
  const squash = (number: number, day: number, title: string, body: string) =>
    h.squash({
      number,
      title,
      body,
      files: { 'graphs/a.py': `A = ${number}\n` },
      date: `2025-04-${String(day).padStart(2, '0')}T00:00:00Z`,
    });
  squash(
    7774,
    2,
    'Add functions for finding connected dominating sets',
    '* add the functions\n\n* Add a detailed algorithm description and fix runtime complexity in the docstring\n\n* Use itertools.count to avoid comparisons between nodes',
  );
  squash(
    7810,
    3,
    'Faster `square_clustering`',
    '* Faster `square_clustering`\n\n* Separate iterations for neighbors and neighbors-of-neighbors',
  );
  squash(
    7889,
    4,
    'Add energy-based method to spring_layout',
    'Adds a layout method based on "energy" optimization, extending the force approach.\n\nCo-authored-by: A <a@example.org>',
  );
  squash(7902, 5, 'Add feature to make storing node contraction data optional', '* ENH: add the attribute\n\n* TST: parametrize the tests');
  squash(
    7945,
    6,
    'Improving rooted_tree_isomorphism for deep trees',
    '* Improving rooted_tree_isomorphism for deep trees\n\n* Update the test\n\nMaking test_long_paths_graphs more performant',
  );
  squash(
    7946,
    7,
    'Improve performance of tree isomorphism and center calculation',
    'Adds a private center implementation that computes the center of trees more efficiently.',
  );
  squash(7971, 8, 'Speed up `connected_components` for dense graphs', 'Optimizing the connected components algorithm for dense graphs');
  repo = await h.write();
});

afterAll(async () => {
  await repo.cleanup();
});

describe('the networkx April 2025 bar (--llm none, squash bodies read)', () => {
  it('keeps the 3 performance pull requests and drops the 4 clear non-performance ones', async () => {
    const db = openStore(':memory:');
    const ctx = testContext(db, { config: testConfig({ llm: { mode: 'none' } }) });
    const scope = monthScope('2025-04', { repos: [R], source: { kind: 'git', path: repo.path } });
    await runStage(ctx, collectStage, scope);
    await runStage(ctx, filterStage, scope);
    await runStage(ctx, classifyStage, scope);
    const status = (n: number) => ctx.ledger.get('classify', `${R}#${n}`)?.status;
    expect(PERF.map(status)).toEqual(['done', 'done', 'done']);
    expect(NOT_PERF.map(status)).toEqual(['dropped', 'dropped', 'dropped', 'dropped']);
  });
});
