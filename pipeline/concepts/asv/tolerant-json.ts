/**
 * JSON as Python's `json` module reads and writes it: standard JSON plus the bare tokens `NaN`,
 * `Infinity` and `-Infinity` as values. asv's results files contain them (a skipped benchmark is
 * `NaN`), and `JSON.parse` rejects them.
 *
 * The three tokens are accepted only where a value may stand, never inside strings (a parameter
 * named "NaN" stays a string). Any other bare word (`nan`, `inf`, `-NaN`, `undefined`) is an
 * error that names the field where it stood, so malformed files are reported precisely.
 */

export type JsonPath = readonly (string | number)[];

/** A syntax error with the field it occurred in and its line and column (1-based). */
export class TolerantJsonError extends Error {
  readonly path: JsonPath;
  readonly line: number;
  readonly column: number;
  readonly detail: string;

  constructor(detail: string, path: JsonPath, line: number, column: number) {
    super(`${formatJsonPath(path)}: ${detail} (line ${line}, column ${column})`);
    this.name = 'TolerantJsonError';
    this.detail = detail;
    this.path = path;
    this.line = line;
    this.column = column;
  }
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** `results["mod.f"][3]`-style rendering of a path; the empty path is `(top level)`. */
export function formatJsonPath(path: JsonPath): string {
  if (path.length === 0) return '(top level)';
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else if (out === '' && IDENTIFIER.test(part)) out = part;
    else if (IDENTIFIER.test(part)) out += `.${part}`;
    else out += `[${JSON.stringify(part)}]`;
  }
  return out;
}

const MAX_DEPTH = 256;
const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
const WORD = /[A-Za-z_$][A-Za-z0-9_$]*/y;

class Reader {
  private pos = 0;
  private readonly path: (string | number)[] = [];

  constructor(private readonly text: string) {}

  parseDocument(): unknown {
    this.skipSpace();
    const value = this.parseValue(0);
    this.skipSpace();
    if (this.pos < this.text.length) this.fail(`unexpected ${this.describeHere()} after the end of the document`);
    return value;
  }

  private fail(detail: string): never {
    let line = 1;
    let lineStart = 0;
    for (let i = 0; i < this.pos && i < this.text.length; i++) {
      if (this.text.charCodeAt(i) === 10) {
        line++;
        lineStart = i + 1;
      }
    }
    throw new TolerantJsonError(detail, [...this.path], line, this.pos - lineStart + 1);
  }

  private describeHere(): string {
    if (this.pos >= this.text.length) return 'end of input';
    WORD.lastIndex = this.pos;
    const word = WORD.exec(this.text);
    if (word) return `token '${word[0]}'`;
    return `character ${JSON.stringify(this.text[this.pos])}`;
  }

  private skipSpace(): void {
    const t = this.text;
    while (this.pos < t.length) {
      const c = t.charCodeAt(this.pos);
      if (c === 32 || c === 10 || c === 13 || c === 9) this.pos++;
      else break;
    }
  }

  private parseValue(depth: number): unknown {
    if (depth > MAX_DEPTH) this.fail(`nesting deeper than ${MAX_DEPTH} levels`);
    const c = this.text.charCodeAt(this.pos);
    if (c === 123 /* { */) return this.parseObject(depth);
    if (c === 91 /* [ */) return this.parseArray(depth);
    if (c === 34 /* " */) return this.parseString();
    if (c === 45 /* - */ || (c >= 48 && c <= 57)) return this.parseNumber();
    return this.parseWord();
  }

  private parseWord(): unknown {
    WORD.lastIndex = this.pos;
    const match = WORD.exec(this.text);
    if (!match) this.fail(`unexpected ${this.describeHere()} where a value was expected`);
    const word = match[0];
    let value: unknown;
    switch (word) {
      case 'true':
        value = true;
        break;
      case 'false':
        value = false;
        break;
      case 'null':
        value = null;
        break;
      case 'NaN':
        value = Number.NaN;
        break;
      case 'Infinity':
        value = Number.POSITIVE_INFINITY;
        break;
      default:
        this.fail(`unexpected token '${word}' (only true, false, null, NaN, Infinity and -Infinity are allowed)`);
    }
    this.pos += word.length;
    return value;
  }

  private parseNumber(): number {
    if (this.text.startsWith('-Infinity', this.pos)) {
      WORD.lastIndex = this.pos + 1;
      const word = WORD.exec(this.text)?.[0];
      if (word === 'Infinity') {
        this.pos += 9;
        return Number.NEGATIVE_INFINITY;
      }
    }
    NUMBER.lastIndex = this.pos;
    const match = NUMBER.exec(this.text);
    if (!match || match[0] === '-') {
      this.pos++;
      WORD.lastIndex = this.pos;
      const word = WORD.exec(this.text)?.[0];
      this.pos--;
      this.fail(word ? `unexpected token '-${word}' (only -Infinity is allowed)` : `malformed number`);
    }
    this.pos += match[0].length;
    return Number(match[0]);
  }

  private parseString(): string {
    const t = this.text;
    const start = this.pos;
    let i = start + 1;
    let escaped = false;
    for (;;) {
      if (i >= t.length) this.fail('unterminated string');
      const c = t.charCodeAt(i);
      if (c === 34) break;
      if (c < 32) {
        this.pos = i;
        this.fail('control character in string');
      }
      if (c === 92 /* \ */) {
        escaped = true;
        i += 2;
        continue;
      }
      i++;
    }
    this.pos = i + 1;
    if (!escaped) return t.slice(start + 1, i);
    try {
      return JSON.parse(t.slice(start, i + 1)) as string;
    } catch {
      this.pos = start;
      return this.fail('invalid escape sequence in string');
    }
  }

  private parseArray(depth: number): unknown[] {
    this.pos++;
    const out: unknown[] = [];
    this.skipSpace();
    if (this.text.charCodeAt(this.pos) === 93 /* ] */) {
      this.pos++;
      return out;
    }
    for (;;) {
      this.path.push(out.length);
      this.skipSpace();
      out.push(this.parseValue(depth + 1));
      this.skipSpace();
      this.path.pop();
      const c = this.text.charCodeAt(this.pos);
      if (c === 44 /* , */) {
        this.pos++;
        continue;
      }
      if (c === 93) {
        this.pos++;
        return out;
      }
      this.path.push(out.length - 1);
      this.fail(`expected ',' or ']' but found ${this.describeHere()}`);
    }
  }

  private parseObject(depth: number): Record<string, unknown> {
    this.pos++;
    const out: Record<string, unknown> = {};
    this.skipSpace();
    if (this.text.charCodeAt(this.pos) === 125 /* } */) {
      this.pos++;
      return out;
    }
    for (;;) {
      this.skipSpace();
      if (this.text.charCodeAt(this.pos) !== 34) this.fail(`expected a property name but found ${this.describeHere()}`);
      const key = this.parseString();
      this.skipSpace();
      this.path.push(key);
      if (this.text.charCodeAt(this.pos) !== 58 /* : */) this.fail(`expected ':' but found ${this.describeHere()}`);
      this.pos++;
      this.skipSpace();
      const value = this.parseValue(depth + 1);
      // defineProperty: a "__proto__" key is data, not a prototype
      Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
      this.skipSpace();
      const c = this.text.charCodeAt(this.pos);
      if (c === 44) {
        this.path.pop();
        this.pos++;
        continue;
      }
      if (c === 125) {
        this.path.pop();
        this.pos++;
        return out;
      }
      this.fail(`expected ',' or '}' but found ${this.describeHere()}`);
    }
  }
}

/**
 * Parses JSON that may hold the bare values `NaN`, `Infinity` and `-Infinity` (as Python writes
 * them). Throws {@link TolerantJsonError} naming the field, line and column of the first problem.
 */
export function parseTolerantJson(text: string): unknown {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  return new Reader(body).parseDocument();
}
