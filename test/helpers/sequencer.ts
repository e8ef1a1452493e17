import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The suites that run a month (or a whole measurement protocol) in Docker, longest first. On a
 * clean clone vitest knows no durations and starts the largest files first, which can leave the
 * longest suite to start last and run alone at the end; these start first, in this order, so
 * that the two workers end together. With durations cached from an earlier run, vitest's own
 * order (failed first, then longest) is kept for the other files.
 */
export const LONG_SUITES: readonly string[] = [
  'test/e2e/month.docker.test.ts',
  'test/e2e/run-cli.docker.test.ts',
  'test/validate/harness-docker/power.docker.test.ts',
  'test/executor/demo-month.slurm.test.ts',
  'test/cli/demo.docker.test.ts',
  'test/validate/score/score.docker.test.ts',
  'test/faults/kill-docker-stages.docker.test.ts',
  'test/e2e/asv-engine.docker.test.ts',
];

export default class LongSuitesFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (spec: TestSpecification) => {
      const i = LONG_SUITES.indexOf(relative(this.ctx.config.root, spec.moduleId).split('\\').join('/'));
      return i === -1 ? LONG_SUITES.length : i;
    };
    // Array#sort is stable: the other files keep vitest's order behind the long ones.
    return sorted.sort((a, b) => rank(a) - rank(b));
  }
}
