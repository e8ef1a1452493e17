#!/usr/bin/env bash
# The base image's recipe and its lock, for scripts/build-base-image.sh (and its tests):
#
#   lock.sh installed ROOT                      a root filesystem's installed packages (dpkg-query in a
#                                               chroot), one `name=version arch` a line, sorted
#   lock.sh write SUITE ARCH MIRROR PKG... <LIST   a lock: a header naming the recipe, then LIST
#   lock.sh header-diff LOCK SUITE ARCH PKG...  how the recipe the lock was written for differs from
#                                               this one (nothing when it is the same)
#   lock.sh diff LOCK LIST                      each package whose version or architecture differs,
#                                               or that is missing or extra, one a line; exit 1 if any
#   lock.sh digest SUITE LOCK PKG...            the recipe's sha256: suite, package list, the lock's
#                                               packages, and the revision of the build's steps
#
# A lock is text: `#` lines (the header), then one `name=version arch` a line, sorted (LC_ALL=C).
set -euo pipefail
export LC_ALL=C

# Bump when scripts/build-base-image.sh changes what it does with the same packages (the image's
# ENV, the files it removes or adds): images built by the older steps are then built again.
STEPS_REVISION=1

die() {
  printf 'lock.sh: %s\n' "$*" >&2
  exit 2
}

# The package list as the recipe has it: sorted, one space between names.
canonical_packages() { printf '%s\n' "$@" | sort -u | paste -sd' ' -; }

# The lock's packages: its lines without the header, comments and blank lines.
entries() { grep -v -e '^#' -e '^[[:space:]]*$' "$1" | sort || true; }

# The value of a `# key: value` header line.
header_value() { sed -n "s/^# $2: //p" "$1" | head -n 1; }

cmd=${1:-}
[ $# -gt 0 ] && shift
case "$cmd" in
  installed)
    [ $# -eq 1 ] || die "usage: lock.sh installed ROOT"
    # shellcheck disable=SC2016 # dpkg-query's own ${field} syntax
    chroot "$1" dpkg-query -W -f '${db:Status-Abbrev}|${Package}=${Version} ${Architecture}\n' \
      | awk -F'|' '$1 ~ /^ii/ { print $2 }' | sort
    ;;
  write)
    [ $# -ge 4 ] || die "usage: lock.sh write SUITE ARCH MIRROR PACKAGE... <LIST"
    suite=$1 arch=$2 mirror=$3
    shift 3
    printf '# perfmine base image lock: every package of the image, name=version architecture.\n'
    printf '# Written by scripts/build-base-image.sh; PERFMINE_BASE_RELOCK=1 writes it again.\n'
    printf '# suite: %s\n' "$suite"
    printf '# architecture: %s\n' "$arch"
    printf '# packages: %s\n' "$(canonical_packages "$@")"
    printf '# locked: %s from %s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$mirror"
    { grep -v -e '^[[:space:]]*$' || true; } | sort
    ;;
  header-diff)
    [ $# -ge 4 ] || die "usage: lock.sh header-diff LOCK SUITE ARCH PACKAGE..."
    lock=$1 suite=$2 arch=$3
    shift 3
    have_suite=$(header_value "$lock" suite)
    have_arch=$(header_value "$lock" architecture)
    [ "$have_suite" = "$suite" ] || echo "suite: the lock is for ${have_suite:-no suite}, the recipe is for $suite"
    [ "$have_arch" = "$arch" ] || echo "architecture: the lock is for ${have_arch:-none}, this machine builds $arch"
    read -r -a locked <<<"$(header_value "$lock" packages)"
    wanted=$(canonical_packages "$@")
    if [ "$(canonical_packages "${locked[@]}")" != "$wanted" ]; then
      added=$(comm -13 <(printf '%s\n' "${locked[@]}" | sort -u) <(printf '%s\n' "$@" | sort -u) | paste -sd' ' -)
      dropped=$(comm -23 <(printf '%s\n' "${locked[@]}" | sort -u) <(printf '%s\n' "$@" | sort -u) | paste -sd' ' -)
      echo "packages: the package list now adds ${added:-nothing} and drops ${dropped:-nothing}"
    fi
    ;;
  diff)
    [ $# -eq 2 ] || die "usage: lock.sh diff LOCK LIST"
    # Keyed by package name: `name: ...` for each difference, sorted by name.
    report=$(awk '
      /^#/ || /^[[:space:]]*$/ { next }
      {
        eq = index($0, "=")
        name = substr($0, 1, eq - 1)
        split(substr($0, eq + 1), field, " ")
        what = field[1] " (" field[2] ")"
      }
      FILENAME == ARGV[1] { locked[name] = what; next }
      { built[name] = what }
      END {
        for (n in locked) {
          if (!(n in built)) print n ": the lock has " locked[n] ", the build installed none"
          else if (built[n] != locked[n]) print n ": the mirror now serves " built[n] ", the lock has " locked[n]
        }
        for (n in built) if (!(n in locked)) print n ": the build installed " built[n] ", the lock has none"
      }' "$1" "$2" | sort)
    [ -z "$report" ] && exit 0
    printf '%s\n' "$report"
    exit 1
    ;;
  digest)
    [ $# -ge 3 ] || die "usage: lock.sh digest SUITE LOCK PACKAGE..."
    suite=$1 lock=$2
    shift 2
    {
      printf 'steps %s\nsuite %s\npackages %s\n' "$STEPS_REVISION" "$suite" "$(canonical_packages "$@")"
      entries "$lock"
    } | sha256sum | cut -d' ' -f1
    ;;
  *) die "unknown command '${cmd}': installed, write, header-diff, diff or digest" ;;
esac
