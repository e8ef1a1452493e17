/**
 * The expert side of a replay, from the task's own Dockerfile: the same file with the expert patch
 * applied to /repo's working tree right before the step that runs the build script (as validate
 * builds its expert: `git apply` on the checkout, nothing committed, then docker_build.sh), so
 * that both sides share every layer before it. Pure.
 */

/** Where the patch goes in the build context (next to the folder's own files, under a name no task file has). */
export const EXPERT_PATCH_CONTEXT = '.perfmine-replay/expert.patch';
/** The build fails with this line when the patch does not apply. */
export const PATCH_FAILED_MARKER = 'perfmine-replay: the expert patch does not apply';

/**
 * Whether a build log says the patch did not apply: the marker as a line of output (the engine may
 * colour it), not inside the echoed RUN command, which every log of the variant holds (a later
 * step's failure, holoviz/param's lock check, was once reported as a patch that does not apply).
 */
export function patchNotApplied(log: string): boolean {
  return log.split('\n').some((line) => line.replace(/\x1b\[[0-9;]*m/g, '').trim() === PATCH_FAILED_MARKER);
}

export type ExpertDockerfile = { readonly ok: true; readonly dockerfile: string } | { readonly ok: false; readonly why: string };

/** The step that runs the build script: the last RUN instruction that names docker_build.sh. */
function buildStep(lines: readonly string[]): number {
  for (let i = lines.length - 1; i >= 0; i--) if (/^\s*RUN\s/i.test(lines[i]!) && lines[i]!.includes('docker_build.sh')) return i;
  return -1;
}

export function expertDockerfile(dockerfile: string, repoDir = '/repo'): ExpertDockerfile {
  const lines = dockerfile.split('\n');
  const at = buildStep(lines);
  if (at < 0) return { ok: false, why: 'the Dockerfile has no RUN step that runs docker_build.sh' };
  lines.splice(
    at,
    0,
    `COPY ${EXPERT_PATCH_CONTEXT} /tmp/perfmine-expert.patch`,
    `RUN git -C ${repoDir} apply --whitespace=nowarn /tmp/perfmine-expert.patch || { echo "${PATCH_FAILED_MARKER}" >&2; exit 97; }; rm -f /tmp/perfmine-expert.patch`,
  );
  return { ok: true, dockerfile: lines.join('\n') };
}
