import { z } from 'zod';

/** Configuration of the validate stage (the `validate` key of perfmine.config.json). */
export const validateConfig = z.object({}).strict();
