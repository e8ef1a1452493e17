import type { MonthTask } from '../../../stages/emit/month-files.js';
import type { HarborOptions } from '../../../pipeline/services/verifier/verifier-folder.js';
import { HARBOR_REQUIRES } from './harbor-task.js';

/**
 * The Harbor dataset's README.md: what the tasks need of Harbor, how their environments are had
 * (a prebuilt image by digest, or a build of environment/), and how to let an agent reach its
 * model's API while the verifier keeps no network. Pure.
 */
export function harborReadme(tasks: readonly MonthTask[], options: HarborOptions): string {
  const hosts = options.agentAllowedHosts ?? [];
  const images = tasks.filter((t) => t.row.docker_image).length;
  return [
    '# perfmine tasks for Harbor',
    '',
    `${tasks.length} performance-optimization task${tasks.length === 1 ? '' : 's'} in Harbor's task format, one folder each (\`harbor run -p .\` runs them all).`,
    '',
    '## What they need',
    '',
    `- ${HARBOR_REQUIRES}.`,
    "- Linux containers; each task's `[environment]` says its CPUs, memory and storage.",
    images === tasks.length && tasks.length > 0
      ? '- Every task names its environment image by digest (`[environment] docker_image`), pushed by `perfmine publish --registry`; its `environment/Dockerfile` (the fallback build) starts from the base image in the same registry by digest, so both work wherever that registry is reachable.'
      : images > 0
        ? `- ${images} of the tasks name a prebuilt image (\`docker_image\`); the others are built from \`environment/\`.`
        : "- The tasks are built from `environment/` (no prebuilt image: publish with `--registry` to push them); the Dockerfiles start from perfmine's base image, which must be in the engine that builds them or in a registry it reaches.",
    "- The image has `tmux` (Harbor's default agent needs it) and `perfmine-bench` (how the agent measures its change).",
    '',
    '## Network',
    '',
    hosts.length > 0
      ? `The agent may reach ${hosts.map((h) => `\`${h}\``).join(', ')} while it works (\`[agent] network_mode = "allowlist"\`); the environment's network is open during Harbor's agent setup, which installs the agent; the verifier runs with no network (\`[verifier] network_mode = "no-network"\`).`
      : 'The tasks have no network at all (`[environment] network_mode = "no-network"`): an agent that calls its model\'s API from inside the container cannot. To let it, publish with `emit.publish.agentAllowedHosts` set to its API\'s hosts (for example `["api.openai.com"]`): the agent then gets `[agent] network_mode = "allowlist"` with those hosts while it works, the environment\'s network is open for the agent\'s setup, and the verifier keeps none; or run an agent whose model is reached from outside the container (Harbor\'s agents that drive the container through tmux from the host).',
    '',
    '## The verifier',
    '',
    "`tests/test.sh` runs as root once the agent is done; it needs no network. Its reward formula is each task's `[metadata] reward_formula`.",
    '',
  ].join('\n');
}
