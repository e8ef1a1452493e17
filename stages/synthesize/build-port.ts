import type { AgentTool } from '../../pipeline/services/llm-port.js';
import type { AttemptRun, CloneSource } from '../../pipeline/services/environments/environment.js';
import type { GitTree } from './git-tree.js';
import type { PythonChoice } from './python-version.js';
import type { RepoFacts } from './repo-facts.js';
import type { TargetRequest } from './target.js';

/**
 * The one seam where synthesize uses containers. The stage's strategy (strategy.ts, driven by
 * synthesis.ts) talks only to this interface; docker-build-port.ts implements it against the
 * Docker engine, tests implement it with canned outcomes (as validate's runner-port.ts).
 */

/** Everything known about the commit before any script is tried. */
export interface CommitTarget {
  readonly repo: string;
  readonly sha: string;
  readonly commitDate: string;
  readonly clone: CloneSource;
  readonly baseImage: string;
  readonly toolchainImage: string;
  /** perfmine's clone (later history included): read by the GitHub source's tree, never built on. */
  readonly repoImage: string;
  /** The commit sealed at /repo (source-tier.ts): every build of the commit starts from it. */
  readonly sourceImage: string;
  readonly facts: RepoFacts;
  readonly asvConfigPath: string;
  readonly benchmarkDir: string | null;
  readonly python: PythonChoice;
  readonly tree: GitTree;
}

/** What is known of a commit before any script is tried, or why no script can be tried. */
export type PreparedTarget =
  | { readonly kind: 'ready'; readonly target: CommitTarget }
  | { readonly kind: 'no-asv-config' }
  | { readonly kind: 'python-unavailable'; readonly reason: string };

export interface BuildPort {
  /** Before a stage's items: the engine answers, the base image has what verification needs, a crashed run's leftovers are removed. */
  preflight(signal: AbortSignal): Promise<void>;
  /** The commit's images, facts, asv configuration and Python; or why none can be built (no asv configuration, no Python it allows). */
  prepareTarget(request: TargetRequest, signal: AbortSignal): Promise<PreparedTarget>;
  /**
   * Checks the script, builds the commit's image with it and verifies the image. The image
   * (`run.image`, when it built) is transient until `keep` or `release`.
   */
  buildAndVerify(target: CommitTarget, script: string, signal: AbortSignal): Promise<AttemptRun>;
  /** Keeps a verified attempt's image as the commit's environment; returns its lasting name. */
  keep(target: CommitTarget, image: string): Promise<string>;
  /** Removes an attempt's image. */
  release(image: string): Promise<void>;
  /** The agent's tools (list_tree, read_file, probe_repo, try_import); try_import uses the image of the last attempt that built. */
  agentTools(target: CommitTarget, lastImage: () => string | null): AgentTool[];
}
