/**
 * The round plan: which of the workloads still measured the next round measures, from what each
 * has cost so far and the time budget left (issue 37). Without it a budget stops every workload at
 * once, the cheap ones with the expensive; on a real suite one workload can cost more than all the
 * others together (param's timeraw_import_param, a fresh interpreter per sample: 55% of a
 * candidate's measuring), so the cheap ones would pay for it in pairs.
 *
 * Water-filling over time: each workload would cost, to the last round, what it has spent plus
 * its mean round cost for every round left; when those costs do not fit in what the workloads have
 * spent plus the budget left, each gets at most a level L of time, the level at which the capped
 * costs fit exactly. A workload takes the next round if it still fits under L, or if it has fewer
 * than `minRounds` rounds (validate: the verdict's minPairs, so every workload gets a verdict).
 * Cheap workloads therefore run every round; an expensive one runs as many as its share allows.
 * Pure.
 */

export interface PlannedWorkload {
  readonly name: string;
  /** Wall time of its batches (every side) in the rounds so far, ms. */
  readonly spentMs: number;
  /** Rounds it took part in. */
  readonly rounds: number;
  /** Rounds it could still take (the protocol's rounds less those run). */
  readonly roundsLeft: number;
}

/** A workload's mean round cost so far, ms (null before its first round). */
export function roundCost(w: PlannedWorkload): number | null {
  return w.rounds > 0 ? w.spentMs / w.rounds : null;
}

/** The names the next round measures. */
export function nextRound(workloads: readonly PlannedWorkload[], budgetLeftMs: number, minRounds: number): Set<string> {
  const whole = workloads.map((w) => w.spentMs + (roundCost(w) ?? 0) * w.roundsLeft);
  const available = workloads.reduce((n, w) => n + w.spentMs, 0) + Math.max(0, budgetLeftMs);
  const level = waterLevel(whole, available);
  return new Set(
    workloads
      .filter((w) => {
        const perRound = roundCost(w);
        return perRound === null || w.rounds < minRounds || w.spentMs + perRound <= level;
      })
      .map((w) => w.name),
  );
}

/** The level L with sum(min(x, L)) = total (Infinity when everything fits). */
export function waterLevel(costs: readonly number[], total: number): number {
  if (costs.reduce((n, x) => n + x, 0) <= total) return Infinity;
  const sorted = [...costs].sort((a, b) => a - b);
  let below = 0;
  for (let i = 0; i < sorted.length; i++) {
    const level = (total - below) / (sorted.length - i);
    if (level <= sorted[i]!) return level;
    below += sorted[i]!;
  }
  return Infinity;
}

/** The time the next round of these workloads is expected to take (their mean round costs), ms. */
export function expectedRoundMs(workloads: readonly PlannedWorkload[]): number {
  return workloads.reduce((n, w) => n + (roundCost(w) ?? 0), 0);
}

/**
 * Samples a round of a workload whose `setup` runs before every sample (asv's semantics): the
 * protocol's `samples` while setup is cheap, fewer as setup outweighs a sample, so that a round
 * costs about what its samples would cost without setup (at least one sample). A round's value is
 * the median of its samples, and the rounds' pairs carry the verdict; when one setup costs many
 * samples (shapely's suite: 61-68% of a candidate's measuring was setup), the time goes further in
 * rounds, each a fresh process, than in samples of one. setupSeconds and sampleSeconds: a sample's
 * setup and the sample itself, as measured.
 */
export function samplesForSetup(samples: number, setupSeconds: number, sampleSeconds: number): number {
  if (!(setupSeconds > 0) || !(sampleSeconds >= 0) || !Number.isFinite(setupSeconds)) return samples;
  return Math.max(1, Math.min(samples, Math.ceil((samples * sampleSeconds) / (setupSeconds + sampleSeconds))));
}
