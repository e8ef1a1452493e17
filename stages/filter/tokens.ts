import { Tiktoken } from 'js-tiktoken/lite';
import cl100k from 'js-tiktoken/ranks/cl100k_base';
import o200k from 'js-tiktoken/ranks/o200k_base';

export type TokenizerName = 'o200k_base' | 'cl100k_base';

const encoders = new Map<TokenizerName, Tiktoken>();

function encoder(name: TokenizerName): Tiktoken {
  let enc = encoders.get(name);
  if (!enc) {
    enc = new Tiktoken(name === 'o200k_base' ? o200k : cl100k);
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
