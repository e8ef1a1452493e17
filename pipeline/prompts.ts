import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { InternalError } from './errors.js';
import { packagePath } from './package-root.js';
import { sha256 } from './hash.js';

/**
 * Prompts live in `prompts/<name>.md`, and nowhere else. A prompt file is markdown:
 *
 *   ---                                (front matter: the signature)
 *   name: perf-intent
 *   inputs: problem_description, diff, file_changes
 *   outputs: reasoning (string), label (YES | NO)
 *   ---
 *   ## system
 *   ...instructions...
 *   ## user
 *   ...text with {{problem_description}} placeholders...
 *
 * `## system` and `## user` sections become chat messages; `{{name}}` is replaced by the input
 * of that name (every declared input must be given, and every placeholder declared).
 */
export const PROMPTS_DIR = packagePath('prompts');

export interface Prompt {
  readonly name: string;
  readonly inputs: readonly string[];
  readonly outputs: string;
  readonly system: string;
  readonly user: string;
  /** sha256 of the whole file: part of every LLM cache key, so editing a prompt re-asks. */
  readonly hash: string;
}

const cache = new Map<string, Prompt>();

export function loadPrompt(name: string, dir = PROMPTS_DIR): Prompt {
  const path = join(dir, `${name}.md`);
  const hit = cache.get(path);
  if (hit) return hit;
  const text = readFileSync(path, 'utf8');
  const prompt = parsePrompt(name, text);
  cache.set(path, prompt);
  return prompt;
}

export function parsePrompt(name: string, text: string): Prompt {
  const fm = /^---\n([\s\S]*?)\n---\n([\s\S]*)$/.exec(text);
  if (!fm) throw new InternalError('bad-prompt', `prompts/${name}.md: missing front matter (--- ... ---)`);
  const meta = new Map<string, string>();
  for (const line of fm[1]!.split('\n')) {
    const m = /^(\w+):\s*(.*)$/.exec(line.trim());
    if (m) meta.set(m[1]!, m[2]!.trim());
  }
  const inputs = (meta.get('inputs') ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const sections = splitSections(fm[2]!);
  const system = sections.get('system');
  const user = sections.get('user');
  if (system === undefined || user === undefined)
    throw new InternalError('bad-prompt', `prompts/${name}.md: needs "## system" and "## user" sections`);
  const used = new Set([...`${system}\n${user}`.matchAll(/\{\{(\w+)\}\}/g)].map((m) => m[1]!));
  const undeclared = [...used].filter((u) => !inputs.includes(u));
  if (undeclared.length > 0)
    throw new InternalError('bad-prompt', `prompts/${name}.md: placeholders not declared as inputs: ${undeclared.join(', ')}`);
  return { name: meta.get('name') ?? name, inputs, outputs: meta.get('outputs') ?? '', system, user, hash: sha256(text) };
}

function splitSections(body: string): Map<string, string> {
  const out = new Map<string, string>();
  let current: string | null = null;
  let lines: string[] = [];
  const flush = () => {
    if (current !== null) out.set(current, lines.join('\n').trim());
  };
  for (const line of body.split('\n')) {
    const m = /^## (system|user)\s*$/.exec(line);
    if (m) {
      flush();
      current = m[1]!;
      lines = [];
    } else if (current !== null) lines.push(line);
  }
  flush();
  return out;
}

/** Fills the placeholders; every declared input must be present. Pure. */
export function renderPrompt(prompt: Prompt, inputs: Readonly<Record<string, string>>): { system: string; user: string } {
  const missing = prompt.inputs.filter((i) => inputs[i] === undefined);
  if (missing.length > 0) throw new InternalError('bad-prompt-inputs', `prompt ${prompt.name}: missing inputs ${missing.join(', ')}`);
  const fill = (text: string) => text.replace(/\{\{(\w+)\}\}/g, (_, key: string) => inputs[key] ?? '');
  return { system: fill(prompt.system), user: fill(prompt.user) };
}
