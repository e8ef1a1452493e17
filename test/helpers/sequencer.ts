import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The order the suites start in. The suites that measure with the harness take a measurement slot
 * (test/helpers/measure-slot.ts): an exclusive one runs while no other measures, shared ones run
 * together. So that no worker waits long for a slot and the run does not end on one long suite:
 * 1. the two longest shared ones start first, one on each worker (run-cli about 1,060 s, score
 *    515 s in stop 24's CI, 831 s in a slower run); they measure together;
 * 2. then a long suite that measures nothing (eras, 400 to 500 s), which the score suite's worker
 *    takes next, so that the month rarely waits for run-cli's slot;
 * 3. then the month (exclusive, 926 to 994 s), beside the suites that measure nothing, which come
 *    after it in vitest's own order (larger files first on a clean clone, or failed first and
 *    then longest with durations cached), so that the run ends on short files.
 * Before stop 25 run-cli started last and the run ended on it alone, beside an idle worker.
 * (The power suite, exclusive too, runs on its own: `npm run test:power`; the long suites,
 * asv-engine, kill-docker and the Slurm month, with `npm run test:long`, in the order of LAST.)
 */
export const FIRST: readonly string[] = [
  'test/e2e/run-cli.docker.test.ts',
  'test/validate/score/score.docker.test.ts',
  'test/synthesize/eras.docker.test.ts',
  'test/e2e/month.docker.test.ts',
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
