import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The order the suites start in. The suites that measure with the harness take a measurement slot
 * (test/helpers/measure-slot.ts): the month's is exclusive (no other suite measures meanwhile),
 * run-cli's and score's are shared (they measure together). A suite waiting for its slot holds its
 * worker idle, so the order keeps any from waiting:
 * 1. the month first: nothing holds a slot yet (926 to 1,150 s in CI runs when it measured three
 *    candidates, 98 to 128 s here on a quiet machine; 62 to 66 s here with its two);
 * 2. then long suites that measure nothing, for the other worker while the month runs (eras,
 *    secrets, docker faults, build failures: 1,575 to 1,835 s together in CI runs, 161 to 176 s
 *    here), so that a worker reaches run-cli and score after the month has ended;
 * 3. run-cli and score (1,060 to 1,459 s and about 515 s in CI runs), together;
 * 4. the rest in vitest's own order (larger files first on a clean clone, or failed first and
 *    then longest with durations cached), so that the run ends on short files.
 * In stop 24's order (run-cli and score first, the month after eras) the month waited 500 s for
 * run-cli's slot with its worker idle, and CI stopped the run at its time limit.
 * (The power suite, exclusive too, runs on its own: `npm run test:power`; the long suites,
 * asv-engine, kill-docker and the Slurm month, with `npm run test:long`, in the order of LAST.)
 */
export const FIRST: readonly string[] = [
  'test/e2e/month.docker.test.ts',
  'test/synthesize/eras.docker.test.ts',
  'test/faults/secrets.docker.test.ts',
  'test/faults/docker-faults.docker.test.ts',
  'test/synthesize/failures.docker.test.ts',
  'test/e2e/run-cli.docker.test.ts',
  'test/tasks/score/score.docker.test.ts',
];
export const LAST: readonly string[] = [
  'test/e2e/asv-engine.docker.test.ts',
  'test/faults/kill-docker-stages.docker.test.ts',
  'test/executor/demo-month.slurm.test.ts',
];

export default class MeasuringSuitesApart extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (spec: TestSpecification) => {
      const path = relative(this.ctx.config.root, spec.moduleId).split('\\').join('/');
      if (FIRST.includes(path)) return FIRST.indexOf(path);
      if (LAST.includes(path)) return FIRST.length + 1 + LAST.indexOf(path);
      return FIRST.length;
    };
    // Array#sort is stable: the suites that measure nothing keep vitest's order among themselves.
    return sorted.sort((a, b) => rank(a) - rank(b));
  }
}
