import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The order the suites start in. The suites that measure with the harness take a measurement slot
 * (test/helpers/measure-slot.ts): an exclusive one runs while no other measures, shared ones run
 * together. So that no worker waits long for a slot:
 * 1. the month's suite (exclusive, the longest) starts first, on one worker;
 * 2. the suites that measure nothing run meanwhile on the other (vitest's own order: larger files
 *    first on a clean clone, or failed first and then longest with durations cached);
 * 3. then the shared ones, longest first (their times in stop 23's CI and a local run), two at a
 *    time, so that the last to start is a short one.
 * (The power suite, exclusive too, runs on its own: `npm run test:power`; the long suites,
 * asv-engine and kill-docker, with `npm run test:long`, in this order too.)
 */
export const FIRST: readonly string[] = ['test/e2e/month.docker.test.ts'];
export const LAST: readonly string[] = [
  'test/e2e/run-cli.docker.test.ts',
  'test/e2e/asv-engine.docker.test.ts',
  'test/faults/kill-docker-stages.docker.test.ts',
  'test/validate/score/score.docker.test.ts',
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
