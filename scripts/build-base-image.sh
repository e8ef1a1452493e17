#!/usr/bin/env bash
# Build perfmine's local base image from Debian packages, for hosts that cannot reach Docker Hub:
# debootstrap a minimal bookworm root filesystem with the Python toolchain, git and a C/C++
# toolchain, then `docker import` it. Skips all work when the tag already exists.
#
#   scripts/build-base-image.sh [TAG]        (default perfmine/base:bookworm)
#
# Environment: PERFMINE_DEBIAN_MIRROR (default http://deb.debian.org/debian),
#              PERFMINE_DEBIAN_SUITE (default bookworm; e.g. trixie for a newer Python, NumPy,
#              Cython, GEOS: a repository's own base image, `repositories."owner/name".baseImage`),
#              PERFMINE_REBUILD_BASE=1 to rebuild even when the tag exists.
# The image has no asv: production images add the real asv with pip (or from a wheelhouse, see
# the README); tests add the stand-in from test/fakes/.
set -euo pipefail

tag=${1:-${PERFMINE_BASE_IMAGE:-perfmine/base:bookworm}}
mirror=${PERFMINE_DEBIAN_MIRROR:-http://deb.debian.org/debian}
suite=${PERFMINE_DEBIAN_SUITE:-bookworm}
log() { printf '[build-base-image] %s\n' "$*" >&2; }

if ! docker version >/dev/null 2>&1; then
  log "the Docker engine does not answer; run scripts/setup-docker.sh first"
  exit 1
fi
if [ "${PERFMINE_REBUILD_BASE:-0}" != 1 ] && docker image inspect "$tag" >/dev/null 2>&1; then
  log "$tag already exists; nothing to do (PERFMINE_REBUILD_BASE=1 rebuilds it)"
  exit 0
fi
command -v debootstrap >/dev/null 2>&1 || { log "debootstrap is missing; run scripts/setup-docker.sh first"; exit 1; }

packages=(
  ca-certificates git
  python3 python3-dev python3-venv python3-pip python3-setuptools python3-wheel python3-pytest
  gcc g++ make libc6-dev
)
root=$(mktemp -d /var/tmp/perfmine-rootfs.XXXXXX)
trap 'rm -rf "$root"' EXIT

log "debootstrap $suite (minbase) into $root from $mirror"
include=$(IFS=,; echo "${packages[*]}")
debootstrap --variant=minbase --include="$include" "$suite" "$root" "$mirror" >"$root.log" 2>&1 \
  || { tail -n 40 "$root.log" >&2; rm -f "$root.log"; exit 1; }
rm -f "$root.log"

# Slim the tree: package caches and lists are not needed inside the image.
rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/* "$root"/usr/share/doc/* \
       "$root"/usr/share/man/* "$root"/usr/share/locale/*

log "importing as $tag"
tar -C "$root" -c . | docker import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'ENV LANG=C.UTF-8' \
  --change 'ENV PIP_BREAK_SYSTEM_PACKAGES=1' \
  --change 'ENV PIP_DISABLE_PIP_VERSION_CHECK=1' \
  --change 'ENV PYTHONDONTWRITEBYTECODE=1' \
  --change "LABEL org.perfmine.base=$suite" \
  --change 'WORKDIR /' \
  --change 'CMD ["/bin/bash"]' \
  - "$tag" >/dev/null
docker run --rm --network none "$tag" python3 -c 'import sys, pytest; print("python", sys.version.split()[0], "pytest", pytest.__version__)'
log "built $tag"
