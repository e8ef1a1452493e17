import type { Window } from './window.js';

/** Where pull requests come from: the GitHub API, or a local clone read with git. */
export type Source = { readonly kind: 'github' } | { readonly kind: 'git'; readonly path: string };

export function parseSource(spec: string): Source {
  if (spec === 'github') return { kind: 'github' };
  if (spec.startsWith('git:') && spec.length > 4) return { kind: 'git', path: spec.slice(4) };
  throw new RangeError(`expected "github" or "git:PATH", got "${spec}"`);
}

export function formatSource(source: Source): string {
  return source.kind === 'github' ? 'github' : `git:${source.path}`;
}

/** What a command asked for: the window, the repositories and pull requests, and where from. */
export interface Scope {
  readonly window: Window;
  /** `--repo`; empty means every repository the upstream stage produced. */
  readonly repos: readonly string[];
  /** `--pr`; empty means every pull request. */
  readonly prs: readonly number[];
  readonly source: Source;
}
