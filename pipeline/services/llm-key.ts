import type { LlmConfig } from '../config/schema.js';
import { missingCredential, type Credentials } from '../credentials.js';
import { ConfigError } from '../errors.js';

/** Sent to a local server that needs no key (vLLM, Ollama, llama.cpp accept any bearer token). */
export const PLACEHOLDER_API_KEY = 'sk-no-key-required';

/**
 * True when the base URL names this machine or a private network (loopback, RFC 1918, link-local,
 * IPv6 unique-local, `localhost`, `*.local`, `*.internal`): where local inference servers live.
 */
export function isLocalBaseUrl(baseUrl: string): boolean {
  let host: string;
  try {
    host = new URL(baseUrl).hostname.toLowerCase();
  } catch {
    return false;
  }
  host = host.replace(/^\[|\]$/g, '');
  if (host === 'localhost' || host.endsWith('.localhost') || host.endsWith('.local') || host.endsWith('.internal')) return true;
  if (host === '::1' || /^f[cd][0-9a-f]{2}:/.test(host) || host.startsWith('fe80:')) return true;
  const v4 = /^(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(host);
  if (!v4) return false;
  const [a, b] = [Number(v4[1]), Number(v4[2])];
  return a === 127 || a === 10 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168) || (a === 169 && b === 254);
}

export interface ResolvedKey {
  readonly apiKey: string;
  /** True when no OPENAI_API_KEY was set and the server is local. */
  readonly placeholder: boolean;
}

/**
 * The key the LLM adapter sends. Decision: OPENAI_API_KEY when set; otherwise a placeholder, but
 * only for a base URL on this machine or a private network (a local vLLM/Ollama needs no key);
 * otherwise a ConfigError naming the variable and what works without it. A local server that does
 * want a key answers 401, which stops the stage with the same advice.
 */
export function resolveLlmApiKey(llm: LlmConfig, credentials: Pick<Credentials, 'openaiApiKey'>): ResolvedKey {
  if (llm.mode === 'none') throw new ConfigError('llm: disabled (--llm none); no LLM call may be made', { reason: 'llm-disabled' });
  if (credentials.openaiApiKey) return { apiKey: credentials.openaiApiKey, placeholder: false };
  if (llm.baseUrl && isLocalBaseUrl(llm.baseUrl)) return { apiKey: PLACEHOLDER_API_KEY, placeholder: true };
  throw missingCredential(
    'OPENAI_API_KEY',
    `the LLM classifiers (llm.mode "openai", server ${llm.baseUrl ?? 'https://api.openai.com/v1'})`,
    'set OPENAI_API_KEY; or set OPENAI_BASE_URL to a local server that needs no key (loopback or private address); or run with --llm none (rules only: no key needed)',
  );
}
