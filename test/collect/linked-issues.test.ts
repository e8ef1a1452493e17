import { describe, expect, it } from 'vitest';
import { commentsBefore, findIssueRefs } from '../../stages/collect/linked-issues.js';

describe('linked issues (pure)', () => {
  const refs = (text: string, self?: number) => findIssueRefs(text, 'pandas-dev/pandas', self).map((r) => `${r.repo}#${r.number}:${r.via}`);

  it('finds #N, owner/repo#N, issue URLs and closing keywords, strongest link first', () => {
    expect(refs('Closes #12. See #7, numpy/numpy#300 and https://github.com/pandas-dev/pandas/issues/9.')).toEqual([
      'pandas-dev/pandas#12:closing-keyword',
      'pandas-dev/pandas#9:url',
      'numpy/numpy#300:cross-repo',
      'pandas-dev/pandas#7:reference',
    ]);
  });

  it('knows every closing keyword form, with owner/repo and URL targets', () => {
    for (const kw of ['close', 'closes', 'closed', 'fix', 'fixes', 'fixed', 'resolve', 'resolves', 'resolved', 'Fixes:', 'FIXES']) {
      expect(refs(`${kw} #5`)).toEqual(['pandas-dev/pandas#5:closing-keyword']);
    }
    expect(refs('fixes numpy/numpy#8')).toEqual(['numpy/numpy#8:closing-keyword']);
    expect(refs('resolves https://github.com/numpy/numpy/issues/4')).toEqual(['numpy/numpy#4:closing-keyword']);
  });

  it('keeps each issue once, drops the PR itself and what sits in code', () => {
    expect(refs('#5 and again #5, fixes #5', 5)).toEqual([]);
    expect(refs('see #5 and pandas-dev/pandas#5; fixes #6', 99)).toEqual([
      'pandas-dev/pandas#6:closing-keyword',
      'pandas-dev/pandas#5:reference',
    ]);
    expect(refs('```\nfixes #1\n```\nuse `x#2` or&#35;3 or file.py#L12 or a@b#4')).toEqual([]);
    expect(refs('https://github.com/pandas-dev/pandas/pull/10 is a PR')).toEqual([]);
  });

  it('keeps only comments written before the PR was opened', () => {
    const c = (createdAt: string) => ({
      author: 'a',
      authorAssociation: null,
      body: createdAt,
      createdAt,
      kind: 'issue' as const,
      path: null,
    });
    expect(
      commentsBefore([c('2025-04-01T00:00:00Z'), c('2025-04-02T00:00:00Z'), c('2025-04-03T00:00:00Z')], '2025-04-02T00:00:00Z').map(
        (x) => x.body,
      ),
    ).toEqual(['2025-04-01T00:00:00Z']);
  });
});
