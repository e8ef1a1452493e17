import { z } from 'zod';

/**
 * Harbor's task.toml, as Harbor documents it (https://harborframework.com/docs/tasks: the task
 * format page, `schema_version = "1.3"`, the version this export follows; its source is
 * docs/content/docs/tasks/index.mdx of harbor-framework/harbor, and the model
 * src/harbor/models/task/config.py): the top-level `schema_version`, `source` and
 * `multi_step_reward_strategy`; `[task]` (the package: name `org/name`, description, authors,
 * keywords); `[metadata]` (free); `[verifier]`, `[agent]`, `[solution]` and `[environment]`. The
 * schema lists the documented keys of the sections perfmine writes and refuses any other, so that
 * a misspelt key (which Harbor would silently ignore) fails here. Pure.
 */

export const HARBOR_SCHEMA_VERSION = '1.3';

/** Harbor's package name: `org/name`, letters, digits, `.`, `_`, `-`, not starting with a dot, no `..`. */
export const HARBOR_TASK_NAME = /^(?!.*\.\.)[A-Za-z0-9_-][A-Za-z0-9._-]*\/[A-Za-z0-9_-][A-Za-z0-9._-]*$/;

const networkMode = z.enum(['public', 'no-network', 'allowlist']);
const user = z.union([z.string().min(1), z.number().int().nonnegative()]);
const env = z.record(z.string(), z.string());
const seconds = z.number().positive();

export const harborTaskConfigSchema = z
  .object({
    schema_version: z.string(),
    source: z.string().optional(),
    multi_step_reward_strategy: z.enum(['mean', 'final']).optional(),
    task: z
      .object({
        name: z.string().regex(HARBOR_TASK_NAME),
        description: z.string().optional(),
        authors: z.array(z.object({ name: z.string(), email: z.string().optional() }).strict()).optional(),
        keywords: z.array(z.string()).optional(),
      })
      .strict()
      .optional(),
    metadata: z.record(z.string(), z.unknown()).optional(),
    verifier: z
      .object({
        timeout_sec: seconds.optional(),
        env: env.optional(),
        user: user.optional(),
        network_mode: networkMode.optional(),
        allowed_hosts: z.array(z.string()).optional(),
        environment_mode: z.enum(['shared', 'separate']).optional(),
      })
      .strict()
      .optional(),
    agent: z
      .object({
        timeout_sec: seconds.optional(),
        user: user.optional(),
        network_mode: networkMode.optional(),
        allowed_hosts: z.array(z.string()).optional(),
      })
      .strict()
      .optional(),
    solution: z.object({ env: env.optional() }).strict().optional(),
    environment: z
      .object({
        build_timeout_sec: seconds.optional(),
        network_mode: networkMode.optional(),
        allowed_hosts: z.array(z.string()).optional(),
        docker_image: z.string().optional(),
        os: z.enum(['linux', 'windows']).optional(),
        cpus: z.number().int().positive().optional(),
        memory_mb: z.number().int().positive().optional(),
        storage_mb: z.number().int().positive().optional(),
        gpus: z.number().int().nonnegative().optional(),
        gpu_types: z.array(z.string()).optional(),
        /** Deprecated in 1.3 (network_mode), still read: false is no-network. Written for older Harbor versions. */
        allow_internet: z.boolean().optional(),
        env: env.optional(),
        skills_dir: z.string().optional(),
      })
      .strict()
      .optional(),
  })
  .strict()
  .superRefine((c, ctx) => {
    const e = c.environment;
    if (e?.allow_internet !== undefined && e.network_mode !== undefined && e.allow_internet !== (e.network_mode !== 'no-network'))
      ctx.addIssue({ code: 'custom', path: ['environment', 'allow_internet'], message: 'contradicts network_mode' });
  });

export type HarborTaskConfig = z.infer<typeof harborTaskConfigSchema>;

/** The keys Harbor's documentation writes as floats (seconds). */
export const HARBOR_FLOAT_KEYS: ReadonlySet<string> = new Set([
  'verifier.timeout_sec',
  'agent.timeout_sec',
  'environment.build_timeout_sec',
]);
