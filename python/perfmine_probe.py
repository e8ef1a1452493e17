#!/usr/bin/env python3
"""perfmine's probe of a side's code, for the verifier (perfmine_verify.py): what the benchmarks
return, the package's functions they call, and what those functions return on inputs the agent
never saw. Each side runs it as its own user, driven over the verifier's channel
(perfmine_channel.py): one request, one answer, written as it happens. The verifier compares the
sides' answers itself; no side ever receives another side's values.

    perfmine_probe.py --config ASV_CONFIG --root DIR [--root DIR]... [--call-seconds S]

--root: the directories of the code under test (the side's copy and the site directories its
build installed into); the benchmark directory is never one of them.

    hello                                         at start, before the suite is imported
    ready {workloads, errors}                     the suite imported (harness discovery)
    <- {"op": "value", "workload": W}             W run as asv runs it once (setup_cache, setup,
    value {workload, status, value,               the call, teardown), twice, random generators
           deterministic, seconds}                seeded; its return value encoded (encode());
                                                  deterministic: both calls gave the same encoding;
                                                  seconds: each call's CPU time (the first is the
                                                  first call on these inputs in this process);
                                                  steady: its time per call repeated for 5 ms
    <- {"op": "capture", "workload": W, "limit": N}
    captured {workload, calls, seconds}           W once more with every call from the suite's
                                                  code into the code under test recorded (a
                                                  module-level function or static method reached
                                                  by module and qualified name, whose arguments
                                                  are plain data): {function: {module, qualname},
                                                  args, kwargs, seconds}
    <- {"op": "call", "function": F, "args": A, "kwargs": K, "repeat": R, "seconds": S}
    called {status, values, seconds, error}       F(*A, **K) R times, each within S seconds: each
                                                  result encoded (an exception as its type), the
                                                  first call's CPU time (this process's clock)
    <- {"op": "time", "calls": [C...], "seconds": S, "steady": T}
    timed {seconds}                               per call [its first call's CPU time, then the time
                                                  per call repeated for T seconds] (null where it
                                                  raised)
    <- {"op": "exit"}                             (the channel closes)

Plain data on the wire: null, booleans, numbers, strings, lists, {"__tuple__": [...]} for a tuple,
objects with string keys.

encode() is the canonical form the verifier compares (same()): numbers exactly (floats to a
relative 1e-9, NaN equal to NaN), containers item by item, numpy arrays by their values (a float
array's values within the same tolerance; a large one by a summary), pandas objects by their
columns and index, any other object by its repr without memory addresses (an object whose repr
holds nothing else is not comparable).

Python 3.8+, standard library only (numpy and pandas when the values are theirs).
"""

import argparse
import base64
import hashlib
import importlib
import inspect
import json
import math
import os
import pickle
import random
import re
import signal
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import perfmine_harness as harness  # noqa: E402
from perfmine_channel import open_channel  # noqa: E402

MAX_DEPTH = 48
#: This process's CPU clock, taken before the suite (and the code under test) is imported.
CLOCK = time.process_time
MAX_ITEMS = 200000
ARRAY_VALUES = 1 << 20
REL_TOL = 1e-9
SUMMARY_TOL = 1e-6
ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
PLAIN_STR = 10000
PLAIN_ITEMS = 10000


class Unencodable(Exception):
    pass


# ---------------------------------------------------------------- values: encode (child) and same (verifier)


class Budget:
    def __init__(self):
        self.items = 0

    def take(self, n=1):
        self.items += n
        if self.items > MAX_ITEMS:
            raise Unencodable("more than {} items".format(MAX_ITEMS))


def encode(value, depth=0, budget=None):
    """The canonical, JSON-able form of a value (see the module's docstring)."""
    budget = budget or Budget()
    budget.take()
    if depth > MAX_DEPTH:
        raise Unencodable("nested deeper than {}".format(MAX_DEPTH))
    if value is None:
        return ["none"]
    t = type(value)
    if t is bool:
        return ["bool", value]
    if t is int:
        return ["int", str(value)]
    if t is float:
        return ["float", repr(value)]
    if t is complex:
        return ["complex", repr(value.real), repr(value.imag)]
    if t is str:
        return ["str", value] if len(value) <= 1 << 16 else ["str-sha256", hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()]
    if t in (bytes, bytearray):
        return [t.__name__, hashlib.sha256(bytes(value)).hexdigest(), len(value)]
    if t in (list, tuple):
        return [t.__name__, [encode(x, depth + 1, budget) for x in value]]
    if t in (set, frozenset):
        return [t.__name__, sorted(json.dumps(encode(x, depth + 1, budget), sort_keys=True) for x in value)]
    if t is dict:
        items = [[json.dumps(encode(k, depth + 1, budget), sort_keys=True), encode(v, depth + 1, budget)] for k, v in value.items()]
        return ["dict", sorted(items, key=lambda kv: kv[0])]
    module = getattr(t, "__module__", "") or ""
    if module.startswith("numpy"):
        return encode_numpy(value, depth, budget)
    if module.startswith("pandas"):
        return encode_pandas(value, depth, budget)
    text = repr(value)
    stripped = ADDRESS.sub("", text)
    if stripped == text or not re.fullmatch(r"<[\w.]+( object)?>", stripped):
        return ["repr", t.__module__ + "." + t.__qualname__, stripped[:1 << 16]]
    raise Unencodable("{} has no repr beyond its address".format(t.__qualname__))


def encode_numpy(value, depth, budget):
    import numpy as np

    if isinstance(value, np.ndarray):
        budget.take(min(value.size, 1000))
        if value.dtype == object:
            return ["ndarray-object", list(value.shape), [encode(x, depth + 1, budget) for x in value.ravel().tolist()]]
        if value.dtype.kind in "fc":
            wide = np.ascontiguousarray(value, dtype=np.complex128 if value.dtype.kind == "c" else np.float64)
            if value.size <= ARRAY_VALUES:
                return ["ndarray", str(value.dtype), list(value.shape), "values", base64.b64encode(wide.tobytes()).decode("ascii")]
            flat = wide.ravel().view(np.float64)
            finite = flat[np.isfinite(flat)]
            step = max(1, flat.size // 1000)
            return ["ndarray", str(value.dtype), list(value.shape), "summary",
                    [int(flat.size), int(np.isnan(flat).sum()), float(finite.sum()), float(np.abs(finite).sum()),
                     [repr(float(x)) for x in flat[::step][:1000]]]]
        return ["ndarray", str(value.dtype), list(value.shape), "sha256",
                hashlib.sha256(np.ascontiguousarray(value).tobytes()).hexdigest()]
    if isinstance(value, np.generic):
        return ["numpy", str(value.dtype), encode(value.item(), depth + 1, budget)]
    raise Unencodable(type(value).__name__)


def encode_pandas(value, depth, budget):
    import pandas as pd

    if isinstance(value, pd.DataFrame):
        return ["pandas-frame", [str(c) for c in value.columns], [str(d) for d in value.dtypes],
                [encode(value[c].to_numpy(), depth + 1, budget) for c in value.columns],
                encode(value.index.to_numpy(), depth + 1, budget)]
    if isinstance(value, pd.Series):
        return ["pandas-series", str(value.name), str(value.dtype), encode(value.to_numpy(), depth + 1, budget),
                encode(value.index.to_numpy(), depth + 1, budget)]
    if isinstance(value, pd.Index):
        return ["pandas-index", str(value.dtype), encode(value.to_numpy(), depth + 1, budget)]
    return ["repr", type(value).__qualname__, ADDRESS.sub("", repr(value))[:1 << 16]]


def value_hash(encoding):
    """The hash of an encoding, the same wherever it is computed (the harness's timed values, the verifier)."""
    text = json.dumps(encoding, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def float_same(a, b, tol=REL_TOL):
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == b or math.isclose(a, b, rel_tol=tol, abs_tol=0.0)


def floats(text):
    try:
        return float(text)
    except (TypeError, ValueError):
        return None


def same(a, b):
    """Whether two encodings (from any side, parsed from the channel) are the same value. Iterative."""
    stack = [(a, b)]
    while stack:
        x, y = stack.pop()
        if not isinstance(x, list) or not isinstance(y, list) or not x or not y or x[0] != y[0] or len(x) != len(y):
            return False
        kind = x[0]
        if kind == "float":
            fx, fy = floats(x[1]), floats(y[1])
            if fx is None or fy is None or not float_same(fx, fy):
                return False
        elif kind == "complex":
            parts = [floats(v) for v in x[1:] + y[1:]]
            if None in parts or not (float_same(parts[0], parts[2]) and float_same(parts[1], parts[3])):
                return False
        elif kind in ("list", "tuple", "ndarray-object"):
            xs, ys = x[-1], y[-1]
            if not isinstance(xs, list) or not isinstance(ys, list) or len(xs) != len(ys) or x[1:-1] != y[1:-1]:
                return False
            stack.extend(zip(xs, ys))
        elif kind == "dict":
            xs, ys = x[1], y[1]
            if not isinstance(xs, list) or not isinstance(ys, list) or len(xs) != len(ys):
                return False
            for kx, ky in zip(xs, ys):
                if not isinstance(kx, list) or not isinstance(ky, list) or len(kx) != 2 or len(ky) != 2 or kx[0] != ky[0]:
                    return False
                stack.append((kx[1], ky[1]))
        elif kind == "numpy":
            if x[1] != y[1]:
                return False
            stack.append((x[2], y[2]))
        elif kind == "ndarray" and x[3] == "values" and y[3] == "values":
            if x[1:3] != y[1:3] or not array_same(x[4], y[4]):
                return False
        elif kind == "ndarray" and x[3] == "summary" and y[3] == "summary":
            if x[1:3] != y[1:3] or not summary_same(x[4], y[4]):
                return False
        elif kind in ("pandas-frame", "pandas-series", "pandas-index"):
            if x[1:-2 if kind != "pandas-index" else -1] != y[1:-2 if kind != "pandas-index" else -1]:
                return False
            tail = 2 if kind != "pandas-index" else 1
            for xi, yi in zip(x[-tail:], y[-tail:]):
                if kind == "pandas-frame" and xi is x[-2]:
                    if not isinstance(xi, list) or not isinstance(yi, list) or len(xi) != len(yi):
                        return False
                    stack.extend(zip(xi, yi))
                else:
                    stack.append((xi, yi))
        elif x != y:
            return False
    return True


def array_same(ax, ay):
    import array

    try:
        bx, by = base64.b64decode(ax), base64.b64decode(ay)
    except (ValueError, TypeError):
        return False
    if len(bx) != len(by) or len(bx) % 8:
        return False
    if bx == by:
        return True
    vx, vy = array.array("d"), array.array("d")
    vx.frombytes(bx)
    vy.frombytes(by)
    return all(float_same(p, q) for p, q in zip(vx, vy))


def summary_same(sx, sy):
    try:
        if sx[0] != sy[0] or sx[1] != sy[1]:
            return False
        scale = max(abs(sx[3]), abs(sy[3]), 1e-300)
        if abs(sx[2] - sy[2]) > SUMMARY_TOL * scale:
            return False
        return len(sx[4]) == len(sy[4]) and all(float_same(float(p), float(q)) for p, q in zip(sx[4], sy[4]))
    except (TypeError, ValueError, IndexError):
        return False


# ---------------------------------------------------------------- plain data (arguments on the wire)


def plain(value, depth=0):
    """The wire form of an argument, or Unencodable when it is not plain data."""
    if depth > 3:
        raise Unencodable("nested")
    if value is None or type(value) in (bool, int, str):
        if type(value) is str and len(value) > PLAIN_STR:
            raise Unencodable("long string")
        return value
    if type(value) is float:
        if not math.isfinite(value):
            raise Unencodable("not finite")
        return value
    if type(value) in (list, tuple):
        if len(value) > PLAIN_ITEMS:
            raise Unencodable("long list")
        items = [plain(v, depth + 1) for v in value]
        return {"__tuple__": items} if type(value) is tuple else items
    if type(value) is dict and len(value) <= PLAIN_ITEMS and all(type(k) is str and k != "__tuple__" for k in value):
        return {k: plain(v, depth + 1) for k, v in value.items()}
    raise Unencodable(type(value).__name__)


def unplain(value):
    if isinstance(value, list):
        return [unplain(v) for v in value]
    if isinstance(value, dict):
        if set(value) == {"__tuple__"}:
            return tuple(unplain(v) for v in value["__tuple__"])
        return {k: unplain(v) for k, v in value.items()}
    return value


# ---------------------------------------------------------------- perturbed inputs (the verifier's, pure)


def perturb_number(v, rng, wide):
    """A number near v, of v's type and sign, drawn mostly below v (a larger size may cost far more:
    small integers are often depths or exponents): integers under 64 within [v/2, v+1], larger
    ones within [v/2, 1.25 v] (near: within an eighth of v; "far": within [v, 4 v]), floats within
    [0.5 v, 1.25 v]."""
    sign = -1 if v < 0 else 1
    a = abs(v)
    if type(v) is int:
        if a < 2:
            return v
        if a < 64:
            lo, hi = max(1, a // 2), a + 1
        elif wide == "far":
            lo, hi = a + 1, 4 * a
        elif wide:
            lo, hi = a // 2, a + a // 4
        else:
            lo, hi = a - max(1, a // 8), a + max(1, a // 16)
        x = a
        for _ in range(8):
            x = rng.randint(lo, hi)
            if x != a:
                break
        return sign * x
    factor = rng.uniform(0.5, 1.25) if wide else rng.uniform(0.85, 1.1)
    return v * factor if factor != 1.0 else v * 0.9


def perturb(value, rng, wide, depth=0):
    """value with its numbers perturbed (a list's numbers some of them), as plain data."""
    if type(value) in (int, float):
        return perturb_number(value, rng, wide)
    if isinstance(value, list):
        if depth == 0:  # the arguments themselves: every one
            return [perturb(x, rng, wide, depth + 1) for x in value]
        if value and all(type(x) in (int, float) for x in value):  # a list of numbers: a quarter of them
            chosen = set(rng.sample(range(len(value)), max(1, len(value) // 4)))
            return [perturb_number(x, rng, wide) if i in chosen else x for i, x in enumerate(value)]
        return value
    if isinstance(value, dict):
        if set(value) == {"__tuple__"}:
            return {"__tuple__": perturb(value["__tuple__"], rng, wide, depth + 1)}
        return {k: perturb(v, rng, wide, depth + 1) for k, v in value.items()}
    return value


def has_numbers(value):
    if type(value) in (int, float):
        return type(value) is float or abs(value) >= 2
    if isinstance(value, list):
        return any(has_numbers(v) for v in value)
    if isinstance(value, dict):
        return any(has_numbers(v) for v in value.values())
    return False


def variants(call, seed, count, far=0):
    """Up to `count` distinct variants of an entry call ({function, args, kwargs}) with its numbers
    perturbed, alternately near and wide, and `far` more above the original (for a cheap call),
    drawn from `seed` (a string: the same seed, the same variants on every Python)."""
    if not has_numbers([call.get("args") or [], call.get("kwargs") or {}]):
        return []
    rng = random.Random("{}|{}|{}".format(seed, json.dumps(call["function"], sort_keys=True),
                                          json.dumps([call.get("args"), call.get("kwargs")], sort_keys=True)))
    seen = {json.dumps([call.get("args"), call.get("kwargs")], sort_keys=True)}
    out = []
    for k in range((count + far) * 4):
        if len(out) >= count + far:
            break
        wide = "far" if len(out) >= count else k % 2 == 1
        args = perturb(call.get("args") or [], rng, wide)
        kwargs = perturb(call.get("kwargs") or {}, rng, wide)
        key = json.dumps([args, kwargs], sort_keys=True)
        if key in seen:
            continue
        seen.add(key)
        out.append({"function": call["function"], "args": args, "kwargs": kwargs})
    return out


# ---------------------------------------------------------------- running the suite's code


class Timeout(Exception):
    pass


def on_alarm(signum, frame):
    raise Timeout("the call ran past its time limit")


def limited(fn, seconds):
    if seconds:
        signal.signal(signal.SIGALRM, on_alarm)
        signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        return fn()
    finally:
        if seconds:
            signal.setitimer(signal.ITIMER_REAL, 0)


def seed():
    random.seed(0)
    np = sys.modules.get("numpy")
    if np is not None:
        try:
            np.random.seed(0)
        except Exception:  # noqa: BLE001
            pass


def one_line(exc):
    return ("{}: {}".format(type(exc).__name__, exc)).strip().splitlines()[0][:300]


def inside(path, roots):
    path = os.path.realpath(path)
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


class Suite:
    def __init__(self, config, roots, call_seconds):
        self.conf = harness.load_config(config)
        self.bench_dir = os.path.realpath(self.conf.benchmark_dir)
        self.roots = [os.path.realpath(r) for r in roots]
        self.call_seconds = call_seconds
        self.benches = {}
        self.workloads = {}
        self.caches = {}
        self.scratch = tempfile.mkdtemp(prefix="perfmine-probe-")

    def load(self):
        self.benches = harness.discover(self.conf.benchmark_dir)
        chosen = harness.selection(self.benches, [])
        for w in harness.workloads_of(self.benches, chosen):
            self.workloads[w["name"]] = (w["benchmark"], w["param"])

    def prepared(self, name):
        """A fresh, set-up instance of the workload's benchmark (a skip raises NotImplementedError)."""
        bench_name, param = self.workloads[name]
        spec = self.benches[bench_name]
        bench = harness.fresh_copy(spec)
        if bench.params:
            bench.set_param_idx(param)
        key = spec.setup_cache_key
        if key is not None:
            if key not in self.caches:
                folder = tempfile.mkdtemp(prefix="cache-", dir=self.scratch)
                os.chdir(folder)
                try:
                    seed()
                    self.caches[key] = pickle.dumps(limited(harness.fresh_copy(spec).do_setup_cache, self.call_seconds))
                finally:
                    os.chdir(self.scratch)
            bench.cache = pickle.loads(self.caches[key])
        os.chdir(self.scratch)
        seed()
        reason = limited(bench.do_setup, self.call_seconds)
        if reason:
            raise NotImplementedError(reason)
        return bench

    def run(self, name, around=None):
        """(the benchmark's return value, the CPU seconds of the call alone)."""
        bench = self.prepared(name)
        try:
            seed()
            spent = []

            def timed():
                started = CLOCK()
                try:
                    return bench.func(*bench.call_args())
                finally:
                    spent.append(CLOCK() - started)

            value = limited((lambda: around(timed)) if around else timed, self.call_seconds)
            return value, spent[0]
        finally:
            try:
                bench.do_teardown()
            except Exception:  # noqa: BLE001 - a teardown's failure is not the value's
                pass

    def value(self, name):
        out = {"kind": "value", "workload": name}
        encodings, seconds = [], []
        try:
            for _ in range(2):
                value, spent = self.run(name)
                seconds.append(spent)
                encodings.append(encode(value))
        except NotImplementedError as exc:
            return dict(out, status="skipped", reason=one_line(exc))
        except Unencodable as exc:
            return dict(out, status="unencodable", reason=str(exc))
        except BaseException as exc:  # noqa: B036 - the suite's code may raise anything
            if isinstance(exc, KeyboardInterrupt):
                raise
            return dict(out, status="error", error=one_line(exc))
        return dict(out, status="ok", value=encodings[0], deterministic=same(encodings[0], encodings[1]), seconds=seconds,
                    steady=self.steady(name))

    def steady(self, name, seconds=0.005):
        """The benchmark's call repeated (one setup) for `seconds` of CPU time: its time per call, or None."""
        try:
            bench = self.prepared(name)
        except BaseException:  # noqa: B036
            return None
        try:
            args = bench.call_args()
            count, spent = 0, 0.0
            while spent < seconds and count < 100000:
                n = max(1, count)
                started = CLOCK()
                limited(lambda: [bench.func(*args) for _ in range(n)], self.call_seconds)
                spent += CLOCK() - started
                count += n
            return spent / count
        except BaseException:  # noqa: B036
            return None
        finally:
            try:
                bench.do_teardown()
            except Exception:  # noqa: BLE001
                pass

    def capture(self, name, limit):
        found, seen, timing = [], set(), {}
        suite_root = self.bench_dir
        # per code object: whether it is the suite's (a call from it is an entry call), whether the code
        # under test's (a callee worth recording): the profiler runs at every call, so it decides by lookup
        suite, tested = {}, {}

        def profiler(frame, event, arg):
            if timing and event == "return" and id(frame) in timing:
                start, entry = timing.pop(id(frame))
                entry["seconds"] = CLOCK() - start
                return
            if event != "call" or len(found) >= limit:
                return
            caller = frame.f_back
            if caller is None:
                return
            cc = caller.f_code
            from_suite = suite.get(cc)
            if from_suite is None:
                from_suite = suite[cc] = inside(cc.co_filename, [suite_root])
            if not from_suite:
                return
            code = frame.f_code
            under_test = tested.get(code)
            if under_test is None:
                under_test = tested[code] = inside(code.co_filename, self.roots) and not inside(code.co_filename, [suite_root])
            if not under_test:
                return
            entry = entry_call(frame)
            if entry is None:
                return
            key = json.dumps([entry["function"], entry["args"], entry["kwargs"]], sort_keys=True)
            if key in seen:
                return
            seen.add(key)
            found.append(entry)
            timing[id(frame)] = (CLOCK(), entry)

        def around(call):
            sys.setprofile(profiler)
            try:
                return call()
            finally:
                sys.setprofile(None)

        started = CLOCK()
        try:
            self.run(name, around)
        except BaseException as exc:  # noqa: B036
            if isinstance(exc, KeyboardInterrupt):
                raise
            return {"kind": "captured", "workload": name, "calls": found, "error": one_line(exc),
                    "seconds": CLOCK() - started}
        return {"kind": "captured", "workload": name, "calls": found, "seconds": CLOCK() - started}

    def call(self, request):
        fn = resolve(request["function"])
        args = unplain(request.get("args") or [])
        kwargs = unplain(request.get("kwargs") or {})
        values, first = [], None
        seconds = min(self.call_seconds, float(request.get("seconds") or self.call_seconds))
        for i in range(max(1, int(request.get("repeat") or 1))):
            os.chdir(self.scratch)
            seed()
            started = CLOCK()
            try:
                result = limited(lambda: fn(*args, **kwargs), seconds)
            except Timeout:
                return {"kind": "called", "status": "timeout", "values": values, "seconds": first}
            except BaseException as exc:  # noqa: B036
                if isinstance(exc, KeyboardInterrupt):
                    raise
                elapsed = CLOCK() - started
                values.append(["raised", type(exc).__name__])
                first = elapsed if first is None else first
                continue
            elapsed = CLOCK() - started
            first = elapsed if first is None else first
            try:
                values.append(encode(result))
            except Unencodable as exc:
                return {"kind": "called", "status": "unencodable", "reason": str(exc), "values": values, "seconds": first}
        return {"kind": "called", "status": "ok", "values": values, "seconds": first}

    def time_calls(self, request):
        """Each call of the list: its first call timed alone, then repeated until `steady` seconds
        have passed (by this process's CPU clock): [[first, steady seconds per call] or None where
        it raised]."""
        out = []
        seconds = min(self.call_seconds, float(request.get("seconds") or self.call_seconds))
        steady = float(request.get("steady") or 0.0)
        for call in request.get("calls") or []:
            try:
                fn = resolve(call["function"])
                args, kwargs = unplain(call.get("args") or []), unplain(call.get("kwargs") or {})
            except Exception:  # noqa: BLE001
                out.append(None)
                continue
            os.chdir(self.scratch)
            seed()
            try:
                started = CLOCK()
                limited(lambda: fn(*args, **kwargs), seconds)
                first = CLOCK() - started
                count, spent = 0, 0.0
                while spent < steady and count < 100000:
                    n = max(1, count)
                    started = CLOCK()
                    limited(lambda: [fn(*args, **kwargs) for _ in range(n)], seconds)
                    spent += CLOCK() - started
                    count += n
            except BaseException as exc:  # noqa: B036
                if isinstance(exc, KeyboardInterrupt):
                    raise
                out.append(None)
                continue
            out.append([first, spent / count if count else None])
        return {"kind": "timed", "seconds": out}


def entry_call(frame):
    """The call a frame makes, as plain data, or None (a method, a closure, arguments that are not plain)."""
    code = frame.f_code
    qualname = getattr(code, "co_qualname", None) or code.co_name
    module = frame.f_globals.get("__name__")
    if not isinstance(module, str) or "<" in qualname:
        return None
    try:
        if not any(c is code for c in codes_of(resolve({"module": module, "qualname": qualname}))):
            return None
    except Exception:  # noqa: BLE001 - not reachable by name (a method, a closure)
        return None
    names = code.co_varnames
    positional = code.co_argcount
    posonly = getattr(code, "co_posonlyargcount", 0)
    kwonly = code.co_kwonlyargcount
    local = frame.f_locals
    try:
        args = [plain(local[n]) for n in names[:posonly]]
        kwargs = {n: plain(local[n]) for n in names[posonly:positional + kwonly]}
        at = positional + kwonly
        if code.co_flags & inspect.CO_VARARGS:
            if posonly < positional and kwargs:
                # *args after named positional parameters: pass those positionally too
                args += [kwargs.pop(n) for n in names[posonly:positional]]
            args += list(plain(list(local[names[at]])))
            at += 1
        if code.co_flags & inspect.CO_VARKEYWORDS:
            extra = plain(dict(local[names[at]]))
            kwargs.update(extra)
    except (Unencodable, KeyError):
        return None
    return {"function": {"module": module, "qualname": qualname}, "args": args, "kwargs": kwargs, "seconds": None}


def resolve(function):
    target = importlib.import_module(function["module"])
    for part in function["qualname"].split("."):
        target = getattr(target, part)
    return target


def codes_of(target):
    """The code objects along a callable's __wrapped__ chain (a decorated function's, a cache's)."""
    found = []
    for _ in range(10):
        if target is None:
            break
        code = getattr(target, "__code__", None)
        if code is not None:
            found.append(code)
        target = getattr(target, "__wrapped__", None)
    return found


def main(argv):
    p = argparse.ArgumentParser(prog="perfmine_probe.py")
    p.add_argument("--config", required=True)
    p.add_argument("--root", action="append", default=[])
    p.add_argument("--call-seconds", type=float, default=60.0)
    args = p.parse_args(argv)
    request, answer = open_channel()
    os.dup2(2, 1)  # whatever the suite prints goes to the log, never to a channel
    answer({"kind": "hello"})
    suite = Suite(args.config, args.root, args.call_seconds)
    try:
        suite.load()
    except (harness.SuiteError, harness.UsageError) as exc:
        answer({"kind": "ready", "workloads": [], "errors": [str(exc)[:2000]]})
    else:
        answer({"kind": "ready", "workloads": sorted(suite.workloads), "errors": []})
    while True:
        r = request()
        if r is None or r.get("op") == "exit":
            return 0
        op = r.get("op")
        if op == "value":
            answer(suite.value(r["workload"]))
        elif op == "capture":
            answer(suite.capture(r["workload"], int(r.get("limit") or 20)))
        elif op == "time":
            answer(suite.time_calls(r))
        elif op == "call":
            try:
                answer(suite.call(r))
            except Exception as exc:  # noqa: BLE001 - the function cannot be reached
                answer({"kind": "called", "status": "unreachable", "error": one_line(exc), "values": [], "seconds": None})
        else:
            answer({"kind": "error", "message": "unknown op {!r}".format(op)})


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
