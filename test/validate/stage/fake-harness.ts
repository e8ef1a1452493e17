import { parseResultsFile, resultSetOf } from '../../../pipeline/concepts/asv/index.js';
import type { HarnessWorker, Side } from '../../../stages/validate/harness/interleave.js';
import type { BatchCommand, BatchResult, FailureStatus, FatalMessage, ReadyMessage } from '../../../stages/validate/harness/messages.js';
import { readReference, RICH_DIR } from '../../concepts/asv/reference.js';
import { mulberry32 } from '../../helpers/prng.js';

function seedOf(text: string): number {
  let h = 2166136261;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
  return h >>> 0;
}

/**
 * A scripted harness worker for validate's tests: it answers batches with real samples of rich
 * #3399 (r4x4: 4 invocations of 20 samples per workload and commit), the base side from
 * ab/349042fd, the expert from ab/577def22 (optionally scaled), the calibration worker from
 * aa1/349042fd. The k-th batch of a workload on every side draws from the same invocation i (a
 * PRNG seeded by workload and k picks i, another seeded by side too picks the samples): base and
 * expert invocation i ran next to each other, as interleaved batches do, and a quarter of the
 * rounds fall in pair 2, where the real expert invocation ran 1.4x slow. Deterministic.
 */

const R4 = `${RICH_DIR}r4x4/`;
const FILES: Record<Side, string> = {
  base: `${R4}ab/349042fd-existing-py_usr_bin_python3.json`,
  expert: `${R4}ab/577def22-existing-py_usr_bin_python3.json`,
  calibration: `${R4}aa1/349042fd-existing-py_usr_bin_python3.json`,
};

/** Samples per round of validate's default protocol (harness.samples), which the tests keep. */
const SAMPLES_PER_ROUND = 5;

const samplesCache = new Map<Side, Map<string, readonly number[]>>();
function samplesOf(side: Side): Map<string, readonly number[]> {
  let m = samplesCache.get(side);
  if (!m) {
    const set = resultSetOf(parseResultsFile(readReference(FILES[side]), FILES[side]));
    m = new Map(set.workloads.map((w) => [w.name, w.samples ?? []]));
    samplesCache.set(side, m);
  }
  return m;
}

export interface FakeHarnessScript {
  /** Sides whose worker cannot load the suite. */
  readonly fatal?: Partial<Record<Side, { readonly reason: string; readonly message: string }>>;
  /** Batches that fail: workload → side, status, and from which of its batches on (0: the warm-up). */
  readonly failures?: Readonly<Record<string, { readonly side: Side; readonly status: FailureStatus; readonly fromBatch?: number }>>;
  /** Multiply these workloads' expert samples by `factor`. */
  readonly expert?: { readonly names: ReadonlySet<string>; readonly factor: number };
  /** Workloads the expert's suite lacks. */
  readonly missingOnExpert?: readonly string[];
  /** Sides whose n-th restart (from 1) fails. */
  readonly restartFails?: Partial<Record<Side, number>>;
  /** What each workload runs (null: fingerprinting fails), the base's outlines by container path, the suite's imported files. */
  readonly fingerprints?: Readonly<Record<string, readonly (readonly [string, number, number])[] | null>>;
  readonly outlines?: Readonly<Record<string, readonly (readonly ['def' | 'class', string, number, number])[]>>;
  readonly imported?: readonly string[];
  /** Workloads that skip at the base (NotImplementedError in setup): their fingerprint answers `skipped`. */
  readonly skipping?: readonly string[];
  /** The run stops (an error out of the worker) at this fingerprint (from 0), as a killed run would. */
  readonly fingerprintStopsAt?: number;
  /** Workloads whose fingerprint answers this failure (`timeout`: past its time limit; `crashed`: the worker died). */
  readonly fingerprintFailures?: Readonly<Record<string, FailureStatus>>;
}

export class FakeHarnessWorker implements HarnessWorker {
  readonly start: ReadyMessage | FatalMessage;
  readonly commands: Omit<BatchCommand, 'id' | 'op'>[] = [];
  closed = false;
  readonly #batchesOf = new Map<string, number>();
  readonly #turnsOf = new Map<string, number>();

  constructor(
    readonly side: Side,
    readonly script: FakeHarnessScript,
  ) {
    const fatal = script.fatal?.[side];
    if (fatal) {
      this.start = { event: 'fatal', ...fatal };
      return;
    }
    const names = [...samplesOf(side).keys()].filter((n) => side !== 'expert' || !script.missingOnExpert?.includes(n));
    this.start = {
      event: 'ready',
      protocol: 1,
      python: '3.11.2',
      benchmarks: Object.fromEntries(
        names.map((n) => [n, { name: n, type: 'time', unit: 'seconds', params: [], param_names: [], version: 'v1', timeout: 60 }]),
      ),
      workloads: names.map((n) => ({ name: n, benchmark: n, param: 0 })),
    };
  }

  async batch(command: Omit<BatchCommand, 'id' | 'op'>): Promise<BatchResult> {
    this.commands.push(command);
    // the k-th round's batch (0: the warm-up pass); a round taken sample by sample
    // (validate.harness.interleave: sample) comes as one-sample turns: its j-th turn is the j-th
    // sample the whole batch would have drawn, so both ways measure the same samples
    let k: number;
    let j = 0;
    if (command.warmup !== null && command.samples === 1 && SAMPLES_PER_ROUND > 1) {
      const turns = this.#turnsOf.get(command.benchmark) ?? 0;
      this.#turnsOf.set(command.benchmark, turns + 1);
      k = 1 + Math.floor(turns / SAMPLES_PER_ROUND);
      j = turns % SAMPLES_PER_ROUND;
    } else {
      k = this.#batchesOf.get(command.benchmark) ?? 0;
      this.#batchesOf.set(command.benchmark, k + 1);
    }
    const failure = this.script.failures?.[command.benchmark];
    if (failure && failure.side === this.side && k >= (failure.fromBatch ?? 0))
      return { ok: false, status: failure.status, message: `scripted ${failure.status}` };
    const all = samplesOf(this.side).get(command.benchmark);
    if (!all || all.length === 0) return { ok: false, status: 'unknown', message: `no benchmark ${command.benchmark}` };
    const invocation = Math.floor(mulberry32(seedOf(`${command.benchmark} ${k}`))() * 4);
    const random = mulberry32(seedOf(`${this.side} ${command.benchmark} ${k}`));
    for (let skip = 0; skip < j; skip++) random();
    const picked = Array.from({ length: command.samples }, () => all[invocation * 20 + Math.floor(random() * 20)]!);
    const scale = this.side === 'expert' && this.script.expert?.names.has(command.benchmark) ? this.script.expert.factor : 1;
    return { ok: true, samples: picked.map((s) => s * scale), number: command.number === 0 ? 100 : command.number };
  }

  restarts = 0;

  /** Scripted fingerprints (`script.fingerprints`), else none: selection then measures every workload. */
  readonly fingerprinted: string[] = [];

  async fingerprint(ref: { readonly name: string }) {
    if (this.fingerprinted.length === this.script.fingerprintStopsAt) throw new Error('scripted: the run was stopped');
    this.fingerprinted.push(ref.name);
    if (this.script.skipping?.includes(ref.name))
      return { ok: false as const, status: 'skipped' as const, message: 'NotImplementedError in setup: no network' };
    const failure = this.script.fingerprintFailures?.[ref.name];
    if (failure) return { ok: false as const, status: failure, message: `scripted ${failure}` };
    const code = this.script.fingerprints?.[ref.name];
    if (code === null) return { ok: false as const, status: 'failed' as const, message: 'scripted: the workload raises' };
    return { ok: true as const, code: code ?? [], opaque: false };
  }

  async outline(files: readonly string[]) {
    return Object.fromEntries(files.map((f) => [f, this.script.outlines?.[f] ?? null]));
  }

  async modules() {
    return this.script.imported ?? [];
  }

  async restart() {
    this.restarts += 1;
    const failing = this.script.restartFails?.[this.side];
    if (failing !== undefined && this.restarts >= failing) return { ok: false as const, message: 'scripted: the suite no longer imports' };
    return { ok: true as const };
  }

  log(): string {
    return `fake ${this.side} worker`;
  }

  async close(): Promise<void> {
    this.closed = true;
  }
}
