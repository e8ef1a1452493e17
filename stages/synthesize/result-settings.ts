import type { Config } from '../../pipeline/config/schema.js';
import {
  discoveryOf,
  indexResultSettings,
  wheelhouseOf,
  type IndexResultSettings,
} from '../../pipeline/services/environments/environment.js';
import type { BenchmarkDiscovery } from '../../pipeline/services/environments/verification.js';

/** What of the configuration a commit's environment depends on (spread into its input, index.ts). */
export interface SynthesizeSettings {
  readonly baseImage: string;
  readonly wheelhouse: string | null;
  readonly discovery: BenchmarkDiscovery;
  readonly offline: boolean;
  readonly buildNetwork: 'index' | 'bridge' | 'none';
  /** What the index time machine serves (with buildNetwork `index`): upstream, cutoff, slack, files without an upload time. */
  readonly index: IndexResultSettings | null;
  readonly pythonVersions: string[];
  readonly agent: string | null;
  readonly reuse: boolean;
}

/**
 * The settings that change the environment synthesize builds and verifies for a commit: the
 * image it starts from, the asv wheelhouse (engine asv only), how verification discovers the
 * benchmarks (the harness for engine perfmine, else `synthesize.asv.discover`), the templates'
 * offline mode, the build network and what the index time machine serves through it (upstream,
 * cutoff, slack, files without an upload time; not its time limits and retries), the Pythons offered, the agent's models (`llm.mode`,
 * `llm.model`, and `llm.fallbackModel` when `synthesize.agent.fallback`) and whether cached and
 * neighbouring scripts are tried.
 *
 * Left out, deliberately: time limits (`synthesize.timeouts.*`), container limits
 * (`docker.cpus`, `memoryMb`, `pidsLimit`, `diskMb`), the agent's budgets (`roundsPerModel`,
 * `maxTurns`, `tokenBudget`) and `neighbours`. They bound the search for a script that builds
 * and verifies; a verified environment stays what it is under other bounds. A commit dropped as
 * `no-verified-script` is searched again with `perfmine stage synthesize --force` after they are
 * raised. Putting them in would rebuild every commit, and re-measure every candidate downstream
 * (validate's input holds synthesize's output), whenever a bound moved. `tailChars`, scheduling
 * and logging change nothing built. Pure (test/run/input-hashes.test.ts).
 */
export function synthesizeResultSettings(config: Config): SynthesizeSettings {
  const s = config.synthesize;
  return {
    baseImage: config.docker.baseImage,
    wheelhouse: wheelhouseOf(config),
    discovery: discoveryOf(config),
    offline: s.offline,
    buildNetwork: s.buildNetwork,
    index: indexResultSettings(config),
    pythonVersions: s.pythonVersions,
    agent: agentSpec(config),
    reuse: s.reuse,
  };
}

/** `primary[,fallback]` model names, or null when no agent runs. */
function agentSpec(config: Config): string | null {
  if (config.llm.mode === 'none') return null;
  return [config.llm.model, config.synthesize.agent.fallback ? config.llm.fallbackModel : undefined].filter(Boolean).join(',');
}
