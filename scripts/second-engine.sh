#!/usr/bin/env bash
# A second Docker engine on this machine, standing in for another machine that never ran perfmine:
# its own data directory (emptied at start: none of this machine's images), its own socket, exec
# root and containerd, and a bridge of its own (pm-engine2, 10.213.0.1/24) with neither NAT nor
# iptables rules, so its containers reach nothing beyond it; it reaches only what this host's
# loopback serves (the registry of scripts/setup-registry.sh). Not `--bridge none`: a dockerd
# started so removes docker0, the first engine's bridge, from the namespace they share.
#
#   scripts/second-engine.sh start    start it empty; prints the DOCKER_HOST to use
#   scripts/second-engine.sh stop     stop it and remove its data
#
# Environment: PERFMINE_ENGINE2_ROOT (default /var/lib/perfmine-engine2), PERFMINE_ENGINE2_SOCKET
# (default /run/perfmine-engine2/docker.sock). Needs root and Debian's docker.io (setup-docker.sh).
set -euo pipefail

root=${PERFMINE_ENGINE2_ROOT:-/var/lib/perfmine-engine2}
run=$(dirname "${PERFMINE_ENGINE2_SOCKET:-/run/perfmine-engine2/docker.sock}")
socket=${PERFMINE_ENGINE2_SOCKET:-$run/docker.sock}
bridge=pm-engine2
log() { printf '[second-engine] %s\n' "$*" >&2; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
answers() { DOCKER_HOST="unix://$socket" docker version >/dev/null 2>&1; }

stop() {
  if [ -f "$run/dockerd.pid" ]; then
    pid=$(cat "$run/dockerd.pid")
    if kill -0 "$pid" 2>/dev/null; then
      as_root kill -TERM "$pid"
      for _ in $(seq 1 30); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
      if kill -0 "$pid" 2>/dev/null; then as_root kill -KILL "$pid"; fi
    fi
  fi
  # its containerd's mounts, then its data
  { grep -o " ${root}[^ ]*" /proc/mounts || true; } | sort -r | while read -r m; do as_root umount -l "$m" 2>/dev/null || true; done
  as_root rm -rf "$root" "$run"
  if ip link show "$bridge" >/dev/null 2>&1; then as_root ip link del "$bridge"; fi
}

case "${1:-}" in
  start)
    stop
    as_root mkdir -p "$root" "$run"
    if ! ip link show "$bridge" >/dev/null 2>&1; then
      as_root ip link add "$bridge" type bridge
      as_root ip addr add 10.213.0.1/24 dev "$bridge"
      as_root ip link set "$bridge" up
    fi
    log "starting dockerd with an empty data root $root on unix://$socket"
    as_root setsid -f sh -c "exec dockerd --data-root '$root' --exec-root '$run/exec' --pidfile '$run/dockerd.pid' \
      --host 'unix://$socket' --bridge '$bridge' --iptables=false --ip-masq=false >'$run/dockerd.log' 2>&1"
    for _ in $(seq 1 "${PERFMINE_DOCKER_WAIT:-60}"); do
      if answers; then
        count=$(DOCKER_HOST="unix://$socket" docker images -q | wc -l)
        if [ "$count" != 0 ]; then log "the second engine holds $count images at start"; exit 1; fi
        log "up: DOCKER_HOST=unix://$socket"
        echo "unix://$socket"
        exit 0
      fi
      sleep 1
    done
    log "the second dockerd did not answer; last lines of its log:"
    tail -n 30 "$run/dockerd.log" >&2 || true
    exit 1
    ;;
  stop)
    stop
    log "stopped"
    ;;
  *)
    echo "usage: $0 start|stop" >&2
    exit 2
    ;;
esac
