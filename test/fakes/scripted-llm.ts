import { ItemError } from '../../pipeline/errors.js';
import { loadPrompt, renderPrompt } from '../../pipeline/prompts.js';
import type { AgentRequest, AgentTool, LlmResult, LlmService, StructuredRequest } from '../../pipeline/services/llm-port.js';

/**
 * A scripted stand-in for the LLM port: answers come from rules that read the request's inputs
 * (e.g. the failure log the build agent is shown), so a test decides what a "model" would write
 * when shown a given failure. The rules are plain data over (prompt, inputs); the HTTP loopback
 * OpenAI server can serve the same rules, so swapping the transport leaves the tests' rules as
 * they are.
 *
 * Like the real adapter it renders the prompt file (so missing inputs fail), validates every
 * answer with the request's zod schema, accounts tokens (about 4 characters per token) against
 * the request's TokenBudget, throwing an ItemError when it would be exceeded, and runs the tool
 * calls a rule asks for through the request's AgentTools.
 */
export interface ScriptedRequest {
  readonly prompt: string;
  readonly inputs: Readonly<Record<string, string>>;
  readonly model: string;
}

export interface ScriptedRule {
  readonly name: string;
  readonly when: (request: ScriptedRequest) => boolean;
  /** Tool calls made before answering (their results are recorded and passed to `answer`). */
  readonly toolCalls?: readonly { readonly name: string; readonly args: unknown }[];
  readonly answer: (request: ScriptedRequest, toolResults: readonly ToolResult[]) => unknown;
}

export interface ToolResult {
  readonly name: string;
  readonly args: unknown;
  readonly result: string;
}

export interface ScriptedCall extends ScriptedRequest {
  readonly kind: 'structured' | 'agent';
  readonly rule: string;
  readonly toolResults: readonly ToolResult[];
  readonly promptTokens: number;
  readonly completionTokens: number;
}

export interface ScriptedLlmOptions {
  readonly primaryModel?: string;
  readonly fallbackModel?: string;
}

export class ScriptedLlm implements LlmService {
  readonly calls: ScriptedCall[] = [];
  readonly #rules: readonly ScriptedRule[];
  readonly #primary: string;
  readonly #fallback: string;

  constructor(rules: readonly ScriptedRule[], options: ScriptedLlmOptions = {}) {
    this.#rules = rules;
    this.#primary = options.primaryModel ?? 'scripted-primary';
    this.#fallback = options.fallbackModel ?? 'scripted-fallback';
  }

  structured<T>(request: StructuredRequest<T>): Promise<LlmResult<T>> {
    return this.#answer('structured', request, []);
  }

  agent<T>(request: AgentRequest<T>): Promise<LlmResult<T>> {
    return this.#answer('agent', request, request.tools);
  }

  async #answer<T>(kind: 'structured' | 'agent', request: StructuredRequest<T>, tools: readonly AgentTool[]): Promise<LlmResult<T>> {
    const rendered = renderPrompt(loadPrompt(request.prompt), request.inputs);
    const model = request.models === 'fallback' ? this.#fallback : this.#primary;
    const req: ScriptedRequest = { prompt: request.prompt, inputs: request.inputs, model };
    const rule = this.#rules.find((r) => r.when(req));
    if (!rule) throw new ItemError('scripted-llm-no-rule', `the scripted LLM has no rule for this ${request.prompt} request`);
    const toolResults: ToolResult[] = [];
    for (const call of rule.toolCalls ?? []) {
      const tool = tools.find((t) => t.name === call.name);
      if (!tool) throw new Error(`scripted rule ${rule.name} calls unknown tool ${call.name}`);
      toolResults.push({ name: call.name, args: call.args, result: await tool.run(call.args, request.signal) });
    }
    const raw = rule.answer(req, toolResults);
    const promptTokens = Math.ceil(
      (rendered.system.length + rendered.user.length + toolResults.reduce((a, t) => a + t.result.length, 0)) / 4,
    );
    const completionTokens = Math.ceil(JSON.stringify(raw).length / 4);
    if (request.budget) {
      if (request.budget.used + promptTokens + completionTokens > request.budget.limit) {
        throw new ItemError('token-budget-exceeded', `token budget of ${request.budget.limit} would be exceeded`);
      }
      request.budget.used += promptTokens + completionTokens;
    }
    const value = request.schema.parse(raw);
    this.calls.push({ ...req, kind, rule: rule.name, toolResults, promptTokens, completionTokens });
    return { value, model, usage: { promptTokens, completionTokens, costUsd: 0, requests: 1, cacheHits: 0 } };
  }
}
