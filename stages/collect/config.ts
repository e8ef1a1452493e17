import { z } from 'zod';

/** Configuration of the collect stage (the `collect` key of perfmine.config.json). */
export const collectConfig = z.object({}).strict();
