import { z } from 'zod';
import { debianLockSchema } from './debian-lock.js';
import { environmentLockSchema } from './environment-lock.js';

/**
 * What synthesize hands on for a commit (`owner/name@sha`, the base commit of candidates): a
 * verified environment. Validate builds the expert side from the same script.
 *
 * The image: the repository at /repo checked out at `sha` (git clean), `docker_build.sh` run in
 * it, `PERFMINE_PYTHON` set to the chosen interpreter, asv (or the test stand-in) on the PATH.
 */
export const synthesizeOutputSchema = z.object({
  repo: z.string(),
  sha: z.string(),
  commitDate: z.string(),
  /** Verified image of the base commit (checkout + build script run). */
  imageTag: z.string(),
  /** The verified docker_build.sh. */
  script: z.string(),
  scriptSource: z.enum(['cache', 'neighbour', 'template', 'agent']),
  /** Row id of the verified attempt in the build-script store. */
  attemptId: z.number().int(),
  pythonVersion: z.string().nullable(),
  // ---- added by the synthesize stage (issue 6) ----
  /** The repository tier (clone at /repo, no checkout): build the expert side from it. */
  repoImageTag: z.string(),
  /**
   * The image builds start from before the toolchain: the repository's base image
   * (`repositories."owner/name".baseImage`, else `docker.baseImage`), or its Debian-packages tier.
   */
  baseImage: z.string(),
  /**
   * When `baseImage` is a Debian-packages tier: the image under it and the packages it adds (to
   * write them down in a task's Dockerfile), and its lock (`name=version` of every package the tier
   * installed or changed, dependencies included: a task's Dockerfile installs exactly these).
   * `debianLock` is absent in outputs of earlier versions.
   */
  packageTier: z.object({ baseImage: z.string(), debianPackages: z.array(z.string()), debianLock: debianLockSchema.optional() }).optional(),
  toolchainImage: z.string(),
  /** asv configuration, relative to /repo. */
  asvConfigPath: z.string(),
  /** The package verification imported. */
  importName: z.string().nullable(),
  /** Where the clone came from: `git:PATH` or `https://github.com/owner/name.git`. */
  cloneSource: z.string(),
  // ---- added by issue 29 ----
  /**
   * What the verified image holds (pipeline/services/environments/lock.ts): every build of the
   * commit after synthesize's (validate's expert side, scores, rebuilds, the task folder) installs
   * it first. Absent in outputs of earlier versions.
   */
  lock: environmentLockSchema.nullable().optional(),
});
export type SynthesizeOutput = z.infer<typeof synthesizeOutputSchema>;
