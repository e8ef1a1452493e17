import type { Config } from '../../pipeline/config/schema.js';
import {
  discoveryOf,
  indexResultSettings,
  wheelhouseOf,
  type IndexResultSettings,
} from '../../pipeline/services/environments/environment.js';
import type { BenchmarkDiscovery } from '../../pipeline/services/environments/verification.js';
import type { HarnessConfig, ValidateConfig } from './config.js';
import { repositoryEnvironment } from '../../pipeline/config/repository-environment.js';

/** The settings both engines' results depend on. */
interface CommonSettings {
  readonly python: string | null;
  readonly env: Readonly<Record<string, string>>;
  /** Whether this candidate's repository is in `validate.networkRepos`. */
  readonly network: boolean;
  readonly bench: string | null;
  readonly factor: number;
  readonly pytestArgs: readonly string[];
  readonly timeLimits: {
    readonly timeBudgetSeconds: number;
    readonly invocationTimeoutSeconds: number;
    readonly testTimeoutSeconds: number;
    readonly snapshotTimeoutSeconds: number;
    readonly snapshotCallSeconds: number;
    readonly buildTimeoutSeconds: number;
  };
  /** The limits of every container that builds, measures, tests or snapshots the candidate. */
  readonly container: { readonly cpus: number; readonly memoryMb: number; readonly pidsLimit: number; readonly diskMb: number };
  /** Synthesize's machinery, which builds and verifies the expert image. */
  readonly expertBuild: {
    readonly buildNetwork: 'index' | 'bridge' | 'none';
    readonly index: IndexResultSettings | null;
    readonly discovery: BenchmarkDiscovery;
    readonly wheelhouse: string | null;
    readonly timeouts: {
      readonly repoImage: number;
      readonly import: number;
      readonly asv: number;
      readonly pytest: number;
      readonly tamper: number;
    };
  };
}

/** What of the configuration a candidate's validation depends on (the `settings` of its input). */
export type ValidateSettings =
  | (CommonSettings & {
      readonly engine: 'perfmine';
      readonly harness: HarnessConfig;
      readonly selection: { readonly mode: 'coverage'; readonly controls: number } | { readonly mode: 'all' };
      readonly paired: Omit<ValidateConfig['paired'], 'minNormalizationWorkloads'>;
    })
  | (CommonSettings & {
      readonly engine: 'asv';
      readonly asv: Pick<ValidateConfig, 'pairs' | 'calibrationPairs' | 'rounds' | 'attributes' | 'cpuAffinity'>;
      readonly paired: ValidateConfig['paired'];
    });

/**
 * The settings that change a candidate's validation (its verdicts, its measurements, its
 * decision): the `settings` of every validate item's input, whose hash decides whether a done
 * candidate is measured again (up to `timeBudgetSeconds` each: 10 minutes by default with the harness, 4 hours with asv).
 *
 * In, for both engines: the engine; whether the network is on for THIS candidate's repository
 * (a change of `networkRepos` for other repositories measures nothing again); the interpreter,
 * environment variables, benchmark selection (`bench`) and asv's `factor`; pytest's arguments;
 * every time limit and the time budget (a limit that is hit turns a measurement, a test run or a
 * snapshot into a failure, and the budget bounds the pairs measured); the container limits (CPU
 * and memory shape the timings, any limit can stop a step); and the settings of synthesize's
 * machinery that builds and verifies the expert image (build network, benchmark discovery,
 * wheelhouse, verification time limits; the build's own limit is `buildTimeoutSeconds`).
 *
 * Engine perfmine adds the whole harness protocol (rounds, samples, mode, clock, pinning, seeds,
 * adaptive looks), the workload selection (`selectionControls` only under `coverage`) and the
 * paired verdict's options but `minNormalizationWorkloads` (asv invocations only). Engine asv adds
 * the invocation protocol (`pairs`, `calibrationPairs`, `rounds`, `attributes`, `cpuAffinity`) and
 * every paired option.
 *
 * Left out, deliberately: `keepExpertImages` (what happens to the image afterwards), `machine`
 * (the name asv files results under: no number or verdict depends on it), the other engine's
 * settings, `networkRepos` entries of other repositories, `docker.concurrency` and
 * `diskCheckSeconds` (scheduling, polling), `synthesize.tailChars` (log tails),
 * `synthesize.timeouts.build` and `.tool` (not used by the expert build). Pure
 * (test/run/input-hashes.test.ts).
 */
export function validateResultSettings(config: Config, repo: string): ValidateSettings {
  const v = config.validate;
  const d = config.docker;
  const t = config.synthesize.timeouts;
  const common: CommonSettings = {
    python: v.python,
    env: v.env,
    network: v.networkRepos.includes(repo),
    bench: v.bench,
    factor: v.factor,
    // the repository's own after the global ones (unchanged for a repository without them)
    pytestArgs: [...v.pytestArgs, ...repositoryEnvironment(config, repo).pytestArgs],
    timeLimits: {
      timeBudgetSeconds: v.timeBudgetSeconds,
      invocationTimeoutSeconds: v.invocationTimeoutSeconds,
      testTimeoutSeconds: v.testTimeoutSeconds,
      snapshotTimeoutSeconds: v.snapshotTimeoutSeconds,
      snapshotCallSeconds: v.snapshotCallSeconds,
      buildTimeoutSeconds: v.buildTimeoutSeconds,
    },
    container: { cpus: d.cpus, memoryMb: d.memoryMb, pidsLimit: d.pidsLimit, diskMb: d.diskMb },
    expertBuild: {
      buildNetwork: config.synthesize.buildNetwork,
      index: indexResultSettings(config),
      discovery: discoveryOf(config),
      wheelhouse: wheelhouseOf(config),
      timeouts: { repoImage: t.repoImage, import: t.import, asv: t.asv, pytest: t.pytest, tamper: t.tamper },
    },
  };
  if (v.engine === 'asv') {
    return {
      ...common,
      engine: 'asv',
      asv: { pairs: v.pairs, calibrationPairs: v.calibrationPairs, rounds: v.rounds, attributes: v.attributes, cpuAffinity: v.cpuAffinity },
      paired: v.paired,
    };
  }
  const { minNormalizationWorkloads: _asvOnly, ...paired } = v.paired;
  return {
    ...common,
    engine: 'perfmine',
    harness: v.harness,
    selection: v.selection === 'coverage' ? { mode: 'coverage', controls: v.selectionControls } : { mode: 'all' },
    paired,
  };
}
