import { sha256 } from '../../hash.js';

/** The largest build script accepted (an answer larger than this is not a build script). */
export const MAX_SCRIPT_CHARS = 32_000;

export type ScriptCheck = { readonly ok: true; readonly script: string } | { readonly ok: false; readonly problems: readonly string[] };

/**
 * Line endings normalized to `\n`, trailing whitespace of the file trimmed, one final newline,
 * and a bash shebang when there is none. Pure.
 */
export function normalizeScript(text: string): string {
  let script = text.replace(/\r\n?/g, '\n').replace(/\s+$/, '');
  if (!script.startsWith('#!')) script = `#!/usr/bin/env bash\n${script}`;
  return `${script}\n`;
}

export function scriptHash(script: string): string {
  return sha256(normalizeScript(script));
}

/**
 * The checks a build script must pass before it is built (bash -n runs separately): not empty,
 * no markdown fence (an answer pasted with its formatting), no literal `\n` (an answer with
 * escaped newlines, which bash would run as one line), not oversized, no NUL byte. Pure.
 */
export function checkScript(text: string): ScriptCheck {
  const problems: string[] = [];
  const body = text.replace(/^#!.*\n?/, '').trim();
  if (body.length === 0) problems.push('the script is empty');
  if (/^\s*(```|~~~)/m.test(text)) problems.push('the script contains a markdown code fence (```); write the bare script');
  if (text.includes('\\n'))
    problems.push(
      'the script contains a literal "\\n" (backslash n); use real line breaks, one command per line, and printf/echo without escapes',
    );
  if (text.length > MAX_SCRIPT_CHARS) problems.push(`the script has ${text.length} characters; the limit is ${MAX_SCRIPT_CHARS}`);
  if (text.includes('\u0000')) problems.push('the script contains a NUL byte');
  return problems.length > 0 ? { ok: false, problems } : { ok: true, script: normalizeScript(text) };
}
