import { z } from 'zod';
import { describeFailure, type Failure } from '../../pipeline/services/environments/failure.js';
import { markCut } from '../../pipeline/services/tail.js';
import { formatFacts, type RepoFacts } from './repo-facts.js';
import type { EnvironmentLock } from '../../pipeline/concepts/records/environment-lock.js';
import { describeLock } from '../../pipeline/services/environments/lock.js';

/** The agent's answer (validated at the boundary). */
export const buildAgentAnswerSchema = z.object({
  reasoning: z.string(),
  script: z.string().min(1),
});
export type BuildAgentAnswer = z.infer<typeof buildAgentAnswerSchema>;

/** A failed attempt as the agent is told about it. */
export interface AttemptNote {
  readonly source: string;
  readonly detail: string | null;
  readonly failure: Failure | null;
}

export interface AgentSituation {
  readonly repo: string;
  readonly sha: string;
  readonly pythonVersion: string;
  readonly offline: boolean;
  readonly buildNetwork: 'index' | 'bridge' | 'none';
  /** With buildNetwork `index`: the time machine's cutoff (ISO 8601; null: none) and upstream. */
  readonly index?: { readonly cutoff: string | null; readonly upstream: string } | null;
  /** The nearest commit with a verified build, and its lock: a hint of the dependencies that worked then. */
  readonly neighbourLock?: { readonly sha: string; readonly commitDate: string; readonly lock: EnvironmentLock } | null;
  readonly facts: RepoFacts;
  readonly lastScript: string | null;
  readonly lastFailure: Failure | null;
  readonly stdoutTail: string;
  readonly stderrTail: string;
  readonly history: readonly AttemptNote[];
}

/** Keeps the end of a log: the end is where builds say what went wrong. */
export function tailOf(text: string, chars: number): string {
  if (text.length <= chars) return text;
  return markCut(text.slice(-chars), text.length - chars);
}

function networkText(s: AgentSituation): string {
  if (s.buildNetwork === 'none') return 'none (no package index: use only what the image has)';
  if (s.buildNetwork === 'index') {
    const upstream = s.index?.upstream ?? 'the configured package index';
    return s.index?.cutoff
      ? `only the package index, as it was on ${s.index.cutoff} (a time machine of ${upstream}): pip and uv install releases uploaded before that date, nothing newer, and nothing else is reachable`
      : `only the package index (${upstream}, no date cutoff); nothing else is reachable`;
  }
  return s.offline ? 'available, but PyPI is not (install with --no-build-isolation --no-deps)' : 'available (PyPI reachable)';
}

/** The prompt inputs of prompts/build-agent.md. Pure. */
export function agentInputs(s: AgentSituation, tailChars = 8000): Record<string, string> {
  const history =
    s.history.length === 0
      ? '(none)'
      : s.history
          .map(
            (h, i) => `${i + 1}. ${h.source}${h.detail ? ` (${h.detail})` : ''}: ${h.failure ? describeFailure(h.failure) : 'not built'}`,
          )
          .join('\n');
  return {
    repository: s.repo,
    commit: s.sha,
    python_version: s.pythonVersion,
    network: networkText(s),
    dependency_hint: s.neighbourLock
      ? [
          `The nearest commit with a verified build, ${s.neighbourLock.sha.slice(0, 12)} (committed ${s.neighbourLock.commitDate}), ended up with:`,
          ...describeLock(s.neighbourLock.lock).map((l) => `  ${l}`),
        ].join('\n')
      : '(no verified build of a nearby commit yet)',
    repo_facts: formatFacts(s.facts),
    failure_stage: s.lastFailure ? `${s.lastFailure.step}` : 'none',
    failure_summary: s.lastFailure ? describeFailure(s.lastFailure) : 'no script has been tried yet',
    stderr_tail: tailOf(s.stderrTail, tailChars) || '(empty)',
    stdout_tail: tailOf(s.stdoutTail, tailChars) || '(empty)',
    last_script: s.lastScript ?? '(none)',
    attempt_history: history,
  };
}
