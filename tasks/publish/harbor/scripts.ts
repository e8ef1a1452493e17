/**
 * The oracle's script of a Harbor task: `solution/solve.sh` (the expert patch applied to /repo's
 * working tree). The verifier's test.sh and the environment's agent user are the verifier
 * folder's (pipeline/services/verifier/verifier-folder.ts). Pure.
 */

export function solveScript(instanceId: string): string {
  return [
    '#!/usr/bin/env bash',
    `# The oracle of ${instanceId}: the expert's patch (the pull request's own diff against the base commit)`,
    "# applied to /repo's working tree. Harbor copies solution/ to /solution and runs this as the agent.",
    'set -euo pipefail',
    'patch=/solution/expert.patch',
    '[ -f "$patch" ] || patch="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/expert.patch"',
    'cd /repo',
    'git apply --whitespace=nowarn "$patch"',
    'git status --short',
    '',
  ].join('\n');
}
