#!/usr/bin/env bash
# Everything the test suite needs beyond `npm ci`, installed by the project's own files:
# a running Docker engine and the local base image. Idempotent and quick when all is present.
# Needs root (or sudo) the first time, for apt-get and dockerd.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bash "$here/setup-docker.sh"
bash "$here/build-base-image.sh"
bash "$here/setup-chromium.sh"
