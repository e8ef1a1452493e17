#!/usr/bin/env bash
# The package as a user gets it: `npm pack` of this checkout, installed into an empty prefix (its
# dependencies from the npm registry, better-sqlite3 compiled there), then `perfmine demo` run from
# that install, in an empty directory, to its end. Fails when the tarball lacks a file the demo
# needs (the harness, the lock reader, the base image's recipe, the prompts, the migrations).
#
#   scripts/check-pack.sh [WORKDIR]     (default: a new temporary directory, removed at the end)
#
# Needs what the demo needs: a Docker engine and the base image (scripts/setup-test-env.sh).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
work=${1:-}
if [ -z "$work" ]; then
  work=$(mktemp -d /var/tmp/perfmine-pack.XXXXXX)
  trap 'rm -rf "$work"' EXIT
fi
log() { printf '[check-pack] %s\n' "$*" >&2; }
mkdir -p "$work/pack" "$work/prefix" "$work/run"

log "npm pack"
tarball=$(cd "$here" && npm pack --silent --pack-destination "$work/pack")
tarball="$work/pack/$tarball"
log "$(du -h "$tarball" | cut -f1) $(tar -tzf "$tarball" | wc -l) files: $tarball"

log "npm install of the tarball into an empty prefix $work/prefix"
(cd "$work/prefix" && printf '{ "name": "perfmine-pack-check", "private": true }\n' >package.json \
  && CFLAGS="${CFLAGS:--O1}" JOBS="${JOBS:-max}" npm install --no-audit --no-fund --loglevel=error "$tarball")
bin="$work/prefix/node_modules/.bin/perfmine"
[ -x "$bin" ] || { log "the install has no perfmine command at $bin"; exit 1; }
log "perfmine $("$bin" --version)"

log "perfmine demo, from the install, in $work/run"
(cd "$work/run" && "$bin" demo --dir "$work/run/perfmine-demo") | tee "$work/demo.log"
grep -Eq '^[1-9][0-9]* tasks? emitted;' "$work/demo.log" || { log "the demo emitted no task"; exit 1; }
log "the installed package ran the demo to its end"
