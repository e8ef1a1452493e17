import { z } from 'zod';

/**
 * What validate hands on for a candidate (`owner/name#N`): a kept candidate is `done` with this
 * output, a dropped one is `dropped` with its reason and the same output. The full numbers (every
 * invocation's results file, every workload's two verdicts) live in the measurements tables
 * (cache/measurements.ts); this is the summary emit and `status` read.
 */
export const validateOutputSchema = z.object({
  repo: z.string(),
  number: z.number().int().positive(),
  baseSha: z.string(),
  mergeSha: z.string(),
  mergedAt: z.string(),
  /** The verified base image and the expert image built from it (null when it did not build). */
  baseImage: z.string(),
  expertImage: z.string().nullable(),
  decision: z.string(),
  /** Complete base/expert and base/base pairs. */
  pairs: z.number().int().nonnegative(),
  calibrationPairs: z.number().int().nonnegative(),
  /** The paired verdict's threshold factor, and its false-positive rate on base/base (null when uncalibrated). */
  threshold: z.number().nullable(),
  falsePositiveRate: z.number().nullable(),
  workloads: z.number().int().nonnegative(),
  /** Workloads improved by the paired verdict. */
  improved: z.array(z.string()),
  /** What asv's pooled rule flags, for comparison. */
  asvImproved: z.number().int().nonnegative(),
  asvWorsened: z.number().int().nonnegative(),
  pairedWorsened: z.number().int().nonnegative(),
  /**
   * Machine time of this validation (ms): the whole item (expert build, measurement, tests,
   * snapshot) and the expert build alone (null when it was not reached). What a task cost
   * (pipeline/concepts/task-costs.ts); absent from outputs recorded before issue 30.
   */
  durationMs: z.number().nonnegative().optional(),
  expertBuildMs: z.number().nonnegative().nullable().optional(),
});
export type ValidateOutput = z.infer<typeof validateOutputSchema>;
