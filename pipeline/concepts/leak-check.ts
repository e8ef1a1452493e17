import type { LinkedIssue } from './records/pull-request.js';
import { stripHtmlComments } from './html-comments.js';
import { splitCode } from './anonymize.js';
import { codeOf, diffFiles, type DiffFile } from './diff-lines.js';
import type { PatchVocabulary } from './records/classify-output.js';

/**
 * Does a problem statement give the solution away? Pure.
 *
 * What the patch brings that did not exist at the base commit (its "vocabulary"):
 *
 * - identifiers: the words `[A-Za-z_][A-Za-z0-9_]*` of the code on the added lines of the patch's
 *   core files (whole-line comments and trailing `#` comments left out) and the path segments of
 *   the core files it adds (a new module or package), that are not present at the base. Two bases:
 *   - `diff` (always available): present at the base means written anywhere on the base side of
 *     the same diff: a removed line, a context line, a hunk header (git prints the enclosing
 *     `def`/`class` there), a path of a file that existed. The base tree is not seen, so a name
 *     defined elsewhere at the base but first used here would look new; to keep such false
 *     positives out, a name must have at least 4 characters (leading/trailing `_` not counted)
 *     and not be a Python keyword, builtin, `typing` name, very common module or local name.
 *   - `base-tree` (when the base commit's tree is at hand: `--source git:PATH`): present at the
 *     base means occurring as a whole word in a text file of the base commit (`git grep -w`) or
 *     as a directory or module name of one of its paths (`git ls-tree -r`): exact.
 *     Stricter, since exactness removes the false positives the stop list is for: 3 characters
 *     are enough and only keywords, `self` and `cls` are never counted (a builtin or module that
 *     the repository never used before, `bisect` say, is part of the solution).
 * - file names: the paths (and file names) of the core files the patch adds.
 * - added code: every run of QUOTE_TOKENS consecutive code tokens (identifiers, numbers and
 *   single punctuation characters; whitespace does not count) of a block of added lines, unless
 *   the same run occurs on the base side of the diff.
 *
 * A statement leaks when it holds
 * - an identifier of the vocabulary that is distinctive (it has an `_`, a digit or an inner
 *   capital: `_SINGLE_CELLS`, `cell_len2`, `CellCache`) anywhere, or one that is a plain word
 *   (`cache`, `Callable`, `issuperset`) inside code (inline code or a fenced block): in prose a
 *   plain word is English, and a check that dropped every statement saying "cache" would drop
 *   symptoms too;
 * - a file name of the vocabulary;
 * - a run of QUOTE_TOKENS tokens of added code (a quote of the patch).
 * Words that describe the base and appear in every statement of a repository are never leaks:
 * those of the statement template, of the repository section, of the measured workloads' names
 * (`exempt`). Tests, benchmarks, docs and other non-core files are not part of the vocabulary:
 * a new test often repeats an issue's reproducer, which is the symptom, not the solution.
 */

/** Consecutive code tokens of added lines that make a quote. */
export const QUOTE_TOKENS = 10;

/** Shortest identifier counted (leading and trailing underscores not counted), per basis. */
export const MIN_IDENTIFIER_LENGTH: Readonly<Record<PatchVocabulary['basis'], number>> = { diff: 4, 'base-tree': 3 };

const KEYWORDS = [
  'False',
  'None',
  'True',
  'and',
  'as',
  'assert',
  'async',
  'await',
  'break',
  'case',
  'class',
  'continue',
  'def',
  'del',
  'elif',
  'else',
  'except',
  'finally',
  'for',
  'from',
  'global',
  'if',
  'import',
  'in',
  'is',
  'lambda',
  'match',
  'nonlocal',
  'not',
  'or',
  'pass',
  'raise',
  'return',
  'try',
  'while',
  'with',
  'yield',
  'self',
  'cls',
];

/** Never counted with the diff basis: present at the base of any Python project, or too common to tell anything. */
const DIFF_STOP_WORDS = [
  // builtins
  'abs',
  'all',
  'any',
  'ascii',
  'bool',
  'breakpoint',
  'bytearray',
  'bytes',
  'callable',
  'chr',
  'classmethod',
  'compile',
  'complex',
  'delattr',
  'dict',
  'dir',
  'divmod',
  'enumerate',
  'eval',
  'exec',
  'filter',
  'float',
  'format',
  'frozenset',
  'getattr',
  'globals',
  'hasattr',
  'hash',
  'hex',
  'id',
  'input',
  'int',
  'isinstance',
  'issubclass',
  'iter',
  'len',
  'list',
  'locals',
  'map',
  'max',
  'memoryview',
  'min',
  'next',
  'object',
  'oct',
  'open',
  'ord',
  'pow',
  'print',
  'property',
  'range',
  'repr',
  'reversed',
  'round',
  'set',
  'setattr',
  'slice',
  'sorted',
  'staticmethod',
  'str',
  'sum',
  'super',
  'tuple',
  'type',
  'vars',
  'zip',
  'NotImplemented',
  'Ellipsis',
  'Exception',
  'BaseException',
  'ValueError',
  'TypeError',
  'KeyError',
  'IndexError',
  'AttributeError',
  'RuntimeError',
  'NotImplementedError',
  'StopIteration',
  'ImportError',
  'OSError',
  'AssertionError',
  'ZeroDivisionError',
  'OverflowError',
  'Warning',
  'UserWarning',
  'DeprecationWarning',
  'FutureWarning',
  'RuntimeWarning',
  '__init__',
  '__name__',
  '__main__',
  '__all__',
  '__future__',
  '__class__',
  '__dict__',
  '__call__',
  'annotations',
  // typing
  'Any',
  'Optional',
  'Union',
  'Callable',
  'List',
  'Dict',
  'Tuple',
  'Set',
  'FrozenSet',
  'Iterable',
  'Iterator',
  'Sequence',
  'Mapping',
  'MutableMapping',
  'TypeVar',
  'Generic',
  'cast',
  'overload',
  'TYPE_CHECKING',
  'Literal',
  'ClassVar',
  'Type',
  'NamedTuple',
  'Protocol',
  'Final',
  'Generator',
  'Hashable',
  'Sized',
  // very common modules
  'typing',
  'functools',
  'itertools',
  'collections',
  'operator',
  'warnings',
  'numpy',
  'pandas',
  'scipy',
  'math',
  'json',
  'time',
  'dataclasses',
  'contextlib',
  'abc',
  'enum',
  'sys',
  'os',
  're',
  // very common local names
  'args',
  'kwargs',
  'data',
  'value',
  'values',
  'result',
  'results',
  'item',
  'items',
  'key',
  'keys',
  'name',
  'names',
  'func',
  'other',
  'obj',
  'text',
  'line',
  'lines',
  'size',
  'length',
  'index',
  'start',
  'stop',
  'end',
  'count',
  'total',
  'shape',
  'dtype',
  'axis',
  'out',
  'arr',
  'array',
  'copy',
  'mask',
  'self',
  'none',
  'true',
  'false',
  'default',
  'path',
  'file',
  'kind',
  'mode',
  'level',
  'step',
  'node',
  'nodes',
  'elem',
  'element',
  'elements',
  'string',
  'number',
  'left',
  'right',
];

const KEYWORD_SET = new Set(KEYWORDS);
const DIFF_STOP_SET = new Set([...KEYWORDS, ...DIFF_STOP_WORDS]);

const IDENTIFIER = /(?<![A-Za-z0-9_])[A-Za-z_][A-Za-z0-9_]*/g;
const CODE_TOKEN = /[A-Za-z_][A-Za-z0-9_]*|\d+(?:\.\d+)?|[^\sA-Za-z0-9_]/g;

export function identifiersIn(text: string): string[] {
  return text.match(IDENTIFIER) ?? [];
}

export function codeTokens(text: string): string[] {
  return text.match(CODE_TOKEN) ?? [];
}

function coreOf(identifier: string): string {
  return identifier.replace(/^_+|_+$/g, '');
}

/** An identifier that prose does not produce: an `_` (inside or around), a digit, or an inner capital. */
export function isDistinctive(identifier: string): boolean {
  const core = coreOf(identifier);
  return core !== identifier || /[_\d]/.test(core) || /[a-z][A-Z]/.test(core) || /[A-Z]{2}[a-z]/.test(core);
}

/** The path segments of a file that name Python things: directories and the file's stem. */
function pathIdentifiers(path: string): string[] {
  return path.split('/').flatMap((segment, i, all) => identifiersIn(i === all.length - 1 ? segment.replace(/\.[^.]*$/, '') : segment));
}

function isCore(file: DiffFile, core: ReadonlySet<string>): boolean {
  return !file.binary && core.has(file.path);
}

const isNewFile = (f: DiffFile) => f.status === 'added' || f.status === 'copied' || f.status === 'renamed';

/** Everything the diff shows of the base side, as one text per hunk (with the paths that existed). */
function baseSideTexts(files: readonly DiffFile[]): string[] {
  const texts: string[] = [];
  for (const f of files) {
    if (!isNewFile(f)) texts.push(f.path);
    if (f.previousPath) texts.push(f.previousPath);
    for (const h of f.hunks) texts.push([h.header, ...h.lines.filter((l) => l.side !== 'added').map((l) => l.text)].join('\n'));
  }
  return texts;
}

/**
 * The identifiers of the patch's added core code (and new core paths) that the diff does not show
 * at the base, with at least 3 characters and not keywords: the candidates both bases start from
 * (the base-tree basis asks the base commit which of them it holds).
 */
export function addedIdentifierCandidates(diff: string, coreFiles: readonly string[]): string[] {
  const files = diffFiles(diff);
  const core = new Set(coreFiles);
  const base = new Set(baseSideTexts(files).flatMap(identifiersIn));
  const added = new Set<string>();
  for (const f of files) {
    if (!isCore(f, core)) continue;
    if (isNewFile(f)) for (const id of pathIdentifiers(f.path)) added.add(id);
    for (const h of f.hunks) for (const l of h.lines) if (l.side === 'added') for (const id of identifiersIn(codeOf(l.text))) added.add(id);
  }
  return [...added].filter((id) => !base.has(id) && !KEYWORD_SET.has(id) && coreOf(id).length >= MIN_IDENTIFIER_LENGTH['base-tree']).sort();
}

/**
 * The patch's vocabulary. `presentAtBase`: which candidates the base commit's tree holds (from
 * `git grep`), or null when the tree is not at hand (the diff basis).
 */
export function patchVocabulary(diff: string, coreFiles: readonly string[], presentAtBase: ReadonlySet<string> | null): PatchVocabulary {
  const candidates = addedIdentifierCandidates(diff, coreFiles);
  const basis: PatchVocabulary['basis'] = presentAtBase ? 'base-tree' : 'diff';
  const identifiers = presentAtBase
    ? candidates.filter((id) => !presentAtBase.has(id))
    : candidates.filter((id) => coreOf(id).length >= MIN_IDENTIFIER_LENGTH.diff && !DIFF_STOP_SET.has(id));
  const core = new Set(coreFiles);
  const files = diffFiles(diff);
  const existing = new Set(files.filter((f) => !isNewFile(f)).map((f) => f.path));
  const fileNames = new Set<string>();
  for (const f of files) {
    if (!isCore(f, core) || !isNewFile(f) || existing.has(f.path)) continue;
    fileNames.add(f.path);
    const name = f.path.slice(f.path.lastIndexOf('/') + 1);
    if (!/^__\w+__\.py$/.test(name) && ![...existing].some((p) => p.endsWith(`/${name}`) || p === name)) fileNames.add(name);
  }
  return { basis, coreFiles: [...coreFiles].sort(), identifiers, fileNames: [...fileNames].sort() };
}

/** The runs of QUOTE_TOKENS tokens of added core code that the base side of the diff does not have. */
export function addedCodeQuotes(diff: string, coreFiles: readonly string[], n = QUOTE_TOKENS): Set<string> {
  const files = diffFiles(diff);
  const core = new Set(coreFiles);
  const grams = (tokens: readonly string[], into: Set<string>) => {
    for (let i = 0; i + n <= tokens.length; i++) into.add(tokens.slice(i, i + n).join('\u0001'));
  };
  const base = new Set<string>();
  for (const text of baseSideTexts(files)) grams(codeTokens(text), base);
  const quotes = new Set<string>();
  for (const f of files) {
    if (!isCore(f, core)) continue;
    for (const h of f.hunks) {
      let run: string[] = [];
      const flush = () => {
        grams(run, quotes);
        run = [];
      };
      for (const l of h.lines) {
        if (l.side === 'added') run.push(...codeTokens(codeOf(l.text)));
        else if (l.side === 'context') flush();
      }
      flush();
    }
  }
  for (const g of base) quotes.delete(g);
  return quotes;
}

/** What the check needs: the stored vocabulary and the quotes of added code. */
export interface LeakCheck {
  readonly identifiers: ReadonlySet<string>;
  readonly fileNames: readonly string[];
  readonly quotes: ReadonlySet<string>;
}

export function leakCheckOf(vocabulary: PatchVocabulary, diff: string): LeakCheck {
  return {
    identifiers: new Set(vocabulary.identifiers),
    fileNames: vocabulary.fileNames,
    quotes: addedCodeQuotes(diff, vocabulary.coreFiles),
  };
}

export interface Leak {
  readonly kind: 'identifier' | 'file-name' | 'quote';
  readonly text: string;
}

/** The words of texts that describe the base (template, repository section, workload names): never leaks. */
export function exemptWords(...texts: readonly string[]): Set<string> {
  return new Set(texts.flatMap(identifiersIn));
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Every leak in a text, each once, in order of kind then text. */
export function findLeaks(text: string, check: LeakCheck, exempt: ReadonlySet<string> = new Set()): Leak[] {
  const found = new Map<string, Leak>();
  const add = (leak: Leak) => found.set(`${leak.kind}\u0000${leak.text}`, leak);
  for (const segment of splitCode(text)) {
    for (const id of identifiersIn(segment.text)) {
      if (check.identifiers.has(id) && !exempt.has(id) && (segment.code || isDistinctive(id))) add({ kind: 'identifier', text: id });
    }
  }
  for (const name of check.fileNames) {
    if (new RegExp(`(?<![\\w./-])${escapeRegExp(name)}(?![\\w/-]|\\.\\w)`).test(text)) add({ kind: 'file-name', text: name });
  }
  if (check.quotes.size > 0) {
    // Overlapping runs that match make one quote.
    const tokens = codeTokens(text);
    const n = QUOTE_TOKENS;
    let span: [number, number] | null = null;
    const flush = () => {
      if (span) add({ kind: 'quote', text: tokens.slice(span[0], span[1]).join(' ') });
      span = null;
    };
    for (let i = 0; i + n <= tokens.length; i++) {
      if (!check.quotes.has(tokens.slice(i, i + n).join('\u0001'))) continue;
      if (span && i <= span[1]) span[1] = i + n;
      else {
        flush();
        span = [i, i + n];
      }
    }
    flush();
  }
  const order = { identifier: 0, 'file-name': 1, quote: 2 } as const;
  return [...found.values()].sort((a, b) => order[a.kind] - order[b.kind] || (a.text < b.text ? -1 : a.text > b.text ? 1 : 0));
}

/** One line for a ledger detail: what leaked. */
export function describeLeaks(leaks: readonly Leak[], max = 5): string {
  const shown = leaks
    .slice(0, max)
    .map((l) =>
      l.kind === 'quote'
        ? `a quote of added code ("${l.text.slice(0, 80)}")`
        : `${l.kind === 'identifier' ? 'identifier' : 'file name'} \`${l.text}\``,
    );
  return `${shown.join(', ')}${leaks.length > max ? ` and ${leaks.length - max} more` : ''}`;
}

/**
 * Markdown blocks: paragraphs separated by blank lines, a fenced code block (with its blank
 * lines) being one block.
 */
export function markdownBlocks(markdown: string): string[] {
  const blocks: string[] = [];
  let current: string[] = [];
  let fence: RegExp | null = null;
  const flush = () => {
    // leading indentation is kept: it makes indented code and list continuations
    if (current.some((l) => l.trim() !== '')) blocks.push(current.join('\n').replace(/\s+$/, ''));
    current = [];
  };
  for (const line of markdown.split('\n')) {
    if (fence) {
      current.push(line);
      if (fence.test(line)) {
        fence = null;
        flush();
      }
      continue;
    }
    const open = /^ {0,3}(`{3,}|~{3,})/.exec(line);
    if (open) {
      flush();
      current.push(line);
      fence = new RegExp(`^ {0,3}${open[1]![0] === '`' ? '`' : '~'}{${open[1]!.length},}\\s*$`);
      continue;
    }
    if (line.trim() === '') flush();
    else current.push(line);
  }
  flush();
  return blocks;
}

/** A text without its blocks that leak (unchanged when none does), and the leaks of the blocks left out. */
export function withoutLeakingBlocks(
  markdown: string,
  check: LeakCheck,
  exempt: ReadonlySet<string>,
): { text: string; dropped: number; leaks: Leak[] } {
  if (findLeaks(markdown, check, exempt).length === 0) return { text: markdown, dropped: 0, leaks: [] };
  const kept: string[] = [];
  const leaks: Leak[] = [];
  let dropped = 0;
  for (const block of markdownBlocks(markdown)) {
    const found = findLeaks(block, check, exempt);
    if (found.length === 0) kept.push(block);
    else {
      dropped += 1;
      leaks.push(...found);
    }
  }
  return { text: kept.join('\n\n'), dropped, leaks };
}

/**
 * Linked issues with the parts that leak left out: a title that leaks is not shown, a body or
 * comment keeps only its blocks that do not leak, a comment left empty is gone.
 */
export function issuesWithoutLeaks(
  issues: readonly LinkedIssue[],
  check: LeakCheck,
  exempt: ReadonlySet<string>,
): { issues: LinkedIssue[]; droppedParts: number; leaks: Leak[] } {
  let droppedParts = 0;
  const leaks: Leak[] = [];
  const clean = (text: string) => {
    const r = withoutLeakingBlocks(stripHtmlComments(text).trim(), check, exempt);
    droppedParts += r.dropped;
    leaks.push(...r.leaks);
    return r.text;
  };
  const out = issues.map((issue) => {
    const titleLeaks = findLeaks(issue.title, check, exempt);
    if (titleLeaks.length > 0) {
      droppedParts += 1;
      leaks.push(...titleLeaks);
    }
    return {
      ...issue,
      title: titleLeaks.length > 0 ? '' : issue.title,
      body: clean(issue.body),
      comments: issue.comments.map((c) => ({ ...c, body: clean(c.body) })).filter((c) => c.body !== ''),
    };
  });
  return { issues: out, droppedParts, leaks };
}

/** The template's own text (placeholders left out): the same in every statement, so never a leak. */
export function statementTemplateText(template: { readonly system: string; readonly user: string }): string {
  return `${template.system}\n${template.user}`.replace(/\{\{\w+\}\}/g, ' ');
}
