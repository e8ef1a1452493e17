/**
 * Near-verbatim checking of extracted sentences. Pure.
 *
 * Definition. Text is normalized by Unicode NFKC and lower-casing, then split into word tokens:
 * maximal runs of letters, digits and `_` (punctuation, markup and whitespace are not tokens). For
 * a sentence S (its tokens, |S| = m ≥ 1) and a source T (its tokens, |T| = n), with window length
 * w = max(m, ⌈m · windowFactor⌉):
 *
 *   ratio(S, T) = max over i of  LCS(S, T[i .. i+w)) / m
 *
 * where LCS is the length of the longest common subsequence of the two token sequences and the
 * window is cut at the end of T. The ratio is 1 for a sentence copied word for word (whatever its
 * punctuation or case) and for one that leaves source words out; it drops by 1/m for every word
 * of the sentence that is changed, added or moved out of order; it is low for a
 * sentence whose words occur in the source only far apart: the window keeps a long source from
 * matching any sentence as a scattered subsequence. A sentence without tokens has ratio 0.
 */

export interface SourceIndex {
  readonly tokens: Int32Array;
  readonly vocabulary: ReadonlyMap<string, number>;
}

export function tokenize(text: string): string[] {
  return (
    text
      .normalize('NFKC')
      .toLowerCase()
      .match(/[\p{L}\p{N}_]+/gu) ?? []
  );
}

export function indexSource(text: string): SourceIndex {
  const vocabulary = new Map<string, number>();
  const words = tokenize(text);
  const tokens = new Int32Array(words.length);
  for (const [i, w] of words.entries()) {
    let id = vocabulary.get(w);
    if (id === undefined) {
      id = vocabulary.size;
      vocabulary.set(w, id);
    }
    tokens[i] = id;
  }
  return { tokens, vocabulary };
}

/** Length of the longest common subsequence of a and b[from, to). */
export function lcsLength(a: ArrayLike<number>, b: ArrayLike<number>, from = 0, to = b.length): number {
  const m = a.length;
  if (m === 0 || to <= from) return 0;
  let prev = new Int32Array(m + 1);
  let curr = new Int32Array(m + 1);
  for (let j = from; j < to; j++) {
    const bj = b[j]!;
    for (let i = 1; i <= m; i++) {
      curr[i] = a[i - 1] === bj ? prev[i - 1]! + 1 : Math.max(prev[i]!, curr[i - 1]!);
    }
    [prev, curr] = [curr, prev];
  }
  return prev[m]!;
}

export function verbatimRatio(sentence: string, source: SourceIndex | string, windowFactor = 1.5): number {
  const index = typeof source === 'string' ? indexSource(source) : source;
  const words = tokenize(sentence);
  const m = words.length;
  const t = index.tokens;
  const n = t.length;
  if (m === 0 || n === 0) return 0;
  const s = Int32Array.from(words, (w) => index.vocabulary.get(w) ?? -1);
  const inSentence = new Set(s);
  const w = Math.max(m, Math.ceil(m * windowFactor));
  // prefix[i]: tokens of T[0, i) that occur in S, an upper bound of any window's LCS.
  const prefix = new Int32Array(n + 1);
  for (let i = 0; i < n; i++) prefix[i + 1] = prefix[i]! + (inSentence.has(t[i]!) ? 1 : 0);
  let best = 0;
  for (let i = 0; i < n && best < m; i++) {
    // A window that starts on a token absent from S matches no more than the one starting after it.
    if (!inSentence.has(t[i]!)) continue;
    const end = Math.min(n, i + w);
    if (Math.min(m, prefix[end]! - prefix[i]!) <= best) continue;
    best = Math.max(best, lcsLength(s, t, i, end));
  }
  return best / m;
}

/**
 * Sentences of an extracted passage: split at blank lines, at list items, and after `.`, `!` or
 * `?` followed by whitespace and a capital letter, digit, quote, backtick or bracket. Sentences
 * without any word token are left out.
 */
export function splitSentences(text: string): string[] {
  return text
    .split(/\n\s*\n|\n(?=\s*(?:[-*+]|\d+[.)])\s)|(?<=[.!?])\s+(?=[\p{Lu}\p{N}"'`(\[])/u)
    .map((s) => s.trim())
    .filter((s) => tokenize(s).length > 0);
}

export interface VerbatimResult {
  /** Passages rebuilt from their sentences that passed (passages left without one are gone). */
  readonly kept: string[];
  /** Sentences that failed, with their ratio. */
  readonly dropped: { readonly sentence: string; readonly ratio: number }[];
}

/** Keeps the sentences of each passage whose ratio against the source reaches the threshold. */
export function keepVerbatim(passages: readonly string[], source: SourceIndex, threshold: number, windowFactor: number): VerbatimResult {
  const kept: string[] = [];
  const dropped: { sentence: string; ratio: number }[] = [];
  for (const passage of passages) {
    const good: string[] = [];
    for (const sentence of splitSentences(passage)) {
      const ratio = verbatimRatio(sentence, source, windowFactor);
      if (ratio >= threshold) good.push(sentence);
      else dropped.push({ sentence, ratio });
    }
    if (good.length > 0) kept.push(joinSentences(good));
  }
  return { kept, dropped };
}

/** Sentences back into a passage: blocks (multi-line, list items, code fences) on their own lines. */
function joinSentences(sentences: readonly string[]): string {
  const block = (s: string) => s.includes('\n') || /^(?:[-*+]|\d+[.)]|```|~~~)/.test(s);
  let out = sentences[0] ?? '';
  for (let i = 1; i < sentences.length; i++) {
    const s = sentences[i]!;
    out += block(s) || block(sentences[i - 1]!) ? `\n\n${s}` : ` ${s}`;
  }
  return out;
}
