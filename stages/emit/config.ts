import { z } from 'zod';

/** Configuration of the emit stage (the `emit` key of perfmine.config.json). */
export const emitConfig = z
  .object({
    /** Where the task Dockerfile clones the repository from (`{repo}` is owner/name). */
    repoUrl: z.string().includes('{repo}').default('https://github.com/{repo}.git'),
    /** The image name rows give each task: `{owner}`, `{name}`, `{number}` are filled in (lowercase). */
    imageName: z.string().includes('{number}').default('perfmine/{owner}__{name}:{number}'),
  })
  .strict();

export type EmitConfig = z.infer<typeof emitConfig>;
