#!/usr/bin/env python3
"""perfmine's snapshot helper: the return values of an asv benchmark suite, recorded on the base
and compared on the expert, so that a patch that makes a benchmark faster by computing something
else is caught.

    perfmine_snapshot.py record  --repo DIR --config asv.conf.json [--bench REGEX] [--timeout S] [--runs N] --out FILE
    perfmine_snapshot.py compare --repo DIR --config asv.conf.json --baseline FILE [--bench REGEX] [--timeout S] --out FILE

It imports the suite the way asv discovers it (benchmark_dir from the config, every module of
that package), and calls every benchmark (module functions and class methods named time_*,
timeraw_*, mem_*, peakmem_*, track_*) once per parameter combination, running setup_cache, setup
and teardown around it as asv does. Random generators are seeded before each call. Each value
gets a repr, a stable hash of a canonical encoding, and (when it pickles) the pickle. A value
without defined equality is skipped: NaN anywhere in it, an object whose type compares by
identity, or one that differs between two calls on the same code (nondeterministic).

compare records the expert in-process and judges each workload: equal hashes are equal; else,
with the base value unpickled, equality is == with floats compared to a relative 1e-9; a
benchmark that ran on the base and raises on the expert is a mismatch. Standard library only;
Python 3.8+. Exit code 0 whenever the JSON was written (the verdict is in the JSON).
"""

import argparse
import base64
import hashlib
import importlib
import inspect
import itertools
import json
import math
import os
import pickle
import pkgutil
import random
import re
import signal
import sys

# The measurement harness beside this file (in a container both are in /perfmine/harness; a script's
# own directory is first on sys.path) is the one reader of asv configs.
from perfmine_harness import load_config

FORMAT_VERSION = 1
PREFIXES = ("time_", "timeraw_", "mem_", "peakmem_", "track_")
CLASS_PREFIXES = ("Time", "TimeRaw", "Mem", "PeakMem", "Track")
REPR_CHARS = 300
PICKLE_BYTES = 1 << 20
REL_TOL = 1e-9


class Skip(Exception):
    """A value without defined equality."""


class NoCanon(Exception):
    """A value with its own equality that has no canonical encoding here."""


class Timeout(Exception):
    pass


# ---------------------------------------------------------------- the asv config


def benchmark_dir_of(repo, config_path):
    """The suite's directory, from the asv config as the harness reads it (comments, trailing commas)."""
    return load_config(os.path.join(repo, config_path)).benchmark_dir


# ---------------------------------------------------------------- discovery, as asv_runner does it


def is_benchmark_name(name, in_class):
    if name.startswith(PREFIXES):
        return True
    return in_class and any(re.match("^%s[A-Z_]" % p, name) for p in CLASS_PREFIXES)


def discover(benchmark_dir, regex):
    """(benchmarks, import errors). A benchmark: (name, function, instance or None, module)."""
    root = os.path.abspath(benchmark_dir)
    parent, root_name = os.path.split(root)
    sys.path.insert(0, parent)
    benchmarks, errors, seen = [], [], set()

    def walk(module_name):
        try:
            module = importlib.import_module(module_name)
        except BaseException as exc:  # noqa: BLE001 - any import failure, SystemExit included
            errors.append({"module": module_name, "error": one_line(exc)})
            return
        yield module
        if getattr(module, "__path__", None):
            for _, name, _ in pkgutil.iter_modules(module.__path__, module_name + "."):
                for m in walk(name):
                    yield m

    for module in walk(root_name):
        prefix = module.__name__[len(root_name) + 1:]
        for attr, value in list(vars(module).items()):
            if attr.startswith("_"):
                continue
            if inspect.isclass(value) and not inspect.isabstract(value):
                for name, member in inspect.getmembers(value):
                    if (inspect.isfunction(member) or inspect.ismethod(member)) and is_benchmark_name(name, True):
                        full = ".".join(p for p in (prefix, value.__name__, name) if p)
                        if full not in seen:
                            seen.add(full)
                            benchmarks.append((full, name, value, module))
            elif inspect.isfunction(value) and is_benchmark_name(attr, False):
                full = ".".join(p for p in (prefix, attr) if p)
                if full not in seen:
                    seen.add(full)
                    benchmarks.append((full, attr, None, module))
    if regex:
        pattern = re.compile(regex)
        benchmarks = [b for b in benchmarks if pattern.search(b[0])]
    benchmarks.sort(key=lambda b: b[0])
    return benchmarks, errors


def first_attr(sources, name, default=None):
    for s in sources:
        if s is not None and hasattr(s, name):
            return getattr(s, name)
    return default


def combinations(params):
    if not params:
        return [()]
    if not isinstance(params[0], (list, tuple)):
        params = [params]
    return list(itertools.product(*params))


def workload_name(name, combo, has_params):
    return "%s(%s)" % (name, ", ".join(repr(p) for p in combo)) if has_params else name


# ---------------------------------------------------------------- values


def canon(v, depth=0):
    """A JSON-able canonical encoding: equal encodings for equal values of these types."""
    if depth > 64:
        raise NoCanon("nested too deep")
    if v is None or isinstance(v, bool):
        return [type(v).__name__, v]
    t = type(v)
    if t is int:
        return ["int", str(v)]
    if t is float:
        if math.isnan(v):
            raise Skip("nan")
        return ["float", repr(v)]
    if t is complex:
        if math.isnan(v.real) or math.isnan(v.imag):
            raise Skip("nan")
        return ["complex", repr(v)]
    if t is str:
        return ["str", v]
    if t in (bytes, bytearray):
        return [t.__name__, v.hex()]
    if t in (list, tuple):
        return [t.__name__, [canon(x, depth + 1) for x in v]]
    if t in (set, frozenset):
        return [t.__name__, sorted(json.dumps(canon(x, depth + 1), sort_keys=True) for x in v)]
    if t is dict:
        items = [[json.dumps(canon(k, depth + 1), sort_keys=True), canon(x, depth + 1)] for k, x in v.items()]
        return ["dict", sorted(items, key=lambda kv: kv[0])]
    module = getattr(t, "__module__", "") or ""
    if module.startswith("numpy"):
        return canon_numpy(v, depth)
    if module.startswith("pandas"):
        return canon_pandas(v)
    if getattr(t, "__eq__", None) is object.__eq__:
        raise Skip("identity-equality")
    raise NoCanon(t.__name__)


def canon_numpy(v, depth):
    import numpy as np  # only when the value is numpy's

    if isinstance(v, np.ndarray):
        if v.dtype == object:
            return ["ndarray-object", list(v.shape), [canon(x, depth + 1) for x in v.ravel().tolist()]]
        if v.dtype.kind in "fc" and bool(np.isnan(v).any()):
            raise Skip("nan")
        return ["ndarray", str(v.dtype), list(v.shape), hashlib.sha256(np.ascontiguousarray(v).tobytes()).hexdigest()]
    if isinstance(v, np.generic):
        return ["numpy", str(v.dtype), canon(v.item(), depth + 1)]
    raise NoCanon(type(v).__name__)


def canon_pandas(v):
    import pandas as pd  # only when the value is pandas'

    if isinstance(v, (pd.DataFrame, pd.Series, pd.Index)):
        if v.isna().to_numpy().any():
            raise Skip("nan")
        hashed = pd.util.hash_pandas_object(v, index=not isinstance(v, pd.Index)).to_numpy()
        extra = [list(map(str, v.columns)), list(map(str, v.dtypes))] if isinstance(v, pd.DataFrame) else [str(v.dtype)]
        return ["pandas", type(v).__name__, extra, hashlib.sha256(hashed.tobytes()).hexdigest()]
    raise NoCanon(type(v).__name__)


def describe(value):
    """repr, hash and pickle of a value, or the reason it has no defined equality."""
    try:
        text = repr(value)
    except Exception as exc:  # noqa: BLE001
        text = "<repr failed: %s>" % one_line(exc)
    entry = {"repr": text[:REPR_CHARS] + ("…" if len(text) > REPR_CHARS else ""), "hash": None, "pickle": None, "skip": None}
    try:
        entry["hash"] = "sha256:" + hashlib.sha256(json.dumps(canon(value), sort_keys=True).encode()).hexdigest()
    except Skip as why:
        entry["skip"] = str(why)
        return entry
    except NoCanon:
        pass
    try:
        data = pickle.dumps(value, protocol=4)
        if len(data) <= PICKLE_BYTES:
            entry["pickle"] = base64.b64encode(data).decode("ascii")
    except Exception:  # noqa: BLE001 - unpicklable values keep only their hash
        pass
    if entry["hash"] is None and entry["pickle"] is None:
        entry["skip"] = "not-comparable"
    return entry


def close(a, b):
    """Equality with floats compared to a relative 1e-9 (sum order may change the last bits)."""
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=REL_TOL, abs_tol=0.0)
    if type(a) in (list, tuple) and type(a) is type(b):
        return len(a) == len(b) and all(close(x, y) for x, y in zip(a, b))
    if type(a) is dict and type(b) is dict:
        return a.keys() == b.keys() and all(close(a[k], b[k]) for k in a)
    module = getattr(type(a), "__module__", "") or ""
    if module.startswith("numpy"):
        import numpy as np

        if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
            if a.shape != b.shape or a.dtype != b.dtype:
                return False
            if a.dtype.kind in "fc":
                return bool(np.allclose(a, b, rtol=REL_TOL, atol=0.0))
            return bool(np.array_equal(a, b))
    result = a == b
    if isinstance(result, bool):
        return result
    try:
        return bool(result.all()) if hasattr(result, "all") else bool(result)
    except Exception as exc:  # noqa: BLE001
        raise Skip("ambiguous-equality") from exc


# ---------------------------------------------------------------- running


def one_line(exc):
    return ("%s: %s" % (type(exc).__name__, exc)).strip().splitlines()[0][:500]


def on_alarm(signum, frame):
    raise Timeout("the benchmark ran past the time limit")


def call_with_limit(fn, args, seconds):
    if seconds and hasattr(signal, "SIGALRM"):
        signal.signal(signal.SIGALRM, on_alarm)
        signal.alarm(int(math.ceil(seconds)))
    try:
        return fn(*args)
    finally:
        if seconds and hasattr(signal, "SIGALRM"):
            signal.alarm(0)


def seed():
    random.seed(0)
    np = sys.modules.get("numpy")
    if np is not None:
        try:
            np.random.seed(0)
        except Exception:  # noqa: BLE001
            pass


def run_suite(benchmark_dir, regex, seconds, runs):
    """(workloads with live values, import errors)."""
    benchmarks, errors = discover(benchmark_dir, regex)
    out = []
    caches = {}
    for full, attr, klass, module in benchmarks:
        instance = None
        try:
            instance = klass() if klass is not None else None
            func = getattr(instance, attr) if instance is not None else getattr(module, attr)
        except Exception as exc:  # noqa: BLE001
            out.append({"name": full, "status": "error", "error": one_line(exc), "values": []})
            continue
        sources = [func, instance, module]
        params = first_attr(sources, "params", []) or []
        combos = combinations(params)
        has_params = bool(params)
        setup = first_attr(sources, "setup")
        teardown = first_attr(sources, "teardown")
        setup_cache = first_attr(sources, "setup_cache")
        cache_args = ()
        if setup_cache is not None:
            key = id(getattr(setup_cache, "__func__", setup_cache))
            if key not in caches:
                try:
                    seed()
                    caches[key] = ("ok", call_with_limit(setup_cache, (), seconds))
                except BaseException as exc:  # noqa: BLE001
                    caches[key] = ("error", one_line(exc))
            state, cached = caches[key]
            if state == "error":
                for combo in combos:
                    out.append({"name": workload_name(full, combo, has_params), "status": "error", "error": "setup_cache: " + cached, "values": []})
                continue
            cache_args = (cached,)
        for combo in combos:
            name = workload_name(full, combo, has_params)
            args = cache_args + tuple(combo)
            values, error, skipped = [], None, None
            for _ in range(runs):
                try:
                    seed()
                    if setup is not None:
                        call_with_limit(setup, args, seconds)
                    values.append(call_with_limit(func, args, seconds))
                except NotImplementedError:
                    skipped = "setup raised NotImplementedError (asv skips it)"
                    break
                except KeyboardInterrupt:
                    raise
                except BaseException as exc:  # noqa: BLE001 - a benchmark may raise anything, SystemExit too
                    error = one_line(exc)
                    break
                finally:
                    if teardown is not None:
                        try:
                            call_with_limit(teardown, args, seconds)
                        except BaseException:  # noqa: BLE001
                            pass
            if skipped:
                out.append({"name": name, "status": "skipped", "reason": skipped, "values": []})
            elif error:
                out.append({"name": name, "status": "error", "error": error, "values": []})
            else:
                out.append({"name": name, "status": "ok", "values": values})
    return out, errors


def record_entry(w):
    entry = {"name": w["name"], "status": w["status"], "repr": None, "hash": None, "pickle": None, "skip": None, "error": w.get("error") or w.get("reason")}
    if w["status"] != "ok":
        return entry
    described = [describe(v) for v in w["values"]]
    first = described[0]
    entry.update({k: first[k] for k in ("repr", "hash", "pickle", "skip")})
    if first["skip"] is None and len(described) > 1:
        again = described[1]
        differs = first["hash"] != again["hash"] if first["hash"] is not None else False
        if first["hash"] is None and first["pickle"] is not None:
            try:
                differs = not close(w["values"][0], w["values"][1])
            except Skip as why:
                entry["skip"] = str(why)
        if differs:
            entry["skip"] = "nondeterministic"
    return entry


def record(args):
    workloads, errors = run_suite(benchmark_dir_of(args.repo, args.config), args.bench, args.timeout, args.runs)
    return {
        "version": FORMAT_VERSION,
        "mode": "record",
        "python": sys.version.split()[0],
        "importErrors": errors,
        "workloads": [record_entry(w) for w in workloads],
    }, workloads


def judge(base, live, current):
    """equal / mismatch / skipped, with a reason."""
    if base["status"] != "ok":
        return "skipped", "base: " + (base.get("error") or base["status"])
    if base.get("skip"):
        return "skipped", base["skip"]
    if current is None:
        return "skipped", "not on the expert (benchmark removed or renamed)"
    if current["status"] == "error":
        return "mismatch", "raises on the expert: " + (current.get("error") or "")
    if current["status"] != "ok":
        return "skipped", "expert: " + (current.get("error") or current["status"])
    if current.get("skip") and current["skip"] != "nondeterministic":
        return "mismatch", "the expert's value has no defined equality (%s) where the base's had" % current["skip"]
    if base.get("hash") and base["hash"] == current.get("hash"):
        return "equal", None
    if base.get("pickle"):
        try:
            before = pickle.loads(base64.b64decode(base["pickle"]))
        except Exception as exc:  # noqa: BLE001
            return "skipped", "base value does not unpickle here: " + one_line(exc)
        try:
            same = close(before, live)
        except Skip as why:
            return "skipped", str(why)
        return ("equal", None) if same else ("mismatch", "base %s, expert %s" % (base.get("repr"), current.get("repr")))
    if base.get("hash") and current.get("hash"):
        return "mismatch", "base %s, expert %s" % (base.get("repr"), current.get("repr"))
    return "skipped", "not-comparable"


def compare(args):
    with open(args.baseline, encoding="utf-8") as f:
        baseline = json.load(f)
    current, workloads = record(args)
    live = {w["name"]: (w["values"][0] if w["values"] else None) for w in workloads}
    by_name = {w["name"]: w for w in current["workloads"]}
    results = []
    for base in baseline["workloads"]:
        outcome, reason = judge(base, live.get(base["name"]), by_name.get(base["name"]))
        results.append({"name": base["name"], "outcome": outcome, "reason": reason})
    counts = {k: sum(1 for r in results if r["outcome"] == k) for k in ("equal", "mismatch", "skipped")}
    return {
        "version": FORMAT_VERSION,
        "mode": "compare",
        "python": current["python"],
        "importErrors": current["importErrors"],
        "results": results,
        "counts": counts,
    }


def main(argv=None):
    parser = argparse.ArgumentParser(prog="perfmine_snapshot.py", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="mode", required=True)
    for mode in ("record", "compare"):
        p = sub.add_parser(mode)
        p.add_argument("--repo", default=".")
        p.add_argument("--config", default="asv.conf.json")
        p.add_argument("--bench", default=None, help="regular expression, as asv run --bench")
        p.add_argument("--timeout", type=float, default=60.0, help="seconds per call")
        p.add_argument("--runs", type=int, default=2, help="calls per workload (2 detects nondeterminism)")
        p.add_argument("--out", required=True)
        if mode == "compare":
            p.add_argument("--baseline", required=True)
    args = parser.parse_args(argv)
    args.out = os.path.abspath(args.out)
    if args.mode == "compare":
        args.baseline = os.path.abspath(args.baseline)
    os.chdir(args.repo)
    args.repo = "."
    result = record(args)[0] if args.mode == "record" else compare(args)
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(result, f, indent=1, sort_keys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
