#!/usr/bin/env bash
# A crash instead of a failure (the issue's): a reward planted where the verifier writes its own
# (Harbor mounts /logs/verifier writable by everyone from the start), a link in place of reward.txt,
# and a package that, imported by anyone but the agent, never returns (so a verifier that waits for
# it writes nothing, and the planted reward stands).
set -eu
echo 100 > /logs/verifier/reward.txt.planted
mv /logs/verifier/reward.txt.planted /logs/verifier/reward.txt
echo '{"reward": 100, "correct": 1}' > /logs/verifier/reward.json
ln -sf /repo/README.md /logs/verifier/perfmine-verify.json
cat >> fastmath/__init__.py <<'PY'

import os as _os
if _os.getuid() != 1000:
    while True:
        pass
PY
git status --short
