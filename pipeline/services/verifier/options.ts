import type { Config } from '../../config/schema.js';
import { perfmineVersion } from '../../package-root.js';
import { verifierFiles } from '../environments/verifier-files.js';
import type { HarborOptions } from './verifier-folder.js';
import { repositoryEnvironment } from '../../config/repository-environment.js';

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
    agentAllowedHosts: config.emit.publish.agentAllowedHosts,
  };
}
