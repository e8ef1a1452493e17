import { readdirSync } from 'node:fs';
import { loadPrompt, PROMPTS_DIR, type Prompt } from '../../pipeline/prompts.js';
import { reply, startLlmServer, type FakeLlmServer, type RecordedRequest } from './llm-server.js';
import type { ScriptedCall, ScriptedRequest, ScriptedRule, ToolResult } from './scripted-llm.js';

/**
 * Serves scripted rules (test/fakes/scripted-llm.ts) through the loopback OpenAI-compatible
 * server, so that the real adapter and the real `openai` client are exercised over HTTP. The
 * server sees only rendered messages; the prompt and its inputs are recovered from the first user
 * message by matching it against each prompt file's user template. A rule's tool calls are made
 * one per turn; when all have been answered, the rule's answer is sent as the JSON content.
 * `calls` records one entry per conversation, as ScriptedLlm does.
 */
export interface RulesServer {
  readonly server: FakeLlmServer;
  readonly url: string;
  readonly calls: ScriptedCall[];
  close(): Promise<void>;
}

interface Template {
  readonly prompt: Prompt;
  readonly pattern: RegExp;
}

function templates(): Template[] {
  return readdirSync(PROMPTS_DIR)
    .filter((f) => f.endsWith('.md'))
    .map((f) => loadPrompt(f.slice(0, -3)))
    .map((prompt) => {
      const parts = prompt.user.split(/\{\{(\w+)\}\}/);
      let source = '^';
      const seen = new Set<string>();
      parts.forEach((part, i) => {
        if (i % 2 === 0) source += part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
        else if (seen.has(part)) source += `\\k<${part}>`;
        else {
          seen.add(part);
          source += `(?<${part}>[\\s\\S]*?)`;
        }
      });
      return { prompt, pattern: new RegExp(`${source}$`) };
    });
}

/** The prompt and inputs behind a rendered user message, or null. */
export function recoverInputs(
  user: string,
  list: readonly Template[] = templates(),
): { prompt: string; inputs: Record<string, string> } | null {
  for (const t of list) {
    const m = t.pattern.exec(user);
    if (m) return { prompt: t.prompt.name, inputs: { ...(m.groups ?? {}) } };
  }
  return null;
}

function toolResultsOf(request: RecordedRequest): ToolResult[] {
  const results: ToolResult[] = [];
  for (const message of request.messages) {
    for (const call of message.toolCalls) {
      const answer = request.messages.find((m) => m.role === 'tool' && m.toolCallId === call.id);
      if (!answer) continue;
      let args: unknown = call.arguments;
      try {
        args = JSON.parse(call.arguments);
      } catch {
        // keep the raw text
      }
      results.push({ name: call.name, args, result: answer.content });
    }
  }
  return results;
}

const tokens = (text: string) => Math.max(1, Math.ceil(text.length / 4));

export async function serveRulesOverHttp(
  rules: readonly ScriptedRule[],
  options: { models?: readonly string[] } = {},
): Promise<RulesServer> {
  const list = templates();
  const calls: ScriptedCall[] = [];
  const server = await startLlmServer({ ...(options.models ? { models: options.models } : {}) });
  server.script((request) => {
    const firstUser = request.messages.find((m) => m.role === 'user')?.content ?? '';
    const recovered = recoverInputs(firstUser, list);
    if (!recovered) return reply.serverError(500, 'rules-over-http: the user message matches no prompt template');
    const scripted: ScriptedRequest = { prompt: recovered.prompt, inputs: recovered.inputs, model: request.model };
    const rule = rules.find((r) => r.when(scripted));
    if (!rule) return reply.serverError(500, 'rules-over-http: no rule matches');
    const done = toolResultsOf(request);
    const next = rule.toolCalls?.[done.length];
    const usage = { promptTokens: tokens(request.text), completionTokens: 50 };
    if (next) return { ...reply.toolCall(next.name, next.args), usage };
    const answer = rule.answer(scripted, done);
    calls.push({
      ...scripted,
      kind: request.hasTools ? 'agent' : 'structured',
      rule: rule.name,
      toolResults: done,
      promptTokens: usage.promptTokens,
      completionTokens: usage.completionTokens,
    });
    return reply.json(answer, usage);
  });
  return { server, url: server.url, calls, close: () => server.close() };
}
