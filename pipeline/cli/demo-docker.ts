import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { packagePath } from '../package-root.js';
import type { DockerService } from '../services/docker.js';

/**
 * What the demo does about the Docker engine before its run: nothing when one answers; on a fresh
 * machine where none does, as root, it sets one up with the project's own script (Debian's
 * docker.io, dockerd started in the background), as it builds the base image; otherwise it goes
 * on, and the stages that need the engine stop with exit 2 and say how to start one.
 */
export type DockerSetupDecision = 'ready' | 'set-up' | 'tell';

/** Pure. */
export function dockerSetupDecision(facts: { readonly engineAnswers: boolean; readonly isRoot: boolean }): DockerSetupDecision {
  if (facts.engineAnswers) return 'ready';
  return facts.isRoot ? 'set-up' : 'tell';
}

export const SETUP_DOCKER_SCRIPT = join(packagePath('scripts'), 'setup-docker.sh');

export interface DockerSetupDeps {
  readonly docker: Pick<DockerService, 'ping'>;
  readonly isRoot: boolean;
  /** Runs scripts/setup-docker.sh; its exit code. */
  readonly runSetup: () => number;
  readonly print: (line: string) => void;
}

/** The real deps: this process's uid, the script run with its output on this terminal. */
export function dockerSetupDeps(docker: Pick<DockerService, 'ping'>, print: (line: string) => void): DockerSetupDeps {
  return {
    docker,
    isRoot: typeof process.getuid === 'function' && process.getuid() === 0,
    runSetup: () => spawnSync('bash', [SETUP_DOCKER_SCRIPT], { stdio: ['ignore', 'inherit', 'inherit'] }).status ?? 1,
    print,
  };
}

/** Acts on the decision; true when an engine answers afterwards. */
export async function ensureDockerEngine(deps: DockerSetupDeps): Promise<boolean> {
  const answers = async () =>
    deps.docker.ping().then(
      () => true,
      () => false,
    );
  const decision = dockerSetupDecision({ engineAnswers: await answers(), isRoot: deps.isRoot });
  if (decision === 'ready') return true;
  if (decision === 'tell') {
    deps.print(
      '\nno Docker engine answers: the stages that need one will say so (as root, `sudo scripts/setup-docker.sh` installs and starts one)',
    );
    return false;
  }
  deps.print(`\nno Docker engine answers: setting one up with ${SETUP_DOCKER_SCRIPT} (Debian's docker.io, dockerd in the background)`);
  const code = deps.runSetup();
  if (code === 0 && (await answers())) {
    deps.print('the Docker engine is up');
    return true;
  }
  deps.print(`setting up the Docker engine failed (exit ${code}): the stages that need one will say so`);
  return false;
}
