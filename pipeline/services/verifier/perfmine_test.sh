#!/usr/bin/env bash
# perfmine's verifier of @INSTANCE_ID@, Harbor's tests/test.sh: Harbor copies tests/ to /tests once the agent
# is done and runs this as root ([verifier] user). It writes to /logs/verifier: reward.json (reward, correct,
# speedup, expert_speedup, advantage, speedup_all, expert_speedup_all, advantage_all, improved_workloads,
# expert_measured, verifier_error, hack and suspect: counts of the hack detector's findings, finding_<rule>:
# each rule's count, outside_credited, memoised), reward.txt (the reward alone), perfmine-verify.json (every
# workload with its speedup, interval and verdict; the checks; the findings; the formula) and agent.patch (the
# change it took). It always ends with a verdict: before anything else, every process not run by root is
# stopped and killed, /logs/verifier is emptied, closed to other users, and given the failure reward with
# verifier_error = 1, which the verifier replaces with its own verdict.
#
# @REWARD_FORMULA@
#
# PERFMINE_VERIFY_ROUNDS=N measures N rounds (at least 3) instead of the task's protocol: quick checks of the
# task itself, not scores.
set -u
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C.UTF-8
umask 022
here=/tests
out=/logs/verifier
say() { echo "[perfmine test.sh] $*" >&2; }
[ "$(id -u)" = 0 ] || { say "the verifier runs as root"; exit 2; }
# nothing of the agent runs on: every process with a uid other than root's is stopped (until none is left
# that is not), then killed
seen=" "
for _ in $(seq 50); do
  fresh=0
  for d in /proc/[0-9]*; do
    pid=${d#/proc/}
    case "$seen" in *" $pid "*) continue ;; esac
    read -r _ r e s f < <(grep -m1 "^Uid:" "$d/status" 2>/dev/null) || continue
    [ "$r$e$s$f" = 0000 ] && continue
    kill -STOP "$pid" 2>/dev/null
    seen="$seen$pid "
    fresh=1
  done
  [ "$fresh" = 0 ] && break
done
for pid in $seen; do kill -KILL "$pid" 2>/dev/null; done
# a verdict from the first moment: the folder emptied (but for the output Harbor writes to), root's alone,
# and the failure reward in it until the verifier writes its own
mkdir -p "$out"
find "$out" -mindepth 1 -maxdepth 1 ! -name test-stdout.txt -exec rm -rf {} +
chown root:root "$out" 2>/dev/null
chmod 755 "$out"
echo -1 > "$out/reward.txt"
echo '{"reward": -1, "correct": 0, "verifier_error": 1}' > "$out/reward.json"
cd "$here" || exit 3
# /tests holds exactly the files of this task, unchanged (MANIFEST.sha256), and no link
if [ -n "$(find . -type l -print -quit)" ]; then say "symbolic links under $here"; exit 3; fi
if ! sha256sum --quiet --strict --check MANIFEST.sha256; then say "files under $here differ from the task's"; exit 3; fi
listed=$(awk '{ print $2 }' MANIFEST.sha256 | LC_ALL=C sort)
present=$(find . -type f ! -path ./MANIFEST.sha256 -printf '%P\n' | LC_ALL=C sort)
if [ "$listed" != "$present" ]; then say "files under $here that the task did not put there"; exit 3; fi
exec "${PERFMINE_PYTHON:-python3}" -I -S "$here/perfmine/verify.py" --spec "$here/perfmine/verify.json" --tests "$here" \
  --repo /repo --out "$out" --user nobody ${PERFMINE_VERIFY_ROUNDS:+--rounds "$PERFMINE_VERIFY_ROUNDS"}
