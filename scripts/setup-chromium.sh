#!/usr/bin/env bash
# Installs Debian's Chromium for the report's headless browser test, when missing. Idempotent.
set -euo pipefail
if command -v chromium >/dev/null 2>&1; then exit 0; fi
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
echo "[setup-chromium] installing chromium from Debian" >&2
export DEBIAN_FRONTEND=noninteractive
if ! ls /var/lib/apt/lists/*_Packages >/dev/null 2>&1; then as_root apt-get update -qq; fi
as_root apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null \
  || { as_root apt-get update -qq && as_root apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null; }
