import { z } from 'zod';
import { taskRowSchema } from './task-row.js';

/** What emit records per task (`owner/name#N`): its dataset row and the files of its folder. */
export const emitOutputSchema = z.object({
  row: taskRowSchema,
  files: z.record(z.string(), z.string()),
});
export type EmitOutput = z.infer<typeof emitOutputSchema>;
