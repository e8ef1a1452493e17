import { z } from 'zod';

/**
 * An environment's lock as stored and handed on (pipeline/services/environments/lock.ts makes it):
 * the exact distributions a verified build left installed, and where each came from.
 */
export const LOCK_SOURCES = ['index', 'editable', 'image', 'local'] as const;
export type LockSource = (typeof LOCK_SOURCES)[number];

export const lockedDistributionSchema = z.object({
  name: z.string(),
  version: z.string(),
  source: z.enum(LOCK_SOURCES),
  filename: z.string().nullable(),
  sha256: z.string().nullable(),
});
export type LockedDistribution = z.infer<typeof lockedDistributionSchema>;

export const buildFileSchema = z.object({ name: z.string(), version: z.string().nullable(), filename: z.string(), sha256: z.string() });

export const environmentLockSchema = z.object({
  /** The image's Python (`X.Y.Z`). */
  python: z.string(),
  /** The time machine's cutoff (ISO 8601) and upstream, when the build went through it. */
  cutoff: z.string().nullable(),
  upstream: z.string().nullable(),
  distributions: z.array(lockedDistributionSchema),
  build: z.array(buildFileSchema),
});
export type EnvironmentLock = z.infer<typeof environmentLockSchema>;
