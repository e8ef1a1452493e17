import { z } from 'zod';
import { harnessConfig, type HarnessConfig, type ValidateConfig } from '../../stages/validate/config.js';
import { pairedOptionsSchema, type PairedOptions } from '../../stages/validate/paired/options.js';

/**
 * The protocol a replay measures with: the task's recorded one (its folder's
 * `perfmine/bench/task.json` `protocol`, which emit writes from validate's record: rounds,
 * samples, roundsPerProcess, warmupSeconds, mode, interleave, plan, calibrationRounds and
 * samplesPerRound (batch, even, every round and fixed for a task recorded before them), hashSeed, adaptive looks, and the paired
 * verdict's options), and for what validate does not record (clock, batch time limit, CPU
 * pinning, time budget, thread variables) this perfmine's `validate` configuration, whose
 * defaults are validate's. The recorded seed is not reused: a replay is a new measurement with
 * its own random order (its seed is recorded). The cpuset is chosen for the replaying machine
 * (`validate.harness.cpus`, auto: the last core). Pure.
 */

/** Keys of validate.harness that a task's protocol carries and the replay takes from it. */
const RECORDED_HARNESS_KEYS = [
  'rounds',
  'roundsPerProcess',
  'samples',
  'warmupSeconds',
  'mode',
  'interleave',
  'plan',
  'calibrationRounds',
  'samplesPerRound',
  'hashSeed',
  'adaptive',
] as const;

export interface ReplayProtocol {
  readonly engine: string;
  readonly harness: HarnessConfig;
  readonly paired: PairedOptions;
  readonly timeBudgetSeconds: number;
  readonly invocationTimeoutSeconds: number;
  /** Which keys came from the task's record (the rest from the configuration). */
  readonly recorded: readonly string[];
}

const recordedSchema = z.record(z.string(), z.unknown());

/** The replay's protocol from the task's recorded protocol and the configuration's validate section. */
export function replayProtocol(recorded: unknown, config: ValidateConfig): ReplayProtocol {
  const rec = recordedSchema.safeParse(recorded).success ? (recorded as Record<string, unknown>) : {};
  const taken: string[] = [];
  const harnessInput: Record<string, unknown> = { ...config.harness, adaptive: { ...config.harness.adaptive } };
  for (const key of RECORDED_HARNESS_KEYS) {
    if (rec[key] === undefined) continue;
    harnessInput[key] = rec[key];
    taken.push(key);
  }
  // a task recorded before validate interleaved sample by sample, planned rounds by cost and
  // bounded the calibration was measured batch by batch, every workload and side every round
  for (const [key, before] of [
    ['interleave', 'batch'],
    ['plan', 'even'],
    ['calibrationRounds', null],
    ['samplesPerRound', 'fixed'],
  ] as const) {
    if (rec['rounds'] === undefined || rec[key] !== undefined) continue;
    harnessInput[key] = before;
    taken.push(key);
  }
  // the recorded adaptive looks were filtered to the recorded rounds already; parse again to be sure
  let harness: HarnessConfig;
  const parsed = harnessConfig.safeParse(harnessInput);
  if (parsed.success) harness = parsed.data;
  else {
    harness = config.harness;
    taken.length = 0;
  }
  let paired = config.paired;
  const recordedPaired = pairedOptionsSchema.safeParse(rec['paired']);
  if (rec['paired'] !== undefined && recordedPaired.success) {
    // validate records the final analysis's options, whose alpha is what the interim looks left
    // it (paired/sequential.ts finalAlpha), and the configured alpha, which the looks share
    // (`configuredAlpha`, task format 2); a folder from before it: recovered from the final one
    const configured = rec['configuredAlpha'];
    const looks = harness.adaptive.looks.length > 0;
    const alpha =
      typeof configured === 'number' && configured > 0 && configured < 1
        ? configured
        : looks
          ? recordedPaired.data.alpha / (1 - harness.adaptive.earlyAlphaShare)
          : recordedPaired.data.alpha;
    paired = { ...recordedPaired.data, alpha };
    taken.push('paired');
  }
  return {
    engine: typeof rec['engine'] === 'string' ? rec['engine'] : 'perfmine',
    harness,
    paired,
    timeBudgetSeconds: config.timeBudgetSeconds,
    invocationTimeoutSeconds: config.invocationTimeoutSeconds,
    recorded: taken,
  };
}
