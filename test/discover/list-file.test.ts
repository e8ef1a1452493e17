import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { normalizeRepoName, parseRepoList } from '../../stages/discover/list-file.js';

describe('repository lists (pure)', () => {
  it('reads one owner/name a line, URLs too, skipping comments and blanks, each repository once', () => {
    const parsed = parseRepoList(
      [
        '# asv repos',
        'pandas-dev/pandas',
        '',
        'https://github.com/scipy/scipy.git  # trailing comment',
        'github.com/numpy/numpy/tree/main',
        'Pandas-Dev/Pandas',
        'not a repo',
      ].join('\n'),
    );
    expect(parsed.candidates.map((c) => c.name)).toEqual(['pandas-dev/pandas', 'scipy/scipy', 'numpy/numpy']);
    expect(parsed.candidates.every((c) => c.via === 'list' && c.asvConfigPath === null)).toBe(true);
    expect(parsed.errors).toEqual(['line 7: not a repository: "not"']);
  });

  it('reads the FormulaCode TSV (header with a repo column)', () => {
    const text = readFileSync(new URL('../../../shared/reference/formulacode-repos.tsv', import.meta.url), 'utf8');
    const parsed = parseRepoList(text);
    expect(parsed.errors).toEqual([]);
    expect(parsed.candidates).toHaveLength(101);
    expect(parsed.candidates.slice(0, 3).map((c) => c.name)).toEqual(['scikit-learn/scikit-learn', 'pandas-dev/pandas', 'scipy/scipy']);
    expect(parsed.candidates.map((c) => c.name)).toContain('Textualize/rich');
  });

  it('finds the repo column wherever it is, and refuses a TSV without one', () => {
    expect(parseRepoList('stars\trepo\n10\ta/b\n20\tc/d\n').candidates.map((c) => c.name)).toEqual(['a/b', 'c/d']);
    expect(parseRepoList('stars\tname\n10\tx\n').errors[0]).toMatch(/needs a "repo" column/);
    expect(normalizeRepoName('https://www.github.com/o/r/')).toBe('o/r');
    expect(normalizeRepoName('o/r/extra')).toBeNull();
  });
});
