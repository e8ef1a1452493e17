#!/usr/bin/env bash
# The monthly refresh, for cron and systemd. Runs `perfmine run` (default window: the previous full
# calendar month) in PERFMINE_WORKDIR with JSON logs appended to a monthly log file, under an
# exclusive lock so that two runs never share a database: a second start exits 75 at once.
# (perfmine itself also refuses to share a database; the lock makes the refusal quiet and cheap.)
#
#   PERFMINE_WORKDIR   where perfmine.db, perfmine.config.json and out/ live (default: current dir)
#   PERFMINE_DB        database path, relative to the workdir (default perfmine.db)
#   PERFMINE_LOG_DIR   log directory (default logs/)
#   PERFMINE_BIN       the perfmine executable (default: perfmine on PATH, else the checkout's)
# Extra arguments go to `perfmine run` (e.g. --month 2025-04).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "${PERFMINE_WORKDIR:-$PWD}"
db=${PERFMINE_DB:-perfmine.db}
logdir=${PERFMINE_LOG_DIR:-logs}
bin=${PERFMINE_BIN:-$(command -v perfmine || echo "$here/../dist/pipeline/cli/entry.js")}
mkdir -p "$logdir"

exec 9>>"$db.lock"
if ! flock --nonblock 9; then
  echo "perfmine-cron: another run holds $db.lock; not starting" >&2
  exit 75
fi

log="$logdir/perfmine-$(date -u +%Y-%m).jsonl"
echo "perfmine-cron: run started $(date -u +%FT%TZ), logs in $log" >&2
export PERFMINE_LOG_FORMAT=json
status=0
"$bin" --db "$db" --json run "$@" >>"$log" 2>&1 || status=$?
echo "perfmine-cron: run finished with exit $status (0 ok, 1 some items failed, 2 configuration, 130 interrupted)" >&2
exit "$status"
