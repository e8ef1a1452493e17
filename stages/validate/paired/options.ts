import { z } from 'zod';

/**
 * Options of perfmine's paired verdict (the `validate.paired` section of the config). Every
 * threshold is a ratio factor, as asv's `--factor`: 1.05 means "5% faster or slower".
 */
export const pairedOptionsSchema = z
  .object({
    /**
     * A workload needs at least this many usable base/expert pairs to get a verdict (else
     * incomparable). Three, because the median of two pairs is their mean: one pair caught in a
     * slow-machine spike decides it (seen on this kind of machine: pairs 0.65 and 0.99 flagged an
     * untouched workload of a slowdown as improved). From three on, one spike cannot move the median.
     */
    minPairs: z.number().int().min(1).default(3),
    /** Pairs whose normalized ratio may point the other way (or sit exactly at 1) and still count as consistent. */
    allowedDisagreeing: z.number().int().min(0).default(0),
    /** The smallest threshold factor, calibrated or not: a change under 5% is never called one. */
    thresholdFloor: z.number().min(1).default(1.05),
    /** The calibration spread (in log space) is multiplied by this to give the threshold. */
    safetyFactor: z.number().min(1).default(1.5),
    /** Which quantile of |log normalized ratio| over all calibration pairs and workloads is the spread. */
    spreadQuantile: z.number().gt(0).max(1).default(0.95),
    /** Fewer usable base/base pairs than this: the verdict is uncalibrated (threshold = floor). */
    minCalibrationPairs: z.number().int().min(1).default(2),
    /** A pair is normalized by its machine factor only when at least this many workloads give it. */
    minNormalizationWorkloads: z.number().int().min(1).default(5),
  })
  .strict()
  .refine((o) => o.allowedDisagreeing < o.minPairs, {
    message: 'allowedDisagreeing must be smaller than minPairs (else a verdict could rest on no consistent pair)',
    path: ['allowedDisagreeing'],
  });

export type PairedOptions = z.infer<typeof pairedOptionsSchema>;

export const DEFAULT_PAIRED_OPTIONS: PairedOptions = pairedOptionsSchema.parse({});
