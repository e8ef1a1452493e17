import { z } from 'zod';
import { taskRowSchema } from './task-row.js';

/**
 * What emit records per task (`owner/name#N`): its dataset row, the text files of its folder, and
 * its binary files (the sealed history's bundles) by the SHA-256 of their bytes in the store's blobs.
 */
export const emitOutputSchema = z.object({
  row: taskRowSchema,
  files: z.record(z.string(), z.string()),
  blobs: z.record(z.string(), z.string().regex(/^[0-9a-f]{64}$/)).default({}),
});
export type EmitOutput = z.infer<typeof emitOutputSchema>;
