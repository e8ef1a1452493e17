#!/usr/bin/env bash
# Everything the test suite needs beyond `npm ci`, installed by the project's own files:
# a running Docker engine and the local base image, a one-host Slurm cluster, a loopback Docker registry, Python's yaml. Idempotent and quick when all is present.
# Needs root (or sudo) the first time, for apt-get and dockerd.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bash "$here/setup-docker.sh"
bash "$here/build-base-image.sh"
bash "$here/setup-chromium.sh"
bash "$here/setup-slurm.sh"
bash "$here/setup-registry.sh"
# The publish test parses the dataset card's YAML header with Python's yaml (Debian's python3-yaml).
if ! python3 -c 'import yaml' 2>/dev/null; then
  [ -d /var/lib/apt/lists ] && [ -n "$(ls -A /var/lib/apt/lists 2>/dev/null | grep -v lock)" ] || apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-yaml >/dev/null
fi
