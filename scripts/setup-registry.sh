#!/usr/bin/env bash
# A Docker distribution registry on loopback, for executor.registry (verified images between
# nodes), idempotently:
#  - installs Debian's docker-registry when missing (needs root + apt);
#  - starts it on 127.0.0.1:${PERFMINE_REGISTRY_PORT:-5000} without authentication, storing
#    under /var/lib/perfmine-registry, when nothing answers there;
#  - waits until GET /v2/ answers.
# The Docker engine pulls from and pushes to a registry on 127.0.0.0/8 over plain HTTP without
# further configuration. On a cluster, run the registry where every node reaches it and set
# executor.registry to its host:port.
set -euo pipefail

log() { printf '[setup-registry] %s\n' "$*" >&2; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
port=${PERFMINE_REGISTRY_PORT:-5000}
answers() { python3 -c "import urllib.request,sys; urllib.request.urlopen('http://127.0.0.1:$port/v2/', timeout=2)" >/dev/null 2>&1; }

if answers; then
  log "registry already answering on 127.0.0.1:$port"
  exit 0
fi

if ! command -v docker-registry >/dev/null 2>&1; then
  log "installing docker-registry from Debian"
  export DEBIAN_FRONTEND=noninteractive
  if ! ls /var/lib/apt/lists/*_Packages >/dev/null 2>&1; then as_root apt-get update -qq; fi
  as_root apt-get install -y -qq --no-install-recommends docker-registry >/dev/null \
    || { as_root apt-get update -qq && as_root apt-get install -y -qq --no-install-recommends docker-registry >/dev/null; }
fi

config=/etc/perfmine/registry.yml
as_root mkdir -p /etc/perfmine /var/lib/perfmine-registry
as_root tee "$config" >/dev/null <<YAML
version: 0.1
log:
  level: warn
storage:
  filesystem:
    rootdirectory: /var/lib/perfmine-registry
  delete:
    enabled: true
http:
  addr: 127.0.0.1:$port
YAML

logfile=${PERFMINE_REGISTRY_LOG:-/var/log/perfmine-registry.log}
log "starting docker-registry on 127.0.0.1:$port (log: $logfile)"
as_root setsid -f sh -c "exec docker-registry serve '$config' >'$logfile' 2>&1"
for _ in $(seq 1 30); do
  if answers; then log "registry is up"; exit 0; fi
  sleep 1
done
log "docker-registry did not answer within 30s; last lines of $logfile:"
tail -n 20 "$logfile" >&2 || true
exit 1
