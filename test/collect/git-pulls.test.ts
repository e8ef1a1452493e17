import { describe, expect, it } from 'vitest';
import type { CommitHeader } from '../../pipeline/services/git-parse.js';
import { monthWindow, type Window } from '../../pipeline/window.js';
import {
  branchStartDates,
  findGitPullRequests,
  mainline,
  parsePrSubject,
  pullRequestsInWindow,
  pullUrl,
  titleFromMessage,
  windowSpan,
} from '../../stages/collect/git-pulls.js';
import { mulberry32 } from '../helpers/prng.js';

function c(sha: string, parents: string[], subject: string, authored: string, committed = authored): CommitHeader {
  return {
    sha,
    parents,
    message: subject,
    authorDate: `${authored}T00:00:00.000Z`,
    committerDate: `${committed}T00:00:00.000Z`,
    authorName: '',
    authorEmail: '',
  };
}

describe('pull requests in a git history (pure)', () => {
  it('reads merge and squash subjects', () => {
    expect(parsePrSubject('Merge pull request #42 from alice/fast-path')).toEqual({ kind: 'merge', number: 42, from: 'alice/fast-path' });
    expect(parsePrSubject('PERF: faster groupby (#61234)\n\nbody')).toEqual({
      kind: 'squash',
      number: 61234,
      title: 'PERF: faster groupby',
    });
    expect(parsePrSubject('Revert "PERF: faster groupby (#61234)"')).toBeNull();
    // no pull request is #0
    expect(parsePrSubject('Merge pull request #0 from alice/x')).toBeNull();
    expect(parsePrSubject('Fix (#0)')).toBeNull();
    expect(parsePrSubject('Revert "X (#1)" (#2)')).toEqual({ kind: 'squash', number: 2, title: 'Revert "X (#1)"' });
    expect(parsePrSubject('Merge branch main into dev')).toBeNull();
    expect(titleFromMessage('Merge pull request #4 from u/b\n\nMake it fast\n')).toBe('Make it fast');
    expect(titleFromMessage('Merge pull request #4 from u/branch-name')).toBe('branch-name');
    expect(pullUrl('https://github.com/o/r.git', 'o/r', 3)).toBe('https://github.com/o/r/pull/3');
    expect(pullUrl('/srv/mirror/r.git', 'o/r', 3)).toBeNull();
  });

  // main: r - s1(#1 squash, Apr 2) - m1(merge #2, Apr 5; branch b1 b2 from r) - x(direct) - m2(merge #3, Apr 9; branch
  // d1 from s1, plus a merge of main (m1) into the branch) - s2 (#1 again: a reland, Apr 20) - s3 (#4, May 1)
  const graph = [
    c('s3', ['s2'], 'Boundary (#4)', '2025-04-30', '2025-05-01'),
    c('s2', ['m2'], 'Reland (#1)', '2025-04-19', '2025-04-20'),
    c('m2', ['x', 'd2'], 'Merge pull request #3 from bob/d', '2025-04-09'),
    c('d2', ['d1', 'm1'], 'Merge branch main into d', '2025-04-07'),
    c('d1', ['s1'], 'work', '2025-04-03'),
    c('x', ['m1'], 'Direct', '2025-04-06'),
    c('m1', ['s1', 'b2'], 'Merge pull request #2 from alice/b', '2025-04-05'),
    c('b2', ['b1'], 'b2', '2025-03-29'),
    c('b1', ['r'], 'b1', '2025-03-20'),
    c('s1', ['r'], 'First (#1)', '2025-04-01', '2025-04-02'),
    c('r', [], 'root', '2025-01-01'),
  ];

  it("walks the first-parent line and dates each merge by its branch's first commit", () => {
    const commits = new Map(graph.map((x) => [x.sha, x]));
    const line = mainline(commits, 's3');
    expect(line.map((x) => x.sha)).toEqual(['s3', 's2', 'm2', 'x', 'm1', 's1', 'r']);
    const starts = branchStartDates(commits, line);
    expect(starts.get('m1')).toBe('2025-03-20T00:00:00.000Z');
    // m2 brought d1 and d2 only: m1's branch commits came in with m1.
    expect(starts.get('m2')).toBe('2025-04-03T00:00:00.000Z');
  });

  it("lists the window's PRs newest first; a number seen twice keeps its latest commit", () => {
    const { pulls: prs, withoutBase } = findGitPullRequests(graph, 's3', monthWindow('2025-04'));
    expect(withoutBase).toEqual([]);
    expect(
      prs.map((p) => [
        p.number,
        p.kind,
        p.mergeSha,
        p.baseSha,
        p.headSha,
        p.createdAt.slice(0, 10),
        p.mergedAt.slice(0, 10),
        p.createdFromBranch,
      ]),
    ).toEqual([
      [1, 'squash', 's2', 'm2', null, '2025-04-19', '2025-04-20', false],
      [3, 'merge', 'm2', 'x', 'd2', '2025-04-03', '2025-04-09', true],
      [2, 'merge', 'm1', 's1', 'b2', '2025-03-20', '2025-04-05', true],
    ]);
  });

  it('leaves out (and names) PR commits whose base is not in a shallow clone', () => {
    const shallow = [c('t', ['gone'], 'Tip (#9)', '2025-04-10'), c('u', [], 'Grafted root (#8)', '2025-04-09')];
    expect(findGitPullRequests(shallow, 't', monthWindow('2025-04'))).toEqual({ pulls: [], withoutBase: [9] });
  });

  /**
   * A random history: a mainline of squash PRs, merge PRs (branches forked from any earlier
   * mainline commit, sometimes merging the mainline in, sometimes forked from another open
   * branch) and direct commits, with committer dates that sometimes go back in time by up to
   * `backInTime` days.
   */
  function randomHistory(seed: number, backInTime: number): CommitHeader[] {
    const random = mulberry32(seed);
    const int = (n: number) => Math.floor(random() * n);
    const day = (d: number) => new Date(Date.UTC(2025, 0, 1) + d * 86_400_000).toISOString().slice(0, 10);
    const all: CommitHeader[] = [];
    const line: string[] = [];
    const branchTips: string[] = [];
    let t = 0;
    let n = 0;
    const add = (parents: string[], subject: string, authored: number, committed = authored) => {
      const sha = `c${all.length}`;
      all.push(c(sha, parents, subject, day(authored), day(committed)));
      return sha;
    };
    line.push(add([], 'root', 0));
    for (let i = 0; i < 120; i++) {
      t += int(4);
      const committed = random() < 0.1 ? Math.max(0, t - int(backInTime + 1)) : t;
      const roll = random();
      const tip = line.at(-1)!;
      n += 1;
      if (roll < 0.4) line.push(add([tip], `Change ${n} (#${random() < 0.05 ? 1 : n})`, Math.max(0, t - int(5)), committed));
      else if (roll < 0.8) {
        let parent =
          random() < 0.2 && branchTips.length > 0 ? branchTips[int(branchTips.length)]! : line[Math.max(0, line.length - 1 - int(10))]!;
        for (let k = 0; k < 1 + int(3); k++) {
          parent =
            random() < 0.15
              ? add([parent, line[Math.max(0, line.length - 1 - int(5))]!], 'Merge branch main', t - int(30))
              : add([parent], 'work', Math.max(0, t - int(40)));
        }
        branchTips.push(parent);
        line.push(add([tip, parent], `Merge pull request #${n} from u/b${n}`, committed, committed));
      } else line.push(add([tip], `Direct ${n}`, t, committed));
    }
    return all.reverse();
  }

  /** What the git source reads for a window: git's `--first-parent --since` walk, then `newest ^base`. */
  function windowView(graph: readonly CommitHeader[], tip: string, window: Window, slackDays: number) {
    const commits = new Map(graph.map((x) => [x.sha, x]));
    const since = new Date(Date.parse(window.start) - slackDays * 86_400_000).toISOString();
    const line: CommitHeader[] = [];
    for (let at = commits.get(tip); at && at.committerDate >= since; at = commits.get(at.parents[0] ?? '')) line.push(at);
    const reach = (from: string[]) => {
      const seen = new Set<string>();
      const stack = [...from];
      while (stack.length > 0) {
        const sha = stack.pop()!;
        if (seen.has(sha) || !commits.has(sha)) continue;
        seen.add(sha);
        stack.push(...commits.get(sha)!.parents);
      }
      return seen;
    };
    const view = new Map(line.map((x) => [x.sha, x]));
    const span = windowSpan(line, window);
    if (span) {
      const base = span.oldest.parents[0];
      const excluded = reach(base ? [base] : []);
      for (const sha of reach([span.newest.sha])) if (!excluded.has(sha)) view.set(sha, commits.get(sha)!);
    }
    return { line, commits: view, present: (sha: string) => commits.has(sha) };
  }

  it("finds the same pull requests from the window's part of a history as from the whole of it", () => {
    let compared = 0;
    for (let seed = 1; seed <= 150; seed++) {
      const graph = randomHistory(seed, 0);
      const tip = graph[0]!.sha;
      for (const month of ['2025-01', '2025-02', '2025-03', '2025-04', '2025-05', '2025-06']) {
        const window = monthWindow(month);
        const whole = findGitPullRequests(graph, tip, window);
        for (const slack of [0, 30])
          expect(pullRequestsInWindow(windowView(graph, tip, window, slack), window), `seed ${seed} ${month} slack ${slack}`).toEqual(
            whole,
          );
        compared += whole.pulls.length;
      }
    }
    expect(compared).toBeGreaterThan(1000);
  });

  it('with committer dates that go back in time, finds the same pull requests when the slack covers how far they go back', () => {
    let missedWithoutSlack = 0;
    for (let seed = 1; seed <= 150; seed++) {
      const graph = randomHistory(seed, 20);
      const tip = graph[0]!.sha;
      for (const month of ['2025-02', '2025-03', '2025-04', '2025-05']) {
        const window = monthWindow(month);
        const whole = findGitPullRequests(graph, tip, window);
        expect(pullRequestsInWindow(windowView(graph, tip, window, 21), window), `seed ${seed} ${month}`).toEqual(whole);
        if (pullRequestsInWindow(windowView(graph, tip, window, 0), window).pulls.length < whole.pulls.length) missedWithoutSlack += 1;
      }
    }
    // The slack is what makes it so: without it, git's walk stops early in some of these histories.
    expect(missedWithoutSlack).toBeGreaterThan(0);
  });
});
