import { z } from 'zod';

/** Configuration of the filter stage (the `filter` key of perfmine.config.json). */
export const filterConfig = z.object({}).strict();
