import { z } from 'zod';

/** Configuration of the emit stage (the `emit` key of perfmine.config.json). */
export const emitConfig = z.object({}).strict();
