/**
 * Anonymization of user handles and e-mail addresses in markdown, outside code only. Pure.
 *
 * Code is fenced blocks (``` or ~~~, three or more, closed by a fence of the same character at
 * least as long, or running to the end) and inline code spans (a run of N backticks closed by
 * the next run of exactly N); both are left byte for byte. Everywhere else:
 * - an e-mail address becomes `<email>`;
 * - a GitHub handle `@name` (or team `@org/team`) becomes `@user1`, `@user2` ... numbered in order
 *   of first appearance, the same handle always the same number within one Anonymizer. A word
 *   after `@` that is a common Python decorator (`@property`, `@njit`) or is followed by `.name`
 *   (`@numba.jit`) is not a handle and is kept.
 */

export interface Segment {
  readonly code: boolean;
  readonly text: string;
}

const FENCE_OPEN = /^ {0,3}(`{3,}|~{3,})/;

/** Splits markdown into code and non-code segments; joining the texts gives the input back. */
export function splitCode(markdown: string): Segment[] {
  const segments: Segment[] = [];
  const lines = markdown.split(/(?<=\n)/);
  let prose = '';
  let i = 0;
  while (i < lines.length) {
    const line = lines[i]!;
    const open = FENCE_OPEN.exec(line);
    if (!open) {
      prose += line;
      i += 1;
      continue;
    }
    if (prose) segments.push(...splitInline(prose));
    prose = '';
    const fence = open[1]!;
    const close = new RegExp(`^ {0,3}${fence[0] === '`' ? '`' : '~'}{${fence.length},}\\s*$`);
    let block = line;
    i += 1;
    while (i < lines.length) {
      const l = lines[i]!;
      block += l;
      i += 1;
      if (close.test(l.replace(/\n$/, ''))) break;
    }
    segments.push({ code: true, text: block });
  }
  if (prose) segments.push(...splitInline(prose));
  return segments;
}

function splitInline(text: string): Segment[] {
  const out: Segment[] = [];
  let pos = 0;
  let plain = '';
  const runAt = /`+/g;
  while (pos < text.length) {
    runAt.lastIndex = pos;
    const open = runAt.exec(text);
    if (!open) break;
    const n = open[0].length;
    // Find the next run of exactly n backticks.
    const closeRe = new RegExp(`(?<!\`)\`{${n}}(?!\`)`, 'g');
    closeRe.lastIndex = open.index + n;
    const close = closeRe.exec(text);
    if (!close) {
      plain += text.slice(pos, open.index + n);
      pos = open.index + n;
      continue;
    }
    plain += text.slice(pos, open.index);
    if (plain) out.push({ code: false, text: plain });
    plain = '';
    out.push({ code: true, text: text.slice(open.index, close.index + n) });
    pos = close.index + n;
  }
  plain += text.slice(pos);
  if (plain) out.push({ code: false, text: plain });
  return out;
}

const EMAIL = /[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}/g;
const HANDLE =
  /(?<![\w@/.-])@([A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38})(\/[A-Za-z0-9_.-]*[A-Za-z0-9_-])?(?![A-Za-z0-9_-]|\.[A-Za-z0-9])/g;
const DECORATORS = new Set([
  'property',
  'staticmethod',
  'classmethod',
  'cached_property',
  'cache',
  'lru_cache',
  'functools',
  'jit',
  'njit',
  'vectorize',
  'guvectorize',
  'dataclass',
  'overload',
  'abstractmethod',
  'wraps',
  'contextmanager',
  'pytest',
  'cython',
  'setter',
  'deprecated',
  'final',
  'override',
  'total_ordering',
  'singledispatch',
]);

export class Anonymizer {
  readonly #handles = new Map<string, string>();

  /** The replacement of each handle seen so far (lower-cased handle → `@userN`). */
  get handles(): ReadonlyMap<string, string> {
    return this.#handles;
  }

  anonymize(markdown: string): string {
    return splitCode(markdown)
      .map((s) => (s.code ? s.text : this.#prose(s.text)))
      .join('');
  }

  #prose(text: string): string {
    return text.replace(EMAIL, '<email>').replace(HANDLE, (whole: string, name: string) => {
      if (DECORATORS.has(name.toLowerCase())) return whole;
      const key = whole.toLowerCase();
      let alias = this.#handles.get(key);
      if (!alias) {
        alias = `@user${this.#handles.size + 1}`;
        this.#handles.set(key, alias);
      }
      return alias;
    });
  }
}

/** One-shot anonymization (handles numbered within this text). */
export function anonymize(markdown: string): string {
  return new Anonymizer().anonymize(markdown);
}
