import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadPullRequest } from '../../cache/pull-requests.js';
import { openStore } from '../../cache/store.js';
import { runStage } from '../../pipeline/runner.js';
import { classifyStage } from '../../stages/classify/index.js';
import { classifyOutputSchema } from '../../pipeline/concepts/records/classify-output.js';
import { collectStage } from '../../stages/collect/index.js';
import { filterStage } from '../../stages/filter/index.js';
import { filterOutputSchema } from '../../pipeline/concepts/records/filter-output.js';
import { bodyFromMessage } from '../../stages/collect/git-pulls.js';
import { problemSources, withFacts } from '../../stages/classify/sources.js';
import { GitHistoryBuilder, type GitHistory } from '../fixtures/git-history.js';
import { monthScope, testConfig, testContext } from '../helpers/context.js';

/**
 * A repository that squash-merges (as networkx does) and sometimes merges, with asv benchmarks
 * under `bench/suite` (asv.conf.json in `bench/`, benchmark_dir `suite`):
 *   #20 squash: a title without a cue, GitHub's list of commits as body ("* perf: short-circuit ...")
 *   #21 squash: a refactor whose body has no cue but a co-author trailer
 *   #22 merge: the description under the title says the change is faster
 *   #23 squash: no cue in any text, a benchmark changed beside the core file
 *   #24 squash: a deprecation that updates the benchmark using the old name (negative title)
 *   #25 squash: a benchmark alone (no core file)
 *   #26 merge: title only
 */
let repo: GitHistory;
const R = 'acme/graphs';

beforeAll(async () => {
  const h = new GitHistoryBuilder({ defaultBranch: 'main' });
  h.commit({
    message: 'Initial import',
    files: {
      'bench/asv.conf.json': '{"version": 1, "project": "graphs", "benchmark_dir": "suite"}\n',
      'bench/suite/__init__.py': '',
      'bench/suite/bench_paths.py': 'def time_paths():\n    pass\n',
      'graphs/__init__.py': '',
      'graphs/paths.py': 'def reachable(g, a, b):\n    return b in closure(g, a)\n',
      'graphs/cycles.py': 'def find_cycle(g):\n    return None\n',
      'graphs/old.py': 'def old_api():\n    return 1\n',
    },
    date: '2025-03-01T00:00:00Z',
  });
  h.squash({
    number: 20,
    title: 'enh: return early from reachable',
    body:
      '* perf: short-circuit reachable when both ends are equal\n\n* add a test\n\n---------\n\n' +
      'Co-authored-by: Someone Else <someone@example.org>',
    files: { 'graphs/paths.py': 'def reachable(g, a, b):\n    if a == b:\n        return True\n    return b in closure(g, a)\n' },
    date: '2025-04-02T00:00:00Z',
  });
  h.squash({
    number: 21,
    title: 'Refactor cycle search',
    body: '* move helpers\n\nSigned-off-by: Someone Else <someone@example.org>',
    files: { 'graphs/cycles.py': 'def find_cycle(g):\n    return _search(g)\n\ndef _search(g):\n    return None\n' },
    date: '2025-04-03T00:00:00Z',
  });
  h.merge({
    number: 22,
    from: 'bob/paths-closure',
    title: 'Rework closure of paths',
    body: 'The closure was computed again for every query; this makes reachable much faster.',
    commits: [
      {
        message: 'rework',
        files: { 'graphs/paths.py': 'def reachable(g, a, b):\n    return b in g.closure(a)\n' },
        date: '2025-04-04T00:00:00Z',
      },
    ],
    date: '2025-04-05T00:00:00Z',
  });
  h.squash({
    number: 23,
    title: 'Rework cycle detection',
    files: {
      'graphs/cycles.py': 'def find_cycle(g):\n    seen = set()\n    return None\n',
      'bench/suite/bench_cycles.py': 'from graphs.cycles import find_cycle\n\ndef time_find_cycle():\n    find_cycle({})\n',
    },
    date: '2025-04-06T00:00:00Z',
  });
  h.squash({
    number: 24,
    title: 'Deprecate old_api',
    files: {
      'graphs/old.py': 'import warnings\n\ndef old_api():\n    warnings.warn("old", DeprecationWarning)\n    return 1\n',
      'bench/suite/bench_paths.py': 'def time_paths():\n    return None\n',
    },
    date: '2025-04-07T00:00:00Z',
  });
  h.squash({
    number: 25,
    title: 'Add a benchmark of paths',
    files: { 'bench/suite/bench_more.py': 'def time_more():\n    pass\n' },
    date: '2025-04-08T00:00:00Z',
  });
  h.merge({
    number: 26,
    from: 'carol/names',
    title: 'Rename a variable',
    commits: [
      { message: 'rename', files: { 'graphs/cycles.py': 'def find_cycle(graph):\n    return None\n' }, date: '2025-04-09T00:00:00Z' },
    ],
    date: '2025-04-10T00:00:00Z',
  });
  repo = await h.write();
});

afterAll(async () => {
  await repo.cleanup();
});

describe('commit bodies (pure)', () => {
  it("reads a squash commit's body without trailers and GitHub's separator, a merge commit's under its title", () => {
    expect(bodyFromMessage('Fix x (#3)\n\n* perf: skip the copy\n\n* tests\n\n---------\n\nCo-authored-by: A <a@b.c>\n')).toEqual({
      body: '* perf: skip the copy\n\n* tests',
      source: 'squash-commit',
    });
    expect(bodyFromMessage('Merge pull request #4 from u/b\n\nMake it fast\n\nIt was slow.\nNow it is not.\n')).toEqual({
      body: 'It was slow.\nNow it is not.',
      source: 'merge-commit',
    });
    expect(bodyFromMessage('Merge pull request #4 from u/b\n\nMake it fast\n')).toBeNull();
    expect(bodyFromMessage('Merge pull request #4 from u/b')).toBeNull();
    expect(bodyFromMessage('Fix x (#3)\n\nCo-authored-by: A <a@b.c>\nSigned-off-by: A <a@b.c>\n')).toBeNull();
    expect(bodyFromMessage('Fix x (#3)')).toBeNull();
    expect(bodyFromMessage('A direct commit\n\nwith a body')).toBeNull();
  });
});

describe('--llm none on a squash-merging repository: commit bodies and changed benchmarks (git source)', () => {
  it('keeps the body and where it came from, and reads both cues; negative titles and benchmark-only changes stay dropped', async () => {
    const db = openStore(':memory:');
    const ctx = testContext(db, { config: testConfig({ llm: { mode: 'none' } }) });
    const scope = monthScope('2025-04', { repos: [R], source: { kind: 'git', path: repo.path } });
    expect(await runStage(ctx, collectStage, scope)).toMatchObject({ done: 7, failed: {} });

    const squash = loadPullRequest(db, R, 20)!;
    expect(squash).toMatchObject({
      title: 'enh: return early from reachable',
      body: '* perf: short-circuit reachable when both ends are equal\n\n* add a test',
      bodySource: 'squash-commit',
    });
    expect(squash.missing).not.toContain('body');
    expect(loadPullRequest(db, R, 21)).toMatchObject({ body: '* move helpers', bodySource: 'squash-commit' });
    const merge = loadPullRequest(db, R, 22)!;
    expect(merge).toMatchObject({
      title: 'Rework closure of paths',
      body: 'The closure was computed again for every query; this makes reachable much faster.',
      bodySource: 'merge-commit',
    });
    const bare = loadPullRequest(db, R, 26)!;
    expect(bare.body).toBe('');
    expect(bare.bodySource).toBeUndefined();
    expect(bare.missing).toContain('body');
    // The LLM is told what the body is.
    expect(problemSources(squash, 10_000).problemText).toContain('Body of the squash commit');
    expect(problemSources(merge, 10_000).problemText).toContain('Body of the merge commit');
    expect(problemSources(bare, 10_000).problemText).toContain('Pull request description:\n(empty)');

    expect(await runStage(ctx, filterStage, scope)).toMatchObject({
      done: 5,
      dropped: { 'negative-message': 1, 'no-core-files': 1 },
    });
    const filtered = (n: number) => filterOutputSchema.parse(ctx.ledger.get('filter', `${R}#${n}`)!.output);
    expect(filtered(20).positiveCues).toContainEqual({ cue: 'performance', where: 'body', text: 'perf' });
    expect(filtered(22).positiveCues).toContainEqual({ cue: 'faster', where: 'body', text: 'faster' });
    expect(filtered(23)).toMatchObject({
      messageVerdict: 'positive',
      benchmarkDir: 'bench/suite',
      positiveCues: [{ cue: 'benchmarks', where: 'files', text: 'benchmarks changed: bench_cycles.py' }],
    });
    expect(ctx.ledger.get('filter', `${R}#24`)).toMatchObject({ status: 'dropped', reason: 'negative-message' });
    expect(ctx.ledger.get('filter', `${R}#24`)!.detail).toContain('benchmarks changed: bench_paths.py');
    expect(ctx.ledger.get('filter', `${R}#25`)).toMatchObject({ status: 'dropped', reason: 'no-core-files' });
    expect(filtered(26)).toMatchObject({ messageVerdict: 'ambiguous', positiveCues: [] });

    expect(await runStage(ctx, classifyStage, scope)).toMatchObject({ done: 3, dropped: { 'no-perf-cue': 2 } });
    for (const n of [20, 22, 23]) expect(ctx.ledger.get('classify', `${R}#${n}`)!.status).toBe('done');
    for (const n of [21, 26]) expect(ctx.ledger.get('classify', `${R}#${n}`)).toMatchObject({ status: 'dropped', reason: 'no-perf-cue' });
    const bench = classifyOutputSchema.parse(ctx.ledger.get('classify', `${R}#23`)!.output);
    expect(bench.reasoning).toContain('benchmarks ("benchmarks changed: bench_cycles.py" in the files)');
    // Neither the commit body nor the benchmark's name goes into a rules-only statement.
    const statement = classifyOutputSchema.parse(ctx.ledger.get('classify', `${R}#20`)!.output).problemStatement;
    expect(statement).not.toMatch(/short-circuit|both ends/);
    expect(bench.problemStatement).not.toMatch(/bench_cycles|time_find_cycle/);

    // The LLM judge is given the changed benchmarks as a fact beside the file table.
    expect(withFacts('| file |', filtered(23))).toBe(
      '| file |\n\nFact: this pull request changes asv benchmarks (under bench/suite/) together with library code; benchmarks changed: bench_cycles.py.',
    );
    expect(withFacts('| file |', filtered(22))).toBe('| file |');
  });
});
