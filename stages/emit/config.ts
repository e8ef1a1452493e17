import { z } from 'zod';

/** Configuration of the emit stage (the `emit` key of perfmine.config.json). */
export const emitConfig = z
  .object({
    /** Where the task Dockerfile clones the repository from (`{repo}` is owner/name). */
    repoUrl: z.string().includes('{repo}').default('https://github.com/{repo}.git'),
    /** The image name rows give each task: `{owner}`, `{name}`, `{number}` are filled in (lowercase). */
    imageName: z.string().includes('{number}').default('perfmine/{owner}__{name}:{number}'),
    /**
     * The publish gate (`perfmine publish`): a task is published only when enough of the replays
     * of its current folder (`perfmine replay`) replicate. Not an emit setting: it changes no task.
     */
    publish: z
      .object({
        /** Replicating replays a task needs (0: no gate, every emitted task is published). */
        minReplays: z.number().int().min(0).max(1000).default(1),
        /** Of its conclusive replays (replicating or not), the share that must replicate (1: none may fail to). */
        minReplicatedShare: z.number().min(0).max(1).default(1),
      })
      .strict()
      .prefault({}),
  })
  .strict();

export type EmitConfig = z.infer<typeof emitConfig>;
