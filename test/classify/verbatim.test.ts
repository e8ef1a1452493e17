import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { indexSource, keepVerbatim, lcsLength, splitSentences, tokenize, verbatimRatio } from '../../stages/classify/verbatim.js';

const source = `Calling df.groupby("key").sum() on a frame with 1,000,000 groups takes 12 s on main.
Profiling shows that most of the time is spent in a Python loop over the groups in _aggregate_series.
With numpy 1.26 and pandas 2.1 the same call took 0.4 s, so this is a regression.
Unrelated: the docs build is broken on Windows.`;
const index = indexSource(source);

describe('LCS ratio (word tokens after NFKC + lower-case; best window of ⌈1.5·m⌉ source tokens)', () => {
  it('tokenizes words, numbers and identifiers; drops punctuation and markup', () => {
    expect(tokenize('Calling `df.groupby("key")` — 1,000 ÉTÉ x_y!')).toEqual(['calling', 'df', 'groupby', 'key', '1', '000', 'été', 'x_y']);
    expect(tokenize('ﬁle')).toEqual(['file']); // NFKC
  });

  it('is 1 for a sentence copied word for word, whatever its case and punctuation', () => {
    expect(
      verbatimRatio('Profiling shows that most of the time is spent in a Python loop over the groups in _aggregate_series.', index),
    ).toBe(1);
    expect(
      verbatimRatio('profiling shows that most of the time is spent in a python loop over the groups in _aggregate_series', index),
    ).toBe(1);
  });

  it('a source word left out costs nothing (the window allows it); a changed or added word costs 1/m', () => {
    // "Python" left out of an 18-word sentence: still 1. "Python" changed to "Cython": 17/18.
    const s = 'Profiling shows that most of the time is spent in a loop over the groups in _aggregate_series.';
    expect(tokenize(s)).toHaveLength(17);
    expect(verbatimRatio(s, index)).toBe(1); // every word of the shorter sentence is in order in the source
    const changed = 'Profiling shows that most of the time is spent in a Cython loop over the groups in _aggregate_series.';
    expect(verbatimRatio(changed, index)).toBeCloseTo(17 / 18, 10);
  });

  it('is low for a paraphrase', () => {
    const paraphrase = 'A profiler revealed the bottleneck: iterating over groups in plain Python.';
    expect(verbatimRatio(paraphrase, index)).toBeLessThan(0.5);
  });

  it('does not let a long source match a sentence as a scattered subsequence (the window)', () => {
    // Every word occurs in the source, in this order, but far apart.
    const scattered = 'Calling profiling with the docs build broken.';
    const words = tokenize(scattered);
    expect(lcsLength(indexSource(scattered).tokens, indexSource(scattered).tokens)).toBe(words.length);
    expect(verbatimRatio(scattered, index)).toBeLessThan(0.85);
    expect(verbatimRatio(scattered, index, 1000)).toBe(1); // with an unbounded window it would pass
  });

  it('is 0 for an empty sentence or source; a window is cut at the end of the source', () => {
    expect(verbatimRatio('...', index)).toBe(0);
    expect(verbatimRatio('anything', '')).toBe(0);
    expect(verbatimRatio('on Windows', 'broken on Windows')).toBe(1);
  });

  it('lcsLength is the classic LCS', () => {
    expect(lcsLength([1, 2, 3, 4, 1], [3, 4, 1, 2, 1, 3])).toBe(3);
    expect(lcsLength([], [1])).toBe(0);
  });

  it('property: a sentence cut from the source scores 1; the ratio stays in [0, 1]', () => {
    const words = tokenize(source);
    fc.assert(
      fc.property(fc.integer({ min: 0, max: words.length - 1 }), fc.integer({ min: 1, max: 15 }), (start, len) => {
        const sentence = words.slice(start, start + len).join(' ');
        expect(verbatimRatio(sentence, index)).toBe(1);
      }),
    );
    fc.assert(
      fc.property(fc.string(), (s) => {
        const r = verbatimRatio(s, index);
        expect(r).toBeGreaterThanOrEqual(0);
        expect(r).toBeLessThanOrEqual(1);
      }),
    );
  });
});

describe('splitting and keeping', () => {
  it('splits passages into sentences at sentence ends, blank lines and list items', () => {
    expect(splitSentences('It is slow. It takes 12 s!\n\n- first item\n- second item')).toEqual([
      'It is slow.',
      'It takes 12 s!',
      '- first item',
      '- second item',
    ]);
    expect(splitSentences('Use e.g. numpy. Then 3.5 s.')).toEqual(['Use e.g. numpy.', 'Then 3.5 s.']);
  });

  it('keeps passing sentences, drops the others, and drops passages left empty', () => {
    const result = keepVerbatim(
      [
        'Calling df.groupby("key").sum() on a frame with 1,000,000 groups takes 12 s on main. Our new kernel fixes this nicely.',
        'An invented sentence that appears nowhere.',
      ],
      index,
      0.85,
      1.5,
    );
    expect(result.kept).toEqual(['Calling df.groupby("key").sum() on a frame with 1,000,000 groups takes 12 s on main.']);
    expect(result.dropped.map((d) => d.sentence)).toEqual([
      'Our new kernel fixes this nicely.',
      'An invented sentence that appears nowhere.',
    ]);
    expect(result.dropped.every((d) => d.ratio < 0.85)).toBe(true);
  });

  it('the threshold is configurable', () => {
    const s = 'Profiling shows that most of the time is spent in a Cython loop over the groups in _aggregate_series.';
    expect(keepVerbatim([s], index, 0.95, 1.5).kept).toEqual([]);
    expect(keepVerbatim([s], index, 0.9, 1.5).kept).toEqual([s]);
  });
});
