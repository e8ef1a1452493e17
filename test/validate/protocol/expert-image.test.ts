import { describe, expect, it } from 'vitest';
import { expertDockerfile, readExpertBuild } from '../../../stages/validate/protocol/expert-image.js';

describe('the expert image', () => {
  const dockerfile = expertDockerfile({ baseImage: 'perfmine/env:abc', repoDir: '/workspace/repo' });

  it('applies the patch to the index, commits it, and reruns the build script in the checkout', () => {
    expect(dockerfile.split('\n')).toEqual([
      'FROM perfmine/env:abc',
      'COPY perfmine/ /perfmine/',
      'WORKDIR /workspace/repo',
      "RUN git -c safe.directory='*' apply --index --whitespace=nowarn /perfmine/expert.patch || { printf '%s %s\\n' '@@perfmine' 'patch-does-not-apply'; exit 97; }",
      `RUN git -c safe.directory='*' -c user.name=perfmine -c user.email=perfmine@localhost commit -q --no-verify --allow-empty -m "perfmine: expert patch"`,
      "RUN bash /perfmine/docker_build.sh || { printf '%s %s\\n' '@@perfmine' 'build-failed'; exit 98; }",
      '',
    ]);
  });

  it("reads a failure by the step's printed mark, which its own command line (echoed in the log) does not contain", () => {
    const echoed = `Step 4/6 : ${dockerfile.split('\n')[3]}\n`;
    expect(readExpertBuild({ ok: false, error: 'returned a non-zero code: 98', log: `${echoed}Step 6/6 : RUN bash ...\ngcc: error\n@@perfmine build-failed\n`, timedOut: false })).toMatchObject({
      ok: false,
      reason: 'expert-build-failed',
    });
    expect(readExpertBuild({ ok: false, error: 'returned a non-zero code: 97', log: `${echoed}error: patch failed\n@@perfmine patch-does-not-apply\n`, timedOut: false })).toMatchObject({
      ok: false,
      reason: 'patch-does-not-apply',
    });
    expect(readExpertBuild({ ok: false, error: null, log: '', timedOut: true })).toMatchObject({ reason: 'expert-build-failed', detail: expect.stringContaining('time limit') });
    expect(readExpertBuild({ ok: true, error: null, log: '', timedOut: false })).toEqual({ ok: true });
  });
});
