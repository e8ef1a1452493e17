import type { Config } from '../../../../pipeline/config/schema.js';
import { perfmineVersion } from '../../../../pipeline/package-root.js';
import { verifierFiles } from '../../../../pipeline/services/environments/verifier-files.js';
import type { HarborOptions } from './harbor-task.js';
import { repositoryEnvironment } from '../../../../pipeline/config/repository-environment.js';

/** The Harbor export's settings from perfmine's configuration: the container limits and validate's correctness settings. */
export function harborOptionsOf(config: Config): HarborOptions {
  return {
    cpus: config.docker.cpus,
    memoryMb: config.docker.memoryMb,
    storageMb: config.docker.diskMb,
    testTimeoutSeconds: config.validate.testTimeoutSeconds,
    pytestArgs: config.validate.pytestArgs,
    repositoryPytestArgs: (repo) => repositoryEnvironment(config, repo).pytestArgs,
    snapshotTimeoutSeconds: config.validate.snapshotTimeoutSeconds,
    snapshotCallSeconds: config.validate.snapshotCallSeconds,
    buildTimeoutSeconds: config.validate.buildTimeoutSeconds,
    verifierFiles: verifierFiles(),
    producer: `perfmine ${perfmineVersion()}`,
  };
}
