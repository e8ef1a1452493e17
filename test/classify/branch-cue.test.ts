import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadPullRequest } from '../../cache/pull-requests.js';
import { openStore } from '../../cache/store.js';
import { runStage } from '../../pipeline/runner.js';
import { classifyStage } from '../../stages/classify/index.js';
import { classifyOutputSchema } from '../../pipeline/concepts/records/classify-output.js';
import { collectStage } from '../../stages/collect/index.js';
import { filterStage } from '../../stages/filter/index.js';
import { filterOutputSchema } from '../../pipeline/concepts/records/filter-output.js';
import { GitHistoryBuilder, type GitHistory } from '../fixtures/git-history.js';
import { monthScope, testConfig, testContext } from '../helpers/context.js';

/**
 * rich #3546 under `--llm none`: "Merge pull request #3546 from Textualize/faster-cell-len",
 * titled "use sets", with no body. The only performance cue is in the branch's name, which the
 * git source now keeps (`headRef`) and the message rules read as words.
 */
let repo: GitHistory;

const CELLS_BEFORE = 'def cell_len(text):\n    return sum(char_width(c) for c in text)\n';
const CELLS_AFTER =
  '_SINGLE = frozenset(range(32, 127))\n\ndef cell_len(text):\n    if all(ord(c) in _SINGLE for c in text):\n        return len(text)\n    return sum(char_width(c) for c in text)\n';

beforeAll(async () => {
  const h = new GitHistoryBuilder({ defaultBranch: 'master' });
  h.commit({
    message: 'Initial import',
    files: {
      'asv.conf.json': '{"version": 1, "project": "rich", "benchmark_dir": "benchmarks"}\n',
      'rich/__init__.py': '',
      'rich/cells.py': CELLS_BEFORE,
      'rich/text.py': 'class Text:\n    pass\n',
      'benchmarks/bench_cells.py': 'def time_cell_len():\n    pass\n',
    },
    date: '2024-10-01T00:00:00Z',
  });
  h.merge({
    number: 3546,
    from: 'Textualize/faster-cell-len',
    title: 'use sets',
    commits: [{ message: 'use sets', files: { 'rich/cells.py': CELLS_AFTER }, date: '2024-10-29T10:00:00Z' }],
    date: '2024-11-01T12:00:00Z',
  });
  h.merge({
    number: 3547,
    from: 'Textualize/text-api',
    title: 'use sets',
    commits: [{ message: 'use sets', files: { 'rich/text.py': 'class Text:\n    __slots__ = ()\n' }, date: '2024-11-02T10:00:00Z' }],
    date: '2024-11-03T12:00:00Z',
  });
  h.merge({
    number: 3548,
    from: 'Textualize/revert-3546-faster-cell-len',
    title: 'Revert "use sets"',
    commits: [{ message: 'Revert', files: { 'rich/cells.py': CELLS_BEFORE }, date: '2024-11-04T10:00:00Z' }],
    date: '2024-11-05T12:00:00Z',
  });
  repo = await h.write();
});

afterAll(async () => {
  await repo.cleanup();
});

describe('--llm none: the cue in the branch name (git source)', () => {
  it('keeps rich #3546 (cue only in its branch), drops the same title from another branch and the revert', async () => {
    const db = openStore(':memory:');
    const ctx = testContext(db, { config: testConfig({ llm: { mode: 'none' } }) });
    const scope = monthScope('2024-11', { repos: ['Textualize/rich'], source: { kind: 'git', path: repo.path } });
    expect(await runStage(ctx, collectStage, scope)).toMatchObject({ done: 3, failed: {} });

    const pr = loadPullRequest(db, 'Textualize/rich', 3546)!;
    expect(pr).toMatchObject({ title: 'use sets', body: '', headRef: 'faster-cell-len' });
    expect(pr.missing).not.toContain('headRef');
    expect(loadPullRequest(db, 'Textualize/rich', 3548)!.headRef).toBe('revert-3546-faster-cell-len');

    expect(await runStage(ctx, filterStage, scope)).toMatchObject({ done: 2, dropped: { 'negative-message': 1 } });
    const filtered = filterOutputSchema.parse(ctx.ledger.get('filter', 'Textualize/rich#3546')!.output);
    expect(filtered).toMatchObject({ messageVerdict: 'positive', positiveCues: [{ cue: 'faster', where: 'branch', text: 'faster' }] });
    expect(ctx.ledger.get('filter', 'Textualize/rich#3548')).toMatchObject({ status: 'dropped', reason: 'negative-message' });

    expect(await runStage(ctx, classifyStage, scope)).toMatchObject({ done: 1, dropped: { 'no-perf-cue': 1 } });
    const classified = classifyOutputSchema.parse(ctx.ledger.get('classify', 'Textualize/rich#3546')!.output);
    expect(classified.classifier).toBe('heuristic');
    expect(classified.reasoning).toContain('faster ("faster" in the branch)');
    // The branch name is a cue, never part of the statement.
    expect(classified.problemStatement).not.toMatch(/cell.len|use sets/i);
    expect(ctx.ledger.get('classify', 'Textualize/rich#3547')).toMatchObject({ status: 'dropped', reason: 'no-perf-cue' });
  });
});
