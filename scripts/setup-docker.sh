#!/usr/bin/env bash
# Make a Docker engine answer on this machine, idempotently.
#  - installs Debian's docker.io, debootstrap and docker-compose when they are missing (needs root + apt);
#  - starts dockerd in the background when the engine does not answer;
#  - waits until the socket answers (PERFMINE_DOCKER_WAIT seconds, default 60).
# Safe to run again: every step is skipped when already done.
set -euo pipefail

log() { printf '[setup-docker] %s\n' "$*" >&2; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

need=()
command -v dockerd >/dev/null 2>&1 || need+=(docker.io)
command -v debootstrap >/dev/null 2>&1 || need+=(debootstrap)
# Harbor builds a task's environment/ with Compose; the portability tests build it the same way
command -v docker-compose >/dev/null 2>&1 || need+=(docker-compose)
if [ "${#need[@]}" -gt 0 ]; then
  log "installing ${need[*]} from Debian"
  export DEBIAN_FRONTEND=noninteractive
  # apt-get update only once per machine: skip it when package lists are already present.
  if ! ls /var/lib/apt/lists/*_Packages >/dev/null 2>&1; then as_root apt-get update -qq; fi
  as_root apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null \
    || { as_root apt-get update -qq && as_root apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null; }
fi

if docker version >/dev/null 2>&1; then
  log "Docker engine already answering"
  exit 0
fi

logfile=${PERFMINE_DOCKERD_LOG:-/var/log/perfmine-dockerd.log}
log "starting dockerd (log: $logfile)"
# Containers of the pipeline need no user-namespace remapping; the storage driver is left to dockerd.
# setsid: dockerd gets a session of its own, so that a signal to the caller's process group (a shell or job ending) never reaches it.
as_root setsid -f sh -c "exec dockerd >'$logfile' 2>&1"

wait_s=${PERFMINE_DOCKER_WAIT:-60}
for _ in $(seq 1 "$wait_s"); do
  if docker version >/dev/null 2>&1; then log "Docker engine is up"; exit 0; fi
  sleep 1
done
log "dockerd did not answer within ${wait_s}s; last lines of $logfile:"
tail -n 30 "$logfile" >&2 || true
exit 1
