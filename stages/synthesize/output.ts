import { z } from 'zod';

/**
 * What synthesize hands on for a commit (`owner/name@sha`, the base commit of candidates): a
 * verified environment. Validate builds the expert side from the same script.
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
});
export type SynthesizeOutput = z.infer<typeof synthesizeOutputSchema>;
