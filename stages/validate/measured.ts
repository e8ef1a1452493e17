import type { Logger } from '../../pipeline/logging.js';
import type { Metrics } from '../../pipeline/metrics.js';
import type { FingerprintCache } from '../../cache/fingerprints.js';
import type { ValidateConfig } from './config.js';
import type { MeasurementEvidence } from './decide.js';
import type { InterleavedMeasurement } from './harness/interleave.js';
import type { AsvLayout } from './protocol/asv-invocation.js';
import type { InvocationRole } from './protocol/schedule.js';
import type { CandidateEnvironment, MeasurementRunner } from './runner-port.js';
import type { Selection } from './selection.js';
import type { TwoVerdictReport } from './two-verdicts.js';

/** The types validate's flow and its two measurement engines share. */

export interface MeasuredCandidate {
  readonly key: string;
  readonly patch: string;
  readonly environment: CandidateEnvironment;
  readonly layout: AsvLayout;
}

export type InvocationStatus = 'ok' | 'asv-failed' | 'timed-out' | 'malformed' | 'not-run';

export interface InvocationRecord {
  readonly seq: number;
  readonly role: InvocationRole;
  readonly pair: number;
  readonly image: 'base' | 'expert';
  readonly status: InvocationStatus;
  readonly asvExitCode: number | null;
  /** The commit asv labelled the results with (the checkout's HEAD in the image). */
  readonly commit: string | null;
  /** The invocation's results file, raw, as asv wrote it. */
  readonly results: string | null;
  readonly log: string;
  readonly durationMs: number;
}

/** What either engine's measurement gives the rest of validate. */
export interface Measured {
  readonly verdicts: TwoVerdictReport | null;
  readonly evidence: MeasurementEvidence;
  readonly benchmarksJson: string | null;
  readonly budgetExhausted: boolean;
  /** The engine's protocol, recorded with the validation. */
  readonly protocol: Readonly<Record<string, unknown>>;
  /** The harness's samples (engine perfmine). */
  readonly harness: InterleavedMeasurement | null;
  /** Which workloads were measured, and why (engine perfmine with validate.selection coverage). */
  readonly selection?: Selection | null;
  /** How the workloads' fingerprints were had, for that selection. */
  readonly fingerprints?: FingerprintAccount | null;
}

/** How the fingerprints of a candidate's workloads were had: taken on the base worker, or reused from the store. */
export interface FingerprintAccount {
  /** Taken this time (each one a setup and a traced call on the base worker). */
  readonly taken: number;
  /** Fingerprints recorded before, at this base commit or at a nearby one. */
  readonly reused: number;
  /** Failures remembered at this base commit in this environment (raised, skipped, timed out): not taken again. */
  readonly reusedFailures: number;
  /** What the reused ones (both kinds) had taken when they were taken, in milliseconds (those whose time is known). */
  readonly reusedMs: number;
  /** Failures of the workloads themselves recorded this time, for later candidates of the base commit. */
  readonly failuresRecorded: number;
}

export interface MeasureDeps {
  readonly runner: MeasurementRunner;
  /** `docker.measureMs` and `validate.batches` are added here. */
  readonly metrics?: Metrics;
  /** Where workload fingerprints are kept between candidates (none: fingerprint every time). */
  readonly fingerprints?: FingerprintCache;
  readonly config: ValidateConfig;
  readonly log: Logger;
  readonly signal?: AbortSignal;
}
