import { describe, expect, it } from 'vitest';
import { patchNotApplied, PATCH_FAILED_MARKER } from '../../../stages/validate/replay/expert-dockerfile.js';

/**
 * Whether the replay's expert build failed because the patch did not apply: the marker printed as
 * a line of its own, not the RUN command that holds it, which the engine echoes in every build of
 * the variant (a later step's failure was once reported as a patch that does not apply).
 */
const step = `Step 9/14 : RUN git -C /repo apply --whitespace=nowarn /tmp/perfmine-expert.patch || { echo "${PATCH_FAILED_MARKER}" >&2; exit 97; }; rm -f /tmp/perfmine-expert.patch`;

describe('reading the replay expert build log', () => {
  it('does not take the echoed command for the failure: a later step failed', () => {
    const log = `${step}\n ---> Running in 3f2a\nRemoving intermediate container 3f2a\nStep 10/14 : RUN bash /perfmine/docker_build.sh\nperfmine-lock: param: the lock has 1.0, 1.1 is installed\nThe command '/bin/sh -c bash /perfmine/docker_build.sh' returned a non-zero code: 3\n`;
    expect(patchNotApplied(log)).toBe(false);
  });

  it('finds the marker printed on its own, coloured or not', () => {
    expect(
      patchNotApplied(
        `${step}\nerror: patch failed: x.py:1\n\u001b[91m${PATCH_FAILED_MARKER}\n\u001b[0mThe command returned a non-zero code: 97\n`,
      ),
    ).toBe(true);
    expect(patchNotApplied(`${step}\n${PATCH_FAILED_MARKER}\n`)).toBe(true);
  });
});
