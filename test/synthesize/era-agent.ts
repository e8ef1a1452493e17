import { correctScript } from '../fixtures/python-repo.js';
import type { ScriptedRequest, ScriptedRule } from '../fakes/scripted-llm.js';

/**
 * What a competent model would write for the fixture's build eras, given the failure it is
 * shown: the correct script only for the right failure. The same rules can be served by the
 * HTTP loopback OpenAI server once it lands (they read only the prompt inputs).
 */
const logs = (r: ScriptedRequest) => `${r.inputs.stderr_tail ?? ''}\n${r.inputs.stdout_tail ?? ''}`;
const HELPER_ONLY = `#!/usr/bin/env bash
set -euo pipefail
cd /repo
python3 -m pip install --no-build-isolation --no-deps ./tools/buildhelper
python3 -m pip install --no-build-isolation --no-deps -e .
`;

export const ERA_RULES: readonly ScriptedRule[] = [
  {
    name: 'missing-header-after-helper',
    when: (r) =>
      r.prompt === 'build-agent' &&
      logs(r).includes('_tables.h: No such file or directory') &&
      (r.inputs.last_script ?? '').includes('buildhelper'),
    answer: () => ({
      reasoning: 'The helper is installed now; the header still has to be generated before the build.',
      script: correctScript('src-helper'),
    }),
  },
  {
    name: 'missing-header',
    when: (r) => r.prompt === 'build-agent' && logs(r).includes('_tables.h: No such file or directory'),
    toolCalls: [
      { name: 'list_tree', args: { path: 'tools' } },
      { name: 'read_file', args: { path: 'tools/gen_tables.py' } },
    ],
    answer: () => ({
      reasoning: 'tools/gen_tables.py writes the missing header; run it before the build.',
      script: correctScript('pyproject-c'),
    }),
  },
  {
    name: 'missing-build-helper',
    when: (r) => r.prompt === 'build-agent' && logs(r).includes("No module named 'fixture_buildhelper'"),
    toolCalls: [
      { name: 'list_tree', args: {} },
      { name: 'probe_repo', args: { command: 'ls tools/buildhelper && grep -n buildhelper pyproject.toml' } },
      { name: 'try_import', args: { module: 'fixture_buildhelper' } },
    ],
    answer: () => ({
      reasoning: 'setup.py imports fixture_buildhelper, shipped in tools/buildhelper: install it first.',
      script: HELPER_ONLY,
    }),
  },
  {
    name: 'clueless',
    when: () => true,
    answer: () => ({
      reasoning: 'I cannot tell from this failure.',
      script: '#!/usr/bin/env bash\necho "no idea how to build this" >&2\nexit 1\n',
    }),
  },
];
