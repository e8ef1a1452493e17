/**
 * The expert image: the candidate's verified base image with the expert patch applied (and
 * committed, so that asv can label results with the checkout's HEAD) and the build script rerun,
 * so that compiled code is rebuilt. Pure: the Dockerfile and the reading of the build's outcome.
 */

export const PATCH_MARK = '@@perfmine patch-does-not-apply';
export const BUILD_MARK = '@@perfmine build-failed';

export interface ExpertImageSpec {
  readonly baseImage: string;
  readonly repoDir: string;
}

/** Prints a mark so that the build log has it only when the step failed (the step's own command line shows the two words apart). */
function mark(text: string): string {
  const [head, ...rest] = text.split(' ');
  return `printf '%s %s\\n' '${head!}' '${rest.join(' ')}'`;
}

/** Context files: `perfmine/expert.patch`, `perfmine/docker_build.sh`, and optionally `perfmine/snapshot.py`. */
export function expertDockerfile(spec: ExpertImageSpec): string {
  const git = "git -c safe.directory='*'";
  return [
    `FROM ${spec.baseImage}`,
    'COPY perfmine/ /perfmine/',
    `WORKDIR ${spec.repoDir}`,
    `RUN ${git} apply --index --whitespace=nowarn /perfmine/expert.patch || { ${mark(PATCH_MARK)}; exit 97; }`,
    `RUN ${git} -c user.name=perfmine -c user.email=perfmine@localhost commit -q --no-verify --allow-empty -m "perfmine: expert patch"`,
    `RUN bash /perfmine/docker_build.sh || { ${mark(BUILD_MARK)}; exit 98; }`,
    '',
  ].join('\n');
}

export type ExpertBuildReading = { readonly ok: true } | { readonly ok: false; readonly reason: 'patch-does-not-apply' | 'expert-build-failed'; readonly detail: string };

/** What a failed build means: the patch step's mark, else the build script's (or any other step). */
export function readExpertBuild(result: { ok: boolean; error: string | null; log: string; timedOut: boolean }): ExpertBuildReading {
  if (result.ok) return { ok: true };
  if (result.log.includes(PATCH_MARK)) return { ok: false, reason: 'patch-does-not-apply', detail: tailLines(result.log, 15) };
  const why = result.timedOut ? 'the expert build ran past its time limit' : (result.error ?? 'the expert build failed');
  return { ok: false, reason: 'expert-build-failed', detail: `${why}\n${tailLines(result.log, 30)}` };
}

function tailLines(text: string, n: number): string {
  return text.split('\n').slice(-n).join('\n');
}
