import { z } from 'zod';

/** Configuration of the synthesize stage (the `synthesize` key of perfmine.config.json). */
export const synthesizeConfig = z.object({}).strict();
