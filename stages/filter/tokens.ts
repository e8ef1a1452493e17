import { createRequire } from 'node:module';
import { Tiktoken, type TiktokenBPE } from 'js-tiktoken/lite';

// The rank tables are large: loaded on the first exact count, not when the module loads.
const require = createRequire(import.meta.url);
const RANKS: Record<TokenizerName, string> = { o200k_base: 'js-tiktoken/ranks/o200k_base', cl100k_base: 'js-tiktoken/ranks/cl100k_base' };

export type TokenizerName = 'o200k_base' | 'cl100k_base';

const encoders = new Map<TokenizerName, Tiktoken>();

function encoder(name: TokenizerName): Tiktoken {
  let enc = encoders.get(name);
  if (!enc) {
    const ranks = require(RANKS[name]) as TiktokenBPE | { default: TiktokenBPE };
    enc = new Tiktoken('default' in ranks ? ranks.default : ranks);
    encoders.set(name, enc);
  }
  return enc;
}

/**
 * Tokens of a text with a real BPE tokenizer (js-tiktoken). Special-token text such as
 * `<|endoftext|>` inside a diff is counted as ordinary text, never rejected. Deterministic.
 */
export function countTokens(text: string, name: TokenizerName = 'o200k_base'): number {
  if (text.length === 0) return 0;
  return encoder(name).encode(text, [], []).length;
}

/**
 * Whether a text is within `limit` tokens, and its exact count when one was needed. A byte-level
 * BPE token covers at least one byte, so a text of no more UTF-8 bytes than the limit is within it
 * without counting (`tokens: null`); only longer texts are tokenized.
 */
export function withinTokens(
  text: string | TextSource,
  limit: number,
  name: TokenizerName = 'o200k_base',
): { within: boolean; tokens: number | null; bytes: number } {
  const source = typeof text === 'string' ? textSource(text) : text;
  if (source.bytes <= limit) return { within: true, tokens: null, bytes: source.bytes };
  const tokens = countTokens(source.text(), name);
  return { within: tokens <= limit, tokens, bytes: source.bytes };
}

/** A text known by its size, read only when needed (a stored diff). */
export interface TextSource {
  readonly bytes: number;
  text(): string;
}

export function textSource(text: string): TextSource {
  return { bytes: Buffer.byteLength(text, 'utf8'), text: () => text };
}
