import { z } from 'zod';

/** Configuration of the classify stage (the `classify` key of perfmine.config.json). */
export const classifyConfig = z.object({}).strict();
