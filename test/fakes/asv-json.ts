/**
 * Parses asv's JSON, which may hold the bare tokens NaN, Infinity and -Infinity (Python's json
 * writes them; JSON.parse rejects them). Test helper only: the real parser lives in
 * pipeline/concepts/asv/.
 */
export function parseAsvJson(text: string): unknown {
  let out = '';
  let inString = false;
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i]!;
    if (inString) {
      out += c;
      if (c === '\\') {
        out += text[i + 1] ?? '';
        i += 1;
      } else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') {
      inString = true;
      out += c;
      continue;
    }
    const rest = text.slice(i, i + 9);
    if (rest.startsWith('NaN')) {
      out += '"\\u0000NaN"';
      i += 2;
    } else if (rest.startsWith('-Infinity')) {
      out += '"\\u0000-Infinity"';
      i += 8;
    } else if (rest.startsWith('Infinity')) {
      out += '"\\u0000Infinity"';
      i += 7;
    } else out += c;
  }
  return JSON.parse(out, (_key, value: unknown) => {
    if (value === '\u0000NaN') return Number.NaN;
    if (value === '\u0000Infinity') return Number.POSITIVE_INFINITY;
    if (value === '\u0000-Infinity') return Number.NEGATIVE_INFINITY;
    return value;
  });
}
