#!/usr/bin/env bash
# perfmine's checkout step of a build (verification.ts PREPARE_SCRIPT, /perfmine/prepare.sh): /repo at
# $PERFMINE_SHA and clean, the patch (when there is one) applied to the working tree only (exit 97,
# PATCH_DOES_NOT_APPLY_EXIT, when it does not apply), /perfmine/checkout-ok (CHECKOUT_MARKER) written,
# then the environment's lock installed when the build is given one.
set -euo pipefail
cd /repo
head=$(git rev-parse HEAD)
if [ "$head" != "$PERFMINE_SHA" ]; then echo "perfmine: /repo is at $head, not $PERFMINE_SHA" >&2; exit 1; fi
git clean -qfdx
if [ -s /perfmine/patch.diff ]; then
  git apply --whitespace=nowarn /perfmine/patch.diff || { echo "perfmine: the patch does not apply to $PERFMINE_SHA" >&2; exit 97; }
fi
: > /perfmine/checkout-ok
if [ -s /perfmine/requirements.lock ]; then
  "${PERFMINE_PYTHON:-python3}" -m pip install -q --require-hashes --no-deps -r /perfmine/requirements.lock
fi
