import { describe, expect, it } from 'vitest';
import { stripHtmlComments } from '../../pipeline/concepts/html-comments.js';
import { textCues } from '../../pipeline/concepts/records/filter-output.js';
import { branchText, judgeMessage, ownTitleText, type MessageVerdict } from '../../stages/filter/message.js';

const none = { body: '', labels: [] as string[] };

describe('message rules on real-world-shaped titles', () => {
  const cases: { title: string; body?: string; labels?: string[]; verdict: MessageVerdict; positive?: string[]; negative?: string[] }[] = [
    { title: 'PERF: speed up DataFrame.groupby().sum() for many groups', verdict: 'positive', positive: ['performance', 'speed'] },
    { title: 'PERF: avoid copy in Series.astype when dtype matches', verdict: 'positive', positive: ['performance', 'avoid-copy'] },
    { title: 'ENH: vectorize distance computation', verdict: 'positive', positive: ['vectorize'] },
    { title: 'BUG: fix slow reindexing with MultiIndex', verdict: 'positive', positive: ['slow'] },
    { title: 'MAINT: cache compiled regex in tokenizer', verdict: 'positive', positive: ['cache'] },
    { title: 'Reduce memory usage of read_csv', verdict: 'positive', positive: ['memory'] },
    { title: 'Make interpolate O(n) instead of quadratic', verdict: 'positive', positive: ['complexity'] },
    { title: 'Release the GIL in the inner loop', verdict: 'positive', positive: ['gil'] },
    { title: 'DOC: fix typo in docstring of groupby', verdict: 'negative', negative: ['typo', 'docs'] },
    { title: 'DOC: document the performance of rolling windows', verdict: 'mixed', positive: ['performance'], negative: ['docs'] },
    { title: 'Revert "PERF: faster groupby"', body: 'This reverts commit 1234567abc.', verdict: 'negative', negative: ['revert'] },
    {
      title: 'Revert "PERF: faster groupby"',
      body: 'It caused a 2x slowdown in read_csv.',
      verdict: 'mixed',
      positive: ['slow'],
      negative: ['revert'],
    },
    { title: 'MAINT: bump numpy minimum to 1.24', verdict: 'negative', negative: ['version-bump'] },
    { title: 'build(deps): bump actions/checkout from 3 to 4', verdict: 'negative', negative: ['version-bump'] },
    { title: 'REL: prepare 2.2.1', verdict: 'negative', negative: ['release'] },
    { title: 'CI: pin pytest on the windows job', verdict: 'negative', negative: ['ci'] },
    { title: 'STY: apply black formatting', verdict: 'negative', negative: ['formatting'] },
    { title: 'Fix flake8 lint warnings', verdict: 'negative', negative: ['lint'] },
    { title: 'TST: add tests for empty frames', verdict: 'negative', negative: ['tests-only'] },
    { title: 'Backport PR #5123 on branch 2.2.x (PERF: faster merge)', verdict: 'negative', negative: ['backport'] },
    { title: 'ENH: add `axis` keyword to nanmedian', verdict: 'ambiguous' },
    { title: 'Refactor the block manager internals', verdict: 'ambiguous' },
    { title: 'Refactor the block manager internals', labels: ['Performance'], verdict: 'positive', positive: ['label'] },
    {
      title: 'Use np.searchsorted in lookup',
      body: '```\n%timeit lookup(x)\n1.2 s ± 3 ms per loop\n```',
      verdict: 'positive',
      positive: ['timing'],
    },
  ];

  it.each(cases)('$title → $verdict', ({ title, body, labels, verdict, positive, negative }) => {
    const decision = judgeMessage({ title, body: body ?? '', labels: labels ?? [] });
    expect(decision.verdict).toBe(verdict);
    if (positive) expect(decision.positive.map((c) => c.cue)).toEqual(expect.arrayContaining(positive));
    else expect(decision.positive).toEqual([]);
    if (negative) expect(decision.negative.map((c) => c.cue)).toEqual(expect.arrayContaining(negative));
    else expect(decision.negative).toEqual([]);
  });

  it('ignores negative words of PR-template boilerplate in the body', () => {
    const body =
      '- [x] closes #123\n- [x] Tests added and passed\n- [x] All code checks passed (linting)\n\nThe groupby path is slow for wide frames.';
    const d = judgeMessage({ title: 'Rework groupby inner loop', body, labels: [] });
    expect(d.verdict).toBe('positive');
    expect(d.negative).toEqual([]);
  });

  it('does not take cues from HTML comments of a PR template', () => {
    const body = '<!-- Please describe any performance impact of your change -->\nAdds a keyword.';
    expect(judgeMessage({ title: 'ENH: add keyword', body, labels: [] }).verdict).toBe('ambiguous');
    expect(stripHtmlComments('a <!-- b --> c <!-- unclosed')).toBe('a   c  ');
  });

  it('does not read a branch named "...-runtime" as a speed cue (rich #3763, a dependency removed)', () => {
    expect(judgeMessage({ title: 'Remove typing-extensions', ...none, headRef: 'remove-typing-extensions-runtime' }).positive).toEqual([]);
  });

  it('reads the branch name as words split on -, _ and / (rich #3546: "use sets" from faster-cell-len)', () => {
    const d = judgeMessage({ title: 'use sets', body: '', labels: [], headRef: 'faster-cell-len' });
    expect(d.verdict).toBe('positive');
    expect(d.positive).toEqual([{ cue: 'faster', where: 'branch', text: 'faster' }]);
    expect(textCues(d)).toEqual(d.positive);
    expect(branchText('speed_up_parser', 'x')).toBe('speed up parser');
    expect(branchText('perf/groupby-sum', 'x')).toBe('perf groupby sum');
    expect(
      judgeMessage({ title: 'Refactor', body: '', labels: [], headRef: 'speed_up_parser' }).positive.map((c) => [c.cue, c.where]),
    ).toEqual([['speed', 'branch']]);
    expect(
      judgeMessage({ title: 'Refactor', body: '', labels: [], headRef: 'alice/perf/groupby' }).positive.map((c) => [c.cue, c.where]),
    ).toEqual([['performance', 'branch']]);
    // Without the split, `_` is a word character: the cue would not be seen.
    expect(/\bspeed\b/.test('speed_up_parser')).toBe(false);
    // No branch, or one without a cue: as before.
    expect(judgeMessage({ title: 'use sets', body: '', labels: [] }).verdict).toBe('ambiguous');
    expect(judgeMessage({ title: 'use sets', body: '', labels: [], headRef: null }).verdict).toBe('ambiguous');
    expect(judgeMessage({ title: 'use sets', body: '', labels: [], headRef: 'fix-docs-build' }).verdict).toBe('ambiguous');
    // A branch cue with a negative title is mixed: it goes on, as a title cue would.
    expect(judgeMessage({ title: 'Fix typo', body: '', labels: [], headRef: 'faster-render' }).verdict).toBe('mixed');
  });

  it('does not read the branch of a revert or a backport, named after the original pull request', () => {
    expect(judgeMessage({ title: 'Revert "use sets"', body: '', labels: [], headRef: 'revert-3546-faster-cell-len' })).toMatchObject({
      verdict: 'negative',
      positive: [],
    });
    expect(judgeMessage({ title: 'Undo the set change', body: '', labels: [], headRef: 'revert-3546-faster-cell-len' })).toMatchObject({
      verdict: 'ambiguous',
      positive: [],
    });
    expect(
      judgeMessage({
        title: 'Backport PR #5123 on branch 2.2.x',
        body: '',
        labels: [],
        headRef: 'auto-backport-of-pr-5123-on-2.2.x-faster-merge',
      }).positive,
    ).toEqual([]);
    expect(judgeMessage({ title: 'Revert "use sets"', body: '', labels: [], headRef: 'my-faster-branch' }).positive).toEqual([]);
    expect(branchText('backport-5123-faster-merge', 'x')).toBe('');
  });

  it('does not count the quoted title of a revert or a backport as a cue', () => {
    expect(ownTitleText('Revert "PERF: faster groupby"')).not.toMatch(/faster/);
    expect(ownTitleText('PERF: faster groupby')).toBe('PERF: faster groupby');
  });

  it('textCues keeps title and body cues, not labels (what --llm none relies on)', () => {
    const d = judgeMessage({ title: 'Rework internals', body: 'Makes it faster.', labels: ['performance'] });
    expect(d.positive.map((c) => c.where).sort()).toEqual(['body', 'label']);
    expect(textCues(d).map((c) => c.cue)).toEqual(['faster']);
    expect(textCues(judgeMessage({ title: 'Rework', ...none, labels: ['Performance'] }))).toEqual([]);
  });
});

describe('the vocabulary of real performance pull requests (issue 31 review)', () => {
  const kept: [string, string][] = [
    ['enh: short-circuit in `is_regular` for directed graphs', 'short-circuit'],
    ['Kruskal MST early break for efficiency', 'early-exit'],
    ['Actually make the fast code path return early for Aligner.align', 'early-exit'],
    ['Precompute the offsets once per call', 'precompute'],
    ["Avoid re-exploring nodes in Kosaraju's SCC algorithm", 'avoid-recompute'],
    ['Avoid repeated cache conversion failures for backends', 'avoid-recompute'],
    ['Avoid redundant metadata reads in `ZarrArrayWrapper`', 'avoid-recompute'],
    ['Avoid recasting a CFTimeIndex', 'avoid-recompute'],
    ['Avoid building the flow dict in maximum_flow_value', 'avoid-recompute'],
    ['Avoid constructing intermediate paths in bidirectional_dijkstra.', 'avoid-recompute'],
    ['MAINT: cache compiled regex in tokenizer', 'cache'],
    ['Compute `is_strongly_connected` lazily', 'lazily'],
    ['Avoid O(E) lookup in nx.display', 'complexity'],
    ['Fix SCC to have O(|E|+|V|) time complexity instead of O(|V|^3)', 'complexity'],
    ['Improve runtime of number_of_nonisomorphic_trees()', 'runtime'],
    ['feat: speedup import time using sys.platform', 'runtime'],
  ];
  it.each(kept)('%s → %s', (title, cue) => {
    const d = judgeMessage({ title, ...none });
    expect(d.positive.map((c) => c.cue)).toContain(cue);
  });

  // What the review left out, measured on the titles of the five repositories' histories: "skip"
  // and "reuse" are about tests and code reuse far more often than speed, "lazy" about a feature.
  const notCues = [
    'Skip tests if scipy not available',
    'Refactor tree_isomorphism to improve code reuse and readability',
    'DOC: clarify lazy exception behavior in topological_sort generator',
    'Avoid relying on pandas in isnull',
    'Remove `typing-extensions` as a runtime dependency',
    'Raise a clearer runtime error for bad input',
    'Upstream CI: limit runtime',
    // a cache cleared or invalidated fixes stale results (rich #2943, networkx #8806)
    'Clear hashed cache when clearing meta.',
    'Clear the dispatch cache in `remove_{node,edge}_attributes`',
    'Invalidate the cache after relabeling',
    'clean cached hash',
    // avoiding a construct is not avoiding work
    'Avoid building docs on forks',
  ];
  it.each(notCues)('%s → no cue', (title) => {
    expect(judgeMessage({ title, ...none }).positive).toEqual([]);
  });
});

describe('a body read from a commit message', () => {
  const squash = (body: string) => judgeMessage({ title: 'Add a thing', body, labels: [], bodySource: 'squash-commit' });
  it('counts performance said outright and named techniques', () => {
    expect(squash('* perf: short-circuit when both graphs are empty\n\n* tests').positive.map((c) => c.cue)).toEqual([
      'performance',
      'short-circuit',
    ]);
    expect(squash('Optimizing nothing\n\nThis makes it 3x faster').positive.map((c) => c.cue)).toEqual(['faster']);
  });
  it('does not count the words a list of commits uses for everything else (real false positives)', () => {
    // a docstring fix, an energy minimisation, a test made quicker, a review note
    for (const body of [
      '* Add detailed algorithm description and fix runtime complexity in connected_dominating_set',
      'Adds a new method to spring_layout based on "energy" optimization',
      '* Update tests\n\nMaking test_long_paths_graphs more performant',
      '* clear the cache of the fixture\n\n* memory of the old API',
      '* implement suggestion to use precomputed values',
    ]) {
      expect(squash(body).positive, body).toEqual([]);
      // the same text as a pull request's own description keeps its cues
      expect(judgeMessage({ title: 'Add a thing', body, labels: [] }).positive.length, body).toBeGreaterThan(0);
    }
  });
  it("does not read a reverted intermediate commit as the pull request's revert", () => {
    const body = '* Add the argument\n\n* Revert "Add the argument"\n\nThis reverts commit 0123456789abcdef.\n\n* Add it again';
    expect(squash(body)).toMatchObject({ verdict: 'ambiguous', negative: [] });
    expect(judgeMessage({ title: 'Add a thing', body, labels: [] }).negative.map((c) => c.cue)).toEqual(['revert']);
  });
});
