/** Shell quoting for the scripts perfmine runs in containers. Pure. */

/** One word for POSIX sh: single-quoted, with embedded single quotes closed and escaped. */
export function shellQuote(word: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(word)) return word;
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

export function shellJoin(words: readonly string[]): string {
  return words.map(shellQuote).join(' ');
}
