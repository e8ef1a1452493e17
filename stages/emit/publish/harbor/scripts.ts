import { FAILURE_REWARD, REWARD_FORMULA } from './reward-formula.js';

/**
 * The scripts of a Harbor task: the oracle's `solution/solve.sh` (the expert patch applied to
 * /repo's working tree) and the verifier's `tests/test.sh` (checks that /tests holds exactly the
 * task's files, then runs perfmine's verifier, tests/perfmine/verify.py, with the image's
 * interpreter in isolated mode). The environment's extra Dockerfile lines make the agent an
 * unprivileged user. Pure.
 */

/** The unprivileged user the agent works as ([agent] user); it owns /repo. */
export const AGENT_USER = 'agent';
/** The user the verifier runs the code under test as (never the agent's). */
export const CODE_USER = 'nobody';

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

export function testScript(instanceId: string): string {
  return [
    '#!/usr/bin/env bash',
    `# perfmine's verifier of ${instanceId}, Harbor's tests/test.sh: Harbor copies tests/ to /tests once the agent`,
    '# is done and runs this as root ([verifier] user). It writes to /logs/verifier: reward.json (reward, correct,',
    '# speedup, expert_speedup, advantage, speedup_all, expert_speedup_all, advantage_all, improved_workloads,',
    "# expert_measured, verifier_error, hack and suspect: counts of the hack detector's findings, finding_<rule>:",
    "# each rule's count, outside_credited, memoised), reward.txt (the reward alone), perfmine-verify.json (every",
    '# workload with its speedup, interval and verdict; the checks; the findings; the formula) and agent.patch (the',
    '# change it took). It always ends with a verdict: before anything else, every process not run by root is',
    '# stopped and killed, /logs/verifier is emptied, closed to other users, and given the failure reward with',
    '# verifier_error = 1, which the verifier replaces with its own verdict.',
    '#',
    ...wrap(REWARD_FORMULA, 100).map((l) => `# ${l}`),
    '#',
    "# PERFMINE_VERIFY_ROUNDS=N measures N rounds (at least 3) instead of the task's protocol: quick checks of the",
    '# task itself, not scores.',
    'set -u',
    'export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C.UTF-8',
    'umask 022',
    'here=/tests',
    'out=/logs/verifier',
    'say() { echo "[perfmine test.sh] $*" >&2; }',
    '[ "$(id -u)" = 0 ] || { say "the verifier runs as root"; exit 2; }',
    "# nothing of the agent runs on: every process with a uid other than root's is stopped (until none is left",
    '# that is not), then killed',
    'seen=" "',
    'for _ in $(seq 50); do',
    '  fresh=0',
    '  for d in /proc/[0-9]*; do',
    '    pid=${d#/proc/}',
    '    case "$seen" in *" $pid "*) continue ;; esac',
    '    read -r _ r e s f < <(grep -m1 "^Uid:" "$d/status" 2>/dev/null) || continue',
    '    [ "$r$e$s$f" = 0000 ] && continue',
    '    kill -STOP "$pid" 2>/dev/null',
    '    seen="$seen$pid "',
    '    fresh=1',
    '  done',
    '  [ "$fresh" = 0 ] && break',
    'done',
    'for pid in $seen; do kill -KILL "$pid" 2>/dev/null; done',
    "# a verdict from the first moment: the folder emptied (but for the output Harbor writes to), root's alone,",
    '# and the failure reward in it until the verifier writes its own',
    'mkdir -p "$out"',
    'find "$out" -mindepth 1 -maxdepth 1 ! -name test-stdout.txt -exec rm -rf {} +',
    'chown root:root "$out" 2>/dev/null',
    'chmod 755 "$out"',
    'echo -1 > "$out/reward.txt"',
    `echo '{"reward": ${FAILURE_REWARD}, "correct": 0, "verifier_error": 1}' > "$out/reward.json"`,
    'cd "$here" || exit 3',
    '# /tests holds exactly the files of this task, unchanged (MANIFEST.sha256), and no link',
    'if [ -n "$(find . -type l -print -quit)" ]; then say "symbolic links under $here"; exit 3; fi',
    'if ! sha256sum --quiet --strict --check MANIFEST.sha256; then say "files under $here differ from the task\'s"; exit 3; fi',
    "listed=$(awk '{ print $2 }' MANIFEST.sha256 | LC_ALL=C sort)",
    "present=$(find . -type f ! -path ./MANIFEST.sha256 -printf '%P\\n' | LC_ALL=C sort)",
    'if [ "$listed" != "$present" ]; then say "files under $here that the task did not put there"; exit 3; fi',
    'exec "${PERFMINE_PYTHON:-python3}" -I -S "$here/perfmine/verify.py" --spec "$here/perfmine/verify.json" --tests "$here" \\',
    `  --repo /repo --out "$out" --user ${CODE_USER} \${PERFMINE_VERIFY_ROUNDS:+--rounds "$PERFMINE_VERIFY_ROUNDS"}`,
    '',
  ].join('\n');
}

/** Lines appended to the task's Dockerfile: the agent's user, owner of /repo (the image's default user stays root). */
export function agentUserLines(): string[] {
  return [
    `# Harbor: the agent works as the unprivileged user ${AGENT_USER} ([agent] user in task.toml), who owns /repo; the verifier`,
    `# runs as root and runs the code under test as ${CODE_USER}, so that nothing the agent leaves can reach the base side,`,
    "# the image or the verifier. /tests, where Harbor copies the verifier's files (the expert's patch among them) once the",
    "# agent is done, is root's alone from the start: a process the agent left behind cannot read them.",
    `RUN useradd --create-home --user-group --shell /bin/bash ${AGENT_USER} && chown -R ${AGENT_USER}:${AGENT_USER} /repo && mkdir -m 700 /tests`,
  ];
}

/** Words of `text` in lines of at most `width` characters. */
export function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(line);
  return lines;
}
