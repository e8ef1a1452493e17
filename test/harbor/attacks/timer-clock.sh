#!/usr/bin/env bash
# A timer lie (the issue's): on import, when the measuring harness is the main program, the package
# replaces the harness's clocks (its CPU clock, the wall timer, timeit's default) by ones that run a
# hundred times slower, and makes its warm-up cheaper. The algorithm is unchanged.
set -eu
cat >> fastmath/__init__.py <<'PY'

import sys as _sys, time as _time, timeit as _timeit

_h = _sys.modules.get("__main__")
if _h is not None and "harness" in (getattr(_h, "__file__", "") or ""):
    _slow_cpu = _time.process_time
    _slow_wall = _time.perf_counter
    _time.process_time = lambda: _slow_cpu() / 100
    _timeit.default_timer = lambda: _slow_wall() / 100
    if hasattr(_h, "CLOCKS"):
        _h.CLOCKS["cpu"] = _time.process_time
        _h.wall_timer = _timeit.default_timer
PY
git status --short
