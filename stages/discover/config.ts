import { z } from 'zod';

/** Configuration of the discover stage (the `discover` key of perfmine.config.json). */
export const discoverConfig = z.object({}).strict();
