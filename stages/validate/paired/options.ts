import { z } from 'zod';

/**
 * Options of perfmine's per-workload keep verdict (the `validate.paired` section of the config).
 * Every threshold is a ratio factor, as asv's `--factor`: 1.05 means "5% faster or slower".
 */
export const pairedOptionsSchema = z
  .object({
    /**
     * A workload needs at least this many usable base/expert pairs to get a verdict (else
     * incomparable). Three, because the median of two pairs is their mean: one pair caught in a
     * slow-machine spike decides it.
     */
    minPairs: z.number().int().min(2).default(3),
    /**
     * The share of a workload's usable pairs that must point the verdict's way (faster for
     * improved, slower for worsened): the consistency rule. 0.75 of 20 rounds is 15; of 4 pairs, 3.
     */
    consistency: z.number().gt(0.5).max(1).default(0.75),
    /**
     * The family-wise false-positive rate over one candidate's workloads: the chance that any
     * untouched workload is called changed, controlled by Holm's procedure on the workloads'
     * p-values.
     */
    alpha: z.number().gt(0).lt(0.5).default(0.01),
    /** The smallest change ever called one: a workload is never improved by less than 5%. */
    thresholdFloor: z.number().min(1).default(1.05),
    /**
     * The bias allowance (how far two processes of identical code sit apart beyond their noise,
     * from the base/base calibration) is multiplied by this before it is added to every threshold.
     */
    safetyFactor: z.number().min(1).default(1.5),
    /**
     * The most weight, in degrees of freedom, that the noise pooled over the candidate's workloads
     * gets in each workload's own noise estimate (empirical Bayes; the weight itself is fitted to
     * how alike the workloads' noises are): a workload with few pairs leans on the others, one
     * with many stands on its own. 0: every workload on its own.
     */
    maxPriorDf: z.number().min(0).default(30),
    /** Fewer usable base/base pairs than this: the verdict is uncalibrated (no bias allowance, no false-positive rate). */
    minCalibrationPairs: z.number().int().min(2).default(2),
    /** An asv invocation pair is normalized by its machine factor only when at least this many workloads give it. */
    minNormalizationWorkloads: z.number().int().min(1).default(5),
  })
  .strict();

export type PairedOptions = z.infer<typeof pairedOptionsSchema>;

export const DEFAULT_PAIRED_OPTIONS: PairedOptions = pairedOptionsSchema.parse({});
