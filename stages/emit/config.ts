import { z } from 'zod';
import { VENDOR_WHEELS } from '../../pipeline/concepts/vendored-wheels.js';

/** Configuration of the emit stage (the `emit` key of perfmine.config.json). */
export const emitConfig = z
  .object({
    /** Where the task Dockerfile clones the repository from (`{repo}` is owner/name). */
    repoUrl: z.string().includes('{repo}').default('https://github.com/{repo}.git'),
    /** The image name rows give each task: `{owner}`, `{name}`, `{number}` are filled in (lowercase). */
    imageName: z.string().includes('{number}').default('perfmine/{owner}__{name}:{number}'),
    /**
     * Whether a task folder carries the files its lock names (`wheels/`, hash-checked), so that it
     * builds with no package index: `auto` when the index its build went through is not a public
     * https one (a loopback or `dir:` index, as the demo's), `always`, `never`. Builds keep the
     * files they are served in the store for it (pipeline/concepts/vendored-wheels.ts).
     */
    vendorWheels: z.enum(VENDOR_WHEELS).default('auto'),
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
        /**
         * An OCI registry (`host:port`, optionally with a path prefix) the published tasks' images
         * go to (`publish --registry`): each task's environment image and the base image it starts
         * from, named by digest in the folders, task.toml and the rows. null: no images pushed.
         */
        /**
         * Hosts an agent may reach while it works on a Harbor task (its model's API, e.g.
         * api.openai.com): written as `[agent] network_mode = "allowlist"` with these hosts, the
         * environment's network open for Harbor's agent setup, the verifier with none. Empty (the
         * default): no network at all, for agents that need none.
         */
        agentAllowedHosts: z.array(z.string().regex(/^[A-Za-z0-9*.-]+(:\d{1,5})?$/, 'a host name')).default([]),
        registry: z
          .string()
          .regex(/^[A-Za-z0-9.-]+(:\d{1,5})?(\/[a-z0-9._-]+)*\/?$/, 'host:port, optionally with a path (127.0.0.1:5000/perfmine)')
          .nullable()
          .default(null),
      })
      .strict()
      .prefault({}),
  })
  .strict();

export type EmitConfig = z.infer<typeof emitConfig>;
