#!/usr/bin/env bash
# Everything the test suite needs beyond `npm ci`, installed by the project's own files:
# a running Docker engine and the local base images (bookworm, trixie), a one-host Slurm cluster, a loopback Docker registry, Python's yaml, dpkg-dev. Idempotent and quick when all is present.
# Needs root (or sudo) the first time, for apt-get and dockerd.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bash "$here/setup-docker.sh"
# The base image (debootstrap into a directory of its own, then `docker import`: 62 s on a quiet
# machine here, several minutes on a loaded one) is built while the other packages install, as it
# takes no apt lock of this machine; its log is printed when it ends.
# It runs in a process group of its own: when a later step fails, the exit trap stops the build
# (debootstrap included; the build's own trap removes its root filesystem) and prints its log.
base_log=$(mktemp)
# Then trixie's (Python 3.13: the harness's sys.monitoring tracer is tested there, and the
# repository base images of the shakedown are built on it).
setsid bash -c "bash '$here/build-base-image.sh' && PERFMINE_DEBIAN_SUITE=trixie bash '$here/build-base-image.sh' perfmine/base:trixie" >"$base_log" 2>&1 &
base=$!
stop_base() {
  if kill -0 "$base" 2>/dev/null; then
    echo "[setup-test-env] a step failed; stopping the base image's build" >&2
    kill -TERM -- "-$base" 2>/dev/null || true
    wait "$base" 2>/dev/null || true
    cat "$base_log" >&2
  fi
  rm -f "$base_log"
}
trap stop_base EXIT
bash "$here/setup-chromium.sh"
bash "$here/setup-slurm.sh"
bash "$here/setup-registry.sh"
# The publish test parses the dataset card's YAML header with Python's yaml (Debian's python3-yaml).
if ! python3 -c 'import yaml' 2>/dev/null; then
  compgen -G '/var/lib/apt/lists/*_Packages*' >/dev/null || apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-yaml >/dev/null
fi
# The scripts' own checkers (test/foundation/scripts-lint.test.ts): shellcheck for every shell
# script, pyflakes and pycodestyle for every Python file (Debian's shellcheck, pyflakes3, pycodestyle).
if ! command -v shellcheck >/dev/null 2>&1 || ! command -v pyflakes3 >/dev/null 2>&1 || ! command -v pycodestyle >/dev/null 2>&1; then
  compgen -G '/var/lib/apt/lists/*_Packages*' >/dev/null || apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends shellcheck pyflakes3 pycodestyle >/dev/null
fi
# The Debian-lock test serves a Debian repository of its own .deb packages, indexed with
# dpkg-scanpackages (Debian's dpkg-dev; dpkg-deb, which builds them, is in dpkg itself).
if ! command -v dpkg-scanpackages >/dev/null 2>&1; then
  compgen -G '/var/lib/apt/lists/*_Packages*' >/dev/null || apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends dpkg-dev >/dev/null
fi
base_code=0
wait "$base" || base_code=$?
trap - EXIT
cat "$base_log" >&2
rm -f "$base_log"
if [ "$base_code" != 0 ]; then
  echo "[setup-test-env] scripts/build-base-image.sh failed (exit $base_code)" >&2
  exit "$base_code"
fi
