#!/usr/bin/env bash
# Build perfmine's local base image from Debian packages, for hosts that cannot reach Docker Hub:
# debootstrap a minimal bookworm root filesystem with the Python toolchain, git, a C/C++
# toolchain and tmux, then `docker import` it.
#
#   scripts/build-base-image.sh [TAG]        (default perfmine/base:bookworm)
#
# The image is built from a pinned recipe: the suite, the package list below, and the lock
# scripts/base-images/<suite>-<arch>.lock (every installed package, `name=version arch`). A build
# whose package set differs from the lock fails, naming each package, and tags nothing; with no
# lock for the suite it writes one. The image carries the lock (/etc/perfmine/base.lock) and the
# recipe's sha256 (label org.perfmine.base.recipe); an existing TAG is built again only when its
# label differs from the recipe (scripts/base-images/lock.sh computes it).
#
# Environment: PERFMINE_DEBIAN_MIRROR (default http://deb.debian.org/debian),
#              PERFMINE_DEBIAN_SUITE (default bookworm; e.g. trixie for a newer Python, NumPy,
#              Cython, GEOS: a repository's own base image, `repositories."owner/name".baseImage`),
#              PERFMINE_REBUILD_BASE=1 to rebuild even when the tag has the recipe,
#              PERFMINE_BASE_RELOCK=1 to build from what the mirror serves now and write the lock anew,
#              PERFMINE_BASE_LOCK_DIR (default scripts/base-images) where the locks are.
# The image has no asv: production images add the real asv with pip (or from a wheelhouse, see
# docs/synthesize.md); tests add the stand-in from test/fakes/.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
lockctl="$here/base-images/lock.sh"
tag=${1:-${PERFMINE_BASE_IMAGE:-perfmine/base:bookworm}}
mirror=${PERFMINE_DEBIAN_MIRROR:-http://deb.debian.org/debian}
suite=${PERFMINE_DEBIAN_SUITE:-bookworm}
relock=${PERFMINE_BASE_RELOCK:-0}
lock_dir=${PERFMINE_BASE_LOCK_DIR:-$here/base-images}
log() { printf '[build-base-image] %s\n' "$*" >&2; }

# The recipe's package list (tmux: the terminal Harbor's agents drive, with no network).
packages=(
  ca-certificates git
  python3 python3-dev python3-venv python3-pip python3-setuptools python3-wheel python3-pytest
  gcc g++ make libc6-dev
  tmux
)

arch=$(dpkg --print-architecture 2>/dev/null || true)
if [ -z "$arch" ]; then
  case $(uname -m) in
    x86_64) arch=amd64 ;;
    aarch64 | arm64) arch=arm64 ;;
    *) log "cannot tell this machine's Debian architecture (uname -m: $(uname -m))"; exit 1 ;;
  esac
fi
lock="$lock_dir/$suite-$arch.lock"
relock_hint="PERFMINE_BASE_RELOCK=1${PERFMINE_DEBIAN_SUITE:+ PERFMINE_DEBIAN_SUITE=$suite} scripts/build-base-image.sh $tag"

if ! docker version >/dev/null 2>&1; then
  log "the Docker engine does not answer; run scripts/setup-docker.sh first"
  exit 1
fi

# The recipe this build follows, known before any work when the lock exists and is kept.
recipe=
if [ "$relock" != 1 ] && [ -f "$lock" ]; then
  changed=$("$lockctl" header-diff "$lock" "$suite" "$arch" "${packages[@]}")
  if [ -n "$changed" ]; then
    log "the lock $lock was written for another recipe:"
    while IFS= read -r line; do log "  $line"; done <<<"$changed"
    log "build from what the mirror serves now and write the lock anew with $relock_hint, then commit the lock"
    exit 1
  fi
  recipe=$("$lockctl" digest "$suite" "$lock" "${packages[@]}")
fi

if docker image inspect "$tag" >/dev/null 2>&1; then
  have=$(docker image inspect -f '{{ index .Config.Labels "org.perfmine.base.recipe" }}' "$tag" 2>/dev/null || true)
  [ "$have" = '<no value>' ] && have=
  if [ "${PERFMINE_REBUILD_BASE:-0}" != 1 ] && [ -n "$recipe" ] && [ "$have" = "$recipe" ]; then
    log "$tag was built from this recipe ($recipe); nothing to do (PERFMINE_REBUILD_BASE=1 rebuilds it)"
    exit 0
  fi
  if [ "$relock" = 1 ]; then log "$tag exists; PERFMINE_BASE_RELOCK=1: building it again and writing $lock"
  elif [ -z "$recipe" ]; then log "$tag exists; no lock for $suite ($arch) yet: building it again and writing $lock"
  elif [ "$have" != "$recipe" ]; then log "$tag was built from recipe ${have:-(none recorded)}, the recipe is now $recipe: building it again"
  else log "$tag exists; PERFMINE_REBUILD_BASE=1: building it again"
  fi
fi
[ "$(id -u)" = 0 ] || { log "debootstrap needs root: run it with sudo"; exit 1; }
command -v debootstrap >/dev/null 2>&1 || { log "debootstrap is missing; run scripts/setup-docker.sh first"; exit 1; }

work=$(mktemp -d /var/tmp/perfmine-base.XXXXXX)
root="$work/root"
trap 'rm -rf "$work"' EXIT

log "debootstrap $suite ($arch, minbase) into $root from $mirror"
include=$(IFS=,; echo "${packages[*]}")
debootstrap --variant=minbase --arch="$arch" --include="$include" "$suite" "$root" "$mirror" >"$work/debootstrap.log" 2>&1 \
  || { tail -n 40 "$work/debootstrap.log" >&2; exit 1; }

# The package set against the lock: the same, or no image.
"$lockctl" installed "$root" >"$work/installed"
if [ "$relock" != 1 ] && [ -f "$lock" ]; then
  if ! "$lockctl" diff "$lock" "$work/installed" >"$work/differences"; then
    log "the package set differs from the lock $lock ($(wc -l <"$work/differences") package(s)); no image tagged:"
    while IFS= read -r line; do log "  $line"; done <"$work/differences"
    locked_at=$(sed -n 's/^# locked: \([0-9]*\)-\([0-9]*\)-\([0-9]*\)T\([0-9]*\):\([0-9]*\):\([0-9]*\)Z.*/\1\2\3T\4\5\6Z/p' "$lock")
    log "Debian's mirror moves on (a stable point release every couple of months changes versions). To take what it serves now, relock deliberately: $relock_hint (review the lock's diff and commit it)."
    [ -z "$locked_at" ] \
      || log "Or, where snapshot.debian.org is reachable, build from the archive as it was when the lock was written: PERFMINE_DEBIAN_MIRROR=https://snapshot.debian.org/archive/debian/$locked_at/"
    exit 1
  fi
  cp "$lock" "$work/lock"
else
  "$lockctl" write "$suite" "$arch" "$mirror" "${packages[@]}" <"$work/installed" >"$work/lock"
fi
recipe=$("$lockctl" digest "$suite" "$work/lock" "${packages[@]}")

# Slim the tree: package caches and lists are not needed inside the image.
rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/* "$root"/usr/share/doc/* \
       "$root"/usr/share/man/* "$root"/usr/share/locale/*
mkdir -p "$root/etc/perfmine"
cp "$work/lock" "$root/etc/perfmine/base.lock"
chmod 644 "$root/etc/perfmine/base.lock"
# tmux runs a session's commands with the user's login shell, which is nologin for system users
# such as nobody (the session then ends at once): bash for every user, unless their ~/.tmux.conf says otherwise.
printf '%s\n' '# perfmine base image (scripts/build-base-image.sh): a shell for users whose login shell is nologin' \
  'set-option -g default-shell /bin/bash' >"$root/etc/tmux.conf"

log "importing (recipe $recipe)"
image=$(tar -C "$root" -c . | docker import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'ENV LANG=C.UTF-8' \
  --change 'ENV PIP_BREAK_SYSTEM_PACKAGES=1' \
  --change 'ENV PIP_DISABLE_PIP_VERSION_CHECK=1' \
  --change 'ENV PYTHONDONTWRITEBYTECODE=1' \
  --change "LABEL org.perfmine.base=$suite" \
  --change "LABEL org.perfmine.base.recipe=$recipe" \
  --change 'WORKDIR /' \
  --change 'CMD ["/bin/bash"]' \
  -)
# Checked before it is tagged: Python with pytest, and tmux for an unprivileged user with no home
# (nobody: /nonexistent, shell nologin) and no network, its socket in /tmp (TMUX_TMPDIR's default):
# a command run in a session signals back (tmux keeps a signal sent before anyone waits).
if ! docker run --rm --network none "$image" python3 -c 'import sys, pytest; print("python", sys.version.split()[0], "pytest", pytest.__version__)' \
  || ! docker run --rm --network none --user 65534:65534 "$image" sh -c \
    'tmux new-session -d -s check "tmux wait-for -S ready; exec cat" && timeout 60 tmux wait-for ready && tmux kill-server && tmux -V'; then
  docker rmi "$image" >/dev/null 2>&1 || true
  log "the imported image failed its check; no image tagged"
  exit 1
fi
docker tag "$image" "$tag"
if [ "$relock" = 1 ] || [ ! -f "$lock" ]; then
  mkdir -p "$lock_dir"
  cp "$work/lock" "$lock.tmp" && mv "$lock.tmp" "$lock"
  log "wrote the lock $lock ($(grep -vc '^#' "$work/lock") packages): commit it"
fi
log "built $tag (recipe $recipe)"
