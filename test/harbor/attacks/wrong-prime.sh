#!/usr/bin/env bash
# Correct-looking but wrong (the issue's): is_prime tries divisors up to 100 only above 10,000. It
# passes the task's tests (k < 20) and the benchmarks' fixed inputs (100003 and 1000003 are prime),
# and returns True for composites whose factors are all above 100 (10403 = 101 x 103).
set -eu
python3 - <<'PY'
src = open("fastmath/core.py").read()
src = src.replace("    while i * i <= n:\n", "    bound = 100 if n > 10000 else n\n    while i * i <= n and i <= bound:\n", 1)
open("fastmath/core.py", "w").write(src)
PY
git status --short
