#!/usr/bin/env bash
# A stand-in for debootstrap in the tests of scripts/build-base-image.sh (put on PATH as
# `debootstrap`). Instead of installing a suite from the mirror (one to two minutes of CPU), it
# unpacks the filesystem of the image PERFMINE_FAKE_DEBOOTSTRAP_IMAGE into the target directory
# (debootstrap's second operand), so that the build's steps after debootstrap run as they are:
# the package set read from the root with dpkg-query, the lock, the import, the checks.
# Without PERFMINE_FAKE_DEBOOTSTRAP_IMAGE it refuses, naming itself: a test can tell that the
# build went as far as debootstrap. With one, it leaves /fake-debootstrap (the image's name) in
# the root, so a test can tell that the image came from it.
set -euo pipefail

operands=()
for arg in "$@"; do
  case $arg in
    --*) ;;
    *) operands+=("$arg") ;;
  esac
done
if [ -z "${PERFMINE_FAKE_DEBOOTSTRAP_IMAGE:-}" ]; then
  echo "fake debootstrap: refused to install ${operands[0]:-?} (no PERFMINE_FAKE_DEBOOTSTRAP_IMAGE)" >&2
  exit 3
fi
target=${operands[1]:?"usage: debootstrap [--option]... SUITE TARGET [MIRROR]"}
mkdir -p "$target"
container=$(docker create "$PERFMINE_FAKE_DEBOOTSTRAP_IMAGE" /bin/true)
trap 'docker rm -f "$container" >/dev/null' EXIT
docker export "$container" | tar -x -C "$target"
# A mark a test can find in the image the build made.
printf '%s\n' "$PERFMINE_FAKE_DEBOOTSTRAP_IMAGE" >"$target/fake-debootstrap"
