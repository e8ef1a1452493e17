import { describe, expect, it } from 'vitest';
import {
  addedCodeQuotes,
  addedIdentifierCandidates,
  findLeaks,
  isDistinctive,
  issuesWithoutLeaks,
  leakCheckOf,
  markdownBlocks,
  patchVocabulary,
  QUOTE_TOKENS,
  withoutLeakingBlocks,
} from '../../pipeline/concepts/leak-check.js';

/**
 * The leak check on crafted diffs and statements, in both directions: what the patch brings must
 * be caught, and what the base already had, common words and short names must not.
 */

// A hand-written git diff: a core module changed (a cache and a fast path added, a loop removed),
// a new core module, a test and a benchmark (not core).
const DIFF = [
  'diff --git a/pkg/widths.py b/pkg/widths.py',
  'index 1111111..2222222 100644',
  '--- a/pkg/widths.py',
  '+++ b/pkg/widths.py',
  '@@ -10,9 +10,14 @@ def render_width(text, data):',
  '     """Width of text in cells."""',
  '-    total = 0',
  '-    for ch in text:',
  '-        total += char_cells(ch)',
  '-    return total',
  '+    # Look the text up in _WIDTH_MEMO before measuring it again',
  '+    if text in _WIDTH_MEMO:',
  '+        return _WIDTH_MEMO[text]',
  '+    cache = {}',
  '+    out = data',
  '+    result = sum(map(char_cells, text)) if out is not None else self_check(text)  # uses fastpath_note',
  '+    _WIDTH_MEMO[text] = result',
  '+    return result',
  '+',
  '+_WIDTH_MEMO = dict()',
  ' ',
  ' def char_cells(ch):',
  '     return 1',
  'diff --git a/pkg/_fastwidth.py b/pkg/_fastwidth.py',
  'new file mode 100644',
  'index 0000000..3333333',
  '--- /dev/null',
  '+++ b/pkg/_fastwidth.py',
  '@@ -0,0 +1,2 @@',
  '+def precomputed_table(limit):',
  '+    return [1] * limit',
  'diff --git a/tests/test_widths.py b/tests/test_widths.py',
  'index 4444444..5555555 100644',
  '--- a/tests/test_widths.py',
  '+++ b/tests/test_widths.py',
  '@@ -1,2 +1,4 @@',
  ' from pkg.widths import render_width',
  '+def test_memo_hit_returns_same_width():',
  '+    assert render_width("abc", None) == render_width("abc", None)',
  '',
].join('\n');
const CORE = ['pkg/widths.py', 'pkg/_fastwidth.py'];

describe('the patch vocabulary (diff basis)', () => {
  const vocabulary = patchVocabulary(DIFF, CORE, null);

  it('counts the identifiers of added core code that the base side of the diff does not show', () => {
    expect(vocabulary).toMatchObject({ basis: 'diff', coreFiles: ['pkg/_fastwidth.py', 'pkg/widths.py'] });
    expect(vocabulary.identifiers).toEqual(['_WIDTH_MEMO', '_fastwidth', 'cache', 'limit', 'precomputed_table', 'self_check']);
  });

  it('leaves out what the base side shows, comments, tests, short names and the stop list', () => {
    // text, data (hunk header), char_cells (context line), total (removed) are at the base
    for (const base of ['text', 'data', 'char_cells', 'render_width']) expect(vocabulary.identifiers).not.toContain(base);
    // only in comments
    expect(vocabulary.identifiers).not.toContain('fastpath_note');
    expect(vocabulary.identifiers).not.toContain('Look');
    // only in a test file
    expect(vocabulary.identifiers).not.toContain('test_memo_hit_returns_same_width');
    // shorter than 4 characters, keywords, builtins, common local names
    for (const common of ['out', 'if', 'in', 'is', 'not', 'None', 'return', 'sum', 'map', 'dict', 'result'])
      expect(vocabulary.identifiers).not.toContain(common);
  });

  it('names the core files the patch adds (path and file name), not __init__.py-like names', () => {
    expect(vocabulary.fileNames).toEqual(['_fastwidth.py', 'pkg/_fastwidth.py']);
    const init =
      'diff --git a/pkg/sub/__init__.py b/pkg/sub/__init__.py\nnew file mode 100644\n--- /dev/null\n+++ b/pkg/sub/__init__.py\n@@ -0,0 +1 @@\n+X = 1\n';
    expect(patchVocabulary(init, ['pkg/sub/__init__.py'], null).fileNames).toEqual(['pkg/sub/__init__.py']);
  });

  it('is stricter with the base tree: builtins and short names count unless the base holds them, names defined elsewhere at the base do not', () => {
    const candidates = addedIdentifierCandidates(DIFF, CORE);
    expect(candidates).toContain('map');
    expect(candidates).toContain('out');
    // the base tree holds `self_check` (defined in another module) and `map`, not the rest
    const atBase = new Set(['self_check', 'map']);
    const exact = patchVocabulary(DIFF, CORE, atBase);
    expect(exact.basis).toBe('base-tree');
    expect(exact.identifiers).not.toContain('self_check');
    expect(exact.identifiers).not.toContain('map');
    expect(exact.identifiers).toEqual(expect.arrayContaining(['_WIDTH_MEMO', 'out', 'dict', 'sum', 'result']));
  });
});

describe('finding leaks in a statement', () => {
  const check = leakCheckOf(patchVocabulary(DIFF, CORE, null), DIFF);

  it('catches a distinctive added identifier anywhere, and a plain-word one in code', () => {
    expect(findLeaks('Keep widths in _WIDTH_MEMO and reuse them.', check)).toEqual([{ kind: 'identifier', text: '_WIDTH_MEMO' }]);
    expect(findLeaks('Call `precomputed_table(n)` once.', check)).toEqual([{ kind: 'identifier', text: 'precomputed_table' }]);
    expect(findLeaks('Store it in a `cache` dict.', check)).toEqual([{ kind: 'identifier', text: 'cache' }]);
    expect(findLeaks('```python\ncache = {}\n```', check)).toEqual([{ kind: 'identifier', text: 'cache' }]);
  });

  it('does not trip on prose, common names, short names, or names the base has', () => {
    const statement = [
      'Rendering a wide table is slow: render_width(text, data) takes 12 ms per row, and the result is not reused.',
      'A cache might help, or not; the limit is the data itself. self.out is None here, return values are the same.',
      'Profiling shows `char_cells` called for every character of `text`.',
    ].join('\n\n');
    expect(findLeaks(statement, check)).toEqual([]);
  });

  it('never counts exempt words (template, repository section, workload names)', () => {
    expect(findLeaks('The benchmark `precomputed_table` is slow.', check, new Set(['precomputed_table']))).toEqual([]);
  });

  it('catches a new file name, but not a longer name that contains it', () => {
    expect(findLeaks('See pkg/_fastwidth.py for a faster table.', check).map((l) => l.kind)).toContain('file-name');
    expect(findLeaks('Open other_fastwidth.pyx.', check).filter((l) => l.kind === 'file-name')).toEqual([]);
  });

  it(`catches a quote of ${QUOTE_TOKENS} or more tokens of added code whatever its layout, not a shorter one, nor a quote of removed code`, () => {
    const quote = findLeaks('Try:\n\n    result = sum(map(char_cells,\n                     text)) if out\n', check);
    expect(quote).toEqual([{ kind: 'quote', text: 'result = sum ( map ( char_cells , text ) ) if out' }]);
    expect(findLeaks('Try `sum(map(char_cells, text))`.', check)).toEqual([]); // 9 tokens
    // the removed loop is the base: quoting it describes the problem
    expect(findLeaks('The loop `for ch in text: total += char_cells(ch)` then `return total` is slow.', check)).toEqual([]);
    expect(addedCodeQuotes(DIFF, CORE).size).toBeGreaterThan(0);
    expect(addedCodeQuotes(DIFF, [])).toEqual(new Set());
  });

  it('tells distinctive identifiers from plain words', () => {
    expect(['_memo', '__slots__', 'cell_len', 'width2', 'CellCache', 'HTTPServer'].filter(isDistinctive)).toHaveLength(6);
    expect(['cache', 'Cache', 'LRU', 'issuperset', 'Callable'].filter(isDistinctive)).toEqual([]);
  });
});

describe('leaving out the parts of a text that leak', () => {
  const check = leakCheckOf(patchVocabulary(DIFF, CORE, null), DIFF);

  it('splits markdown into paragraphs, a fenced block with its blank lines being one', () => {
    expect(markdownBlocks('one\ntwo\n\n```py\na = 1\n\nb = 2\n```\nafter\n\n\nlast')).toEqual([
      'one\ntwo',
      '```py\na = 1\n\nb = 2\n```',
      'after',
      'last',
    ]);
  });

  it('keeps indentation, and a text without leaks byte for byte', () => {
    expect(markdownBlocks('Run:\n\n    x = slow(1)\n    y = 2\n')).toEqual(['Run:', '    x = slow(1)\n    y = 2']);
    const text = 'Slow:\n\n\n    x = slow(1)\n';
    expect(withoutLeakingBlocks(text, check, new Set())).toEqual({ text, dropped: 0, leaks: [] });
  });

  it('keeps the blocks that do not leak', () => {
    const r = withoutLeakingBlocks(
      'Tables are slow.\n\nMaybe memoize into `_WIDTH_MEMO`?\n\n```\nrender_width(x, None)\n```',
      check,
      new Set(),
    );
    expect(r).toMatchObject({ text: 'Tables are slow.\n\n```\nrender_width(x, None)\n```', dropped: 1 });
  });

  it('drops a leaking issue title, blocks of its body and comments, and comments left empty', () => {
    const comment = (body: string) => ({
      author: 'x',
      authorAssociation: null,
      body,
      createdAt: '2025-01-01T00:00:00Z',
      kind: 'issue' as const,
      path: null,
    });
    const issue = {
      repo: 'acme/pkg',
      number: 3,
      title: 'Use precomputed_table in render_width',
      body: 'render_width is slow on long lines.\n\n<!-- template: precomputed_table -->\n\nIt could call precomputed_table.',
      state: 'open',
      author: 'x',
      createdAt: '2025-01-01T00:00:00Z',
      labels: [],
      comments: [comment('Same here: 40 ms per line.'), comment('`_WIDTH_MEMO` would fix it')],
      via: 'reference' as const,
    };
    const r = issuesWithoutLeaks([issue], check, new Set());
    expect(r.droppedParts).toBe(3);
    expect(r.issues[0]).toMatchObject({
      title: '',
      body: 'render_width is slow on long lines.',
      comments: [{ body: 'Same here: 40 ms per line.' }],
    });
  });
});
