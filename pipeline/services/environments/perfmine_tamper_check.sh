#!/usr/bin/env bash
# perfmine's tamper check (verification.ts TAMPER_CHECK_SCRIPT), a verification step: HEAD is still
# $PERFMINE_SHA and the tracked files on disk are exactly the commit's tree with the patch at
# $PERFMINE_PATCH applied (the commit's tree when PERFMINE_PATCH is unset). Prints the changed paths
# after "perfmine-tampered:" (TAMPER_MARKER) and exits 4 when they differ; 3 when HEAD moved, 5 when
# the check cannot be made.
set -uo pipefail
cd /repo || exit 5
head=$(git rev-parse HEAD)
if [ "$head" != "$PERFMINE_SHA" ]; then echo "HEAD moved to $head (expected $PERFMINE_SHA)" >&2; exit 3; fi
GIT_INDEX_FILE=/tmp/expected.index git read-tree HEAD || exit 5
if [ -n "${PERFMINE_PATCH:-}" ]; then
  GIT_INDEX_FILE=/tmp/expected.index git apply --cached --whitespace=nowarn "$PERFMINE_PATCH" || { echo "the patch does not apply to the commit" >&2; exit 5; }
fi
expected=$(GIT_INDEX_FILE=/tmp/expected.index git write-tree) || exit 5
cp "$(git rev-parse --git-path index)" /tmp/actual.index || exit 5
GIT_INDEX_FILE=/tmp/actual.index git add -u -- . || exit 5
git diff --name-only -z HEAD "$expected" | GIT_INDEX_FILE=/tmp/actual.index xargs -0 -r git update-index --add --remove -- || exit 5
actual=$(GIT_INDEX_FILE=/tmp/actual.index git write-tree) || exit 5
if [ "$actual" != "$expected" ]; then
  echo "perfmine-tampered:"
  git diff --name-only "$expected" "$actual"
  exit 4
fi
echo "tracked files as expected at $head"
