#!/usr/bin/env python3
"""perfmine's measurement harness: runs an asv (airspeed velocity) benchmark suite with asv's
semantics (asv 0.6 + asv_runner 0.2), with nothing but Python's standard library.

It is copied into containers as /perfmine/harness/perfmine_harness.py. This docstring is the
contract with the TypeScript driver (stages/validate/harness/messages.ts reads what `serve` writes).

Invocation
==========

    python3 perfmine_harness.py [--config PATH] COMMAND [options]

--config is the asv config (default asv.conf.json, else asv.conf.jsonc), relative to the current
directory; // and /* */ comments and trailing commas are allowed. benchmark_dir (default
"benchmarks"), results_dir (default "results") and repo (default ".") resolve against the config's
directory. The suite is imported as asv imports it: the benchmark directory is a package imported
by its basename through a finder that resolves only that one name (asv_runner's SpecificImporter),
so the benchmark directory's parent is NOT put on sys.path (a source tree there cannot shadow the
installed project), and this script's own directory is removed from sys.path. Every module and
subpackage of the package is imported (pkgutil order). Workload names are relative to the
benchmark directory: module.Class.time_x, sub.module.time_f, and for parameterized benchmarks
name(p1, p2) with the parameters' repr strings (memory addresses stripped, duplicates numbered).

discover [--bench REGEX]... [--out FILE]
    Imports the suite and writes asv's benchmarks.json ("version": 2, entries with the keys asv
    writes: code, name, type, unit, params, param_names, version, and for time benchmarks number,
    repeat, rounds, min_run_count, sample_time, warmup_time; timeout, pretty_name,
    setup_cache_key, setup_cache_timeout only when set, as asv omits None) to FILE or stdout.
    With --bench, only benchmarks with at least one matching workload are listed.
    Exit 0 ok; 2 usage or config error; 3 a benchmark module cannot be imported (stderr names the
    module, the exception and the last traceback lines); 4 no benchmark found.

run --out-dir DIR --commit SHA [--machine NAME] [--bench REGEX]... [-a key=value]... [--env-name NAME]
    Like `asv run --python=same --record-samples --set-commit-hash SHA`: every selected benchmark
    x rounds, rounds from the last to the first, benchmarks sorted by name and grouped by
    setup_cache, each (benchmark, parameter combination, round) in a fresh child process in a
    fresh temporary directory (or the setup_cache directory), killed at its timeout. Writes
    DIR/benchmarks.json (all benchmarks), DIR/<machine>/machine.json and
    DIR/<machine>/<sha[:8]>-<env-name>.json (results schema 2; rows of benchmarks not run are
    kept from an existing file, as asv keeps them). -a overrides rounds, repeat (N or
    "(min,max,max_time)"), number, warmup_time, sample_time, timeout, min_run_count (and asv's
    processes, version) as asv's -a does (rounds and timeout in the parent; the others win over
    the benchmark's attributes in the child). Progress lines go to stdout, benchmarks' output to
    stderr. Exit 0; 2 when a benchmark failed (as asv run) or on a usage error; 3 when the suite
    cannot be imported; 4 when no benchmark is found or selected.

serve [--bench REGEX]...
    The warm worker of the interleaved driver, speaking JSON lines: stdout carries only protocol
    lines (one JSON object per line, never NaN or Infinity: null instead); everything benchmarks
    print (Python or C level) goes to stderr; stdin carries commands.

    A supervisor (this process) reads stdin and writes stdout; one child worker imports the suite
    once and stays alive across batches. They talk over two extra pipes; the worker's fd 1 is fd 2,
    its stdin /dev/null, its process group its own. When a batch passes its timeout the supervisor
    kills the worker's process group, answers "timeout" and starts a fresh worker; when the worker
    dies (segfault, os._exit, OOM kill) it answers "crashed" and starts a fresh one. On exit (the
    "exit" command, EOF on stdin, SIGTERM, SIGINT) it kills the worker's process group, so nothing
    it started is left running.

    First line out, once the worker has imported the suite:
        {"event":"ready","protocol":1,"python":"3.11.2","pid":<supervisor pid>,
         "worker_pid":<worker pid>,"import_seconds":S,"benchmarks":{<benchmarks.json entries by name>},
         "workloads":[{"name":"mod.Class.time_x(10, 'a')","benchmark":"mod.Class.time_x","param":0}, ...]}
    workloads: every selected workload, benchmarks sorted by name, parameter combinations in
    itertools.product order ("param" is the index in that product; 0 without params).
    import_seconds: how long the worker took to import the suite (and discover it).
    module_of: each listed benchmark's module (its full name: the package's basename first);
    module_import_seconds: each imported module of the suite, the seconds its own import took (its
    parent packages already imported): what a worker importing it pays again.
    Or {"event":"fatal","reason":"suite-not-importable"|"no-benchmarks"|"bad-config","message":"..."}
    and exit 3.

    Commands (one per line) and answers (one per command, same id):
        {"id":7,"op":"batch","benchmark":"mod.time_x","param":0,"samples":5,"number":0,
         "warmup":null,"sample_time":null,"timeout":null,"clock":null}
      Runs, in a fresh instance of the benchmark's class and with the working directory an empty
      directory (as asv's fresh temporary one; the setup_cache directory for benchmarks with a
      setup_cache, as in asv), the benchmark's setups with the
      parameters (setup_cache once per worker per key, run in its own directory with the
      parameter-free setups first; its pickled result is kept in memory and unpickled for every
      batch, so each batch gets its own copy as each asv process does), then:
      - time_* / timeraw_*: number 0 (or null) means asv's choice: the benchmark's own `number` attribute,
        and when that is 0 too, number is calibrated together with the warm-up exactly as asv's
        benchmark_timing does (one sample lasts about sample_time). Otherwise number is used as
        given after a warm-up of `warmup` seconds (null: the benchmark's warmup_time, -1 meaning
        asv's 0.1 s on CPython; 0: none), or, when the command has "warmup_calls": N (an
        integer), after exactly N calls (whole samples of `number`) whatever the clocks say: a
        warm-up that costs the same on every side of a comparison, which a clock cannot shorten.
        With "values": true (a time_ benchmark), every timed call's return value is kept and the
        answer carries "value": the hash of the last one as perfmine_probe.py encodes it (null
        when it cannot be encoded): what the timed calls returned, for the verifier to compare. Then exactly `samples` samples of `number` calls with
        the benchmark's timer, setup and teardown redone between samples as asv does, garbage
        collection off while timing (timeit). timeraw: each sample is a fresh interpreter.
            {"id":7,"ok":true,"kind":"time","samples":[<seconds per call>...],"number":N,"elapsed":S}
      - mem_*: {"id":7,"ok":true,"kind":"memory","value":V,"elapsed":S} (pympler's asizeof when
        importable, else a standard-library approximation of it)
      - track_*: {"id":7,"ok":true,"kind":"track","value":V,"elapsed":S} (NaN or an infinity:
        status not-a-number; None or a non-number: failed)
      - peakmem_*: peak RSS of a fresh process running setup + the benchmark, as asv measures it:
            {"id":7,"ok":true,"kind":"peakmemory","value":V,"elapsed":S}
      then teardown; afterwards the worker's working directory is restored.
      elapsed: wall seconds of the whole batch as the supervisor saw it.
      account: where the batch's time went, in seconds of a monotonic clock read around the parts
      the worker runs anyway (never inside a timed sample: what a sample times is asv's),
      {"setup":S,"warmup":S,"samples":S}: setup is setup_cache (when this batch runs it), the
      benchmark's fresh instance with its setup_cache value, its setups and teardowns (those
      redone between samples included); warmup the warm-up before the first sample, number's
      calibration included; samples the timed samples with their timeit loops (a mem or track
      benchmark's call, a peakmem process). Every answer of the worker to a batch carries it,
      failures too ("skipped" after a setup's time); "timeout" and "crashed" answers do not.
      Failures (the worker survives them):
        {"id":7,"ok":false,"status":"skipped","message":"NotImplementedError in setup: why"}
            (also for SkipNotImplemented in the benchmark and for asv's skip_params)
        {"id":7,"ok":false,"status":"failed","message":"ZeroDivisionError: ... (traceback tail)"}
        {"id":7,"ok":false,"status":"timeout","message":"killed after 60 s"}
        {"id":7,"ok":false,"status":"crashed","message":"the worker died of SIGSEGV"}
        {"id":7,"ok":false,"status":"not-a-number","message":"track_x returned nan"}
        {"id":7,"ok":false,"status":"unknown","message":"no benchmark mod.time_y"}
      clock: null or "wall" times with the benchmark's timer (asv's default, the wall clock);
      "cpu" replaces the default timer by the worker process's CPU time (time.process_time),
      which time spent preempted by other processes does not inflate; a benchmark's own `timer`
      attribute is kept either way.
      timeout: the command's, else the benchmark's `timeout` attribute, else the config's
      default_benchmark_timeout (60 s); it bounds the whole batch; a batch that must first run
      setup_cache gets the setup_cache's timeout on top.
        {"id":10,"op":"fingerprint","benchmark":"mod.time_x","param":0,"timeout":null}
            -> {"id":10,"ok":true,"kind":"fingerprint","code":[[file, first line, last line], ...]}
      The code the workload runs: its setup as for a batch, then one call of the benchmark with
      every Python function call recorded (sys.monitoring where the interpreter has it,
      sys.settrace otherwise), then teardown; each executed code object as its file's real path
      and line range. A timeraw benchmark runs its code in another interpreter: "code":[] and
      "opaque":true. Failures as for a batch.
        {"id":11,"op":"outline","files":["/repo/pkg/core.py", ...]}
            -> {"id":11,"ok":true,"kind":"outline","files":{"/repo/pkg/core.py":[["def","Cls.meth",first,last], ...]}}
      The def and class statements of Python files (first line: the first decorator's; nested
      ones named with their parents); null for a file that cannot be read or parsed.
        {"id":12,"op":"modules"} -> {"id":12,"ok":true,"kind":"modules","files":[real paths]}
      The files of every module the worker has loaded: the suite and everything it imports.
        {"id":8,"op":"restart","benchmarks":null|["mod.Class.time_x", ...]}
            -> {"id":8,"ok":true,"worker_pid":N,"elapsed":S,"import_seconds":S}
      A fresh worker process in place of the current one (the suite imported again): a new memory
      layout and allocation history, so that a process's own layout effect on a benchmark (seen
      up to 10% between two processes of identical code) is redrawn. A worker that cannot import
      the suite again: {"id":8,"ok":false,"status":"crashed","message":"..."}. With benchmarks
      (names the first worker listed), the fresh worker, and every later one, imports only the
      package and the modules holding them, as asv_runner imports only a benchmark's own module in
      each of its processes (a suite whose other modules build large inputs at import is not
      paid for again), and only they can be run or named by a later restart; a batch of another
      benchmark gets status "unknown".
        {"id":9,"op":"exit"} -> {"id":9,"ok":true}, exit 0 (EOF on stdin: exit 0 too)
      A malformed line gets {"id":null,"ok":false,"status":"unknown","message":"..."} (the id
      when one could be read) and the supervisor goes on.

The environment is passed unchanged to every child (the driver sets PYTHONHASHSEED and the
thread variables). Internal commands (_worker, _run-one, _setup-cache) are this program's own
child processes.

Python 3.8+, standard library only.
"""

import copy
import errno
import hashlib
import importlib
import importlib.machinery
import inspect
import itertools
import json
import math
import os
import pickle
import pkgutil
import platform
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
import timeit
import traceback

#: The oldest Python perfmine's in-image code runs on (python/README.md says why).
if sys.version_info < (3, 8):
    sys.exit("perfmine: {} needs Python 3.8 or newer; {} is {}.{}".format(
        os.path.basename(__file__), sys.executable, *sys.version_info[:2]))

PROTOCOL_VERSION = 1
HARNESS_PATH = os.path.abspath(__file__)

EXIT_OK = 0
EXIT_USAGE = 2
EXIT_SUITE = 3
EXIT_NO_BENCHMARKS = 4

DEFAULT_TIMEOUT = 60.0
wall_timer = timeit.default_timer
# The clock of a batch's account (where its time went: setup, warm-up, samples): monotonic,
# read around the parts the harness runs anyway, never inside a timed sample.
account_clock = time.perf_counter
# A batch's "clock": "wall" is asv's default timer; "cpu" counts the worker process's own CPU time
# (all its threads), which time spent preempted by other processes does not inflate.
CLOCKS = {"wall": None, "cpu": time.process_time}


class UsageError(Exception):
    """A bad command line or config file: exit 2."""


class SuiteError(Exception):
    """The suite cannot be imported (or a benchmark cannot be created): exit 3."""


def say(message):
    sys.stderr.write(message.rstrip("\n") + "\n")
    sys.stderr.flush()


def traceback_tail(limit=12):
    """The last lines of the current exception's traceback."""
    lines = traceback.format_exc().rstrip("\n").split("\n")
    return "\n".join(lines[-limit:])


def exception_summary(exc, limit=12):
    """`Type: message` followed by the traceback's last lines."""
    message = str(exc)
    head = type(exc).__name__ + (": " + message if message else "")
    return head + "\n" + traceback_tail(limit)


# ---------------------------------------------------------------- configuration


def strip_jsonc(text):
    """JSON with // and /* */ comments and trailing commas -> plain JSON."""
    out = []
    i, n = 0, len(text)
    quote = None
    while i < n:
        c = text[i]
        if quote:
            out.append(c)
            if c == "\\" and i + 1 < n:
                out.append(text[i + 1])
                i += 2
                continue
            if c == quote:
                quote = None
            i += 1
        elif c == '"':
            quote = c
            out.append(c)
            i += 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2
        else:
            out.append(c)
            i += 1
    return re.sub(r",(\s*[\]}])", r"\1", "".join(out))


class Config:
    def __init__(self, path, data):
        self.path = os.path.abspath(path)
        self.data = data
        root = os.path.dirname(self.path)
        self.root = root
        self.benchmark_dir = os.path.normpath(os.path.join(root, data.get("benchmark_dir", "benchmarks")))
        self.results_dir = os.path.normpath(os.path.join(root, data.get("results_dir", "results")))
        self.repo = os.path.normpath(os.path.join(root, data.get("repo", ".")))
        try:
            self.default_timeout = float(data.get("default_benchmark_timeout", DEFAULT_TIMEOUT))
        except (TypeError, ValueError):
            raise UsageError("{}: default_benchmark_timeout must be a number of seconds".format(path))

    def requirements(self):
        """The matrix's requirements as the results file lists them: a name and its (first) version or ''."""
        matrix = self.data.get("matrix") or {}
        if not isinstance(matrix, dict):
            return {}
        if any(k in matrix for k in ("req", "env", "env_nobuild")):
            matrix = matrix.get("req") or {}
        reqs = {}
        for key, value in matrix.items():
            if isinstance(value, list):
                value = value[0] if value else ""
            reqs[key] = "" if value is None else str(value)
        return reqs


def config_path_from(arg):
    if arg:
        return arg
    if not os.path.isfile("asv.conf.json") and os.path.isfile("asv.conf.jsonc"):
        return "asv.conf.jsonc"
    return "asv.conf.json"


def load_config(arg):
    path = config_path_from(arg)
    if not os.path.isfile(path):
        raise UsageError(
            "config file {} not found (in {}); pass --config PATH to the asv config".format(path, os.getcwd())
        )
    try:
        with open(path, encoding="utf-8") as f:
            data = json.loads(strip_jsonc(f.read()))
    except (OSError, ValueError) as exc:
        raise UsageError("cannot read config file {}: {}".format(path, exc))
    if not isinstance(data, dict):
        raise UsageError("config file {} must hold a JSON object".format(path))
    return Config(path, data)


# ---------------------------------------------------------------- importing the suite


class SpecificImporter:
    """Resolves exactly one top-level module name from one directory (asv_runner's approach)."""

    def __init__(self, name, root):
        self.name = name
        self.root = root

    def find_spec(self, fullname, path=None, target=None):
        if fullname != self.name or path is not None:
            return None
        return importlib.machinery.PathFinder.find_spec(fullname, [self.root], target)


def prepare_sys_path(benchmark_dir):
    """Makes the suite importable by its package name, and only it (no parent dir on sys.path)."""
    here = os.path.dirname(HARNESS_PATH)
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here or p == ""]
    name = os.path.basename(benchmark_dir)
    if not any(isinstance(f, SpecificImporter) and f.name == name for f in sys.meta_path):
        sys.meta_path.insert(0, SpecificImporter(name, os.path.dirname(benchmark_dir)))


def check_tree(root, require_init=True):
    """asv's checks: the benchmark dir is a package; no x.py beside a directory x/."""
    if os.path.basename(root) == "__pycache__":
        return
    if not os.path.isfile(os.path.join(root, "__init__.py")):
        if require_init:
            raise SuiteError("No __init__.py file in '{}' (asv needs the benchmark directory to be a package)".format(root))
        return
    entries = os.listdir(root)
    modules = {os.path.splitext(e)[0] for e in entries if e.endswith(".py") and os.path.isfile(os.path.join(root, e))}
    for e in entries:
        path = os.path.join(root, e)
        if os.path.isdir(path):
            if e in modules:
                raise SuiteError("Found a directory and python file with same name in benchmark tree: '{}'".format(path))
            check_tree(path, require_init=False)


def import_module_timed(name, seconds=None):
    """Imports one module of the suite (SuiteError when it cannot be); with `seconds`, records there
    how long its own import took (its parents already imported)."""
    started = account_clock()
    try:
        module = importlib.import_module(name)
    except BaseException as exc:  # noqa: B036 - an import may raise anything, SystemExit included
        raise SuiteError("Error importing benchmark module {}: {}".format(name, exception_summary(exc)))
    if seconds is not None:
        seconds[name] = account_clock() - started
    return module


def import_modules(package, seconds=None):
    """The package and every module and subpackage under it, depth first, as asv imports them."""
    module = import_module_timed(package, seconds)
    yield module
    if getattr(module, "__path__", None):
        for _, name, _ in pkgutil.iter_modules(module.__path__, package + "."):
            for sub in import_modules(name, seconds):
                yield sub


# ---------------------------------------------------------------- attribute lookup (asv_runner's rules)


def get_attr(source, name, ignore_case=False):
    if not ignore_case:
        return getattr(source, name, None)
    found = [getattr(source, key) for key in dir(source) if key.lower() == name.lower()]
    if len(found) > 1:
        raise ValueError("{} contains multiple {} functions.".format(getattr(source, "__name__", source), name))
    return found[0] if found else None


def all_attrs(sources, name, ignore_case=False):
    for source in sources:
        value = get_attr(source, name, ignore_case)
        if value is not None:
            yield value


def first_attr(sources, name, default, ignore_case=False):
    for value in all_attrs(sources, name, ignore_case):
        return value
    return default


def repr_no_address(obj):
    """repr without a memory address, when the address is the object's own (asv's rule)."""
    text = repr(obj)
    pattern = re.compile(r"^(<.*) at (0x[\da-fA-F]*)(>)$")
    m = pattern.match(text)
    if m:
        m2 = pattern.match(object.__repr__(obj))
        if m2 and m2.group(2) == m.group(2):
            text = m.group(1) + m.group(3)
    return text


def normalize_params(params, param_names, name):
    try:
        names = [str(x) for x in list(param_names)]
    except ValueError:
        raise ValueError("{}.param_names is not a list of strings".format(name))
    try:
        params = list(params)
    except ValueError:
        raise ValueError("{}.params is not a list".format(name))
    if params and not isinstance(params[0], (tuple, list)):
        params = [params]
    else:
        params = [list(entry) for entry in params]
    if len(names) != len(params):
        names = names[: len(params)]
        names += ["param{}".format(k + 1) for k in range(len(names), len(params))]
    return params, names


def param_reprs(params):
    """The parameters as asv stores them: repr strings, duplicates numbered `x (0)`, `x (1)`."""
    out = []
    for entry in params:
        reprs = [repr_no_address(v) for v in entry]
        counts = {}
        for r in reprs:
            counts[r] = counts.get(r, 0) + 1
        seen = {}
        for j, r in enumerate(reprs):
            if counts[r] > 1:
                reprs[j] = "{} ({})".format(r, seen.get(r, 0))
                seen[r] = seen.get(r, 0) + 1
        out.append(reprs)
    return out


def source_of(items):
    """asv_runner's get_source_code: sources concatenated, methods wrapped in their class."""
    parts = []
    prev_class = None
    for func in items:
        if hasattr(func, "pretty_source"):
            src = textwrap.dedent(func.pretty_source).lstrip()
        else:
            try:
                lines, _ = inspect.getsourcelines(func)
            except TypeError:
                continue
            if not lines:
                continue
            src = textwrap.dedent("\n".join(line.rstrip() for line in lines))
        class_name = None
        if inspect.ismethod(func):
            if hasattr(func, "im_class"):
                class_name = func.im_class.__name__
            elif hasattr(func, "__qualname__"):
                names = func.__qualname__.split(".")
                if len(names) > 1:
                    class_name = names[-2]
        if class_name and prev_class != class_name:
            src = "class {}:\n    {}".format(class_name, src.replace("\n", "\n    "))
        elif class_name:
            src = "    " + src.replace("\n", "\n    ")
        parts.append(src)
        prev_class = class_name
    return "\n\n".join(parts).rstrip()


def setup_cache_key_of(func):
    if func is None:
        return None
    module = inspect.getmodule(func)
    mname = ".".join(module.__name__.split(".", 1)[1:])
    if not mname:
        mname = inspect.getsourcefile(func)
    return "{}:{}".format(mname, inspect.getsourcelines(func)[1])


def timeraw_env_of(sources):
    env = first_attr(sources, "env", None)
    if env is None:
        return None
    if not isinstance(env, dict):
        raise TypeError("timeraw benchmark attribute 'env' must be a dict, got {!r}".format(type(env)))
    out = {}
    for key, value in env.items():
        if value is None:
            raise TypeError("timeraw env values must not be None (key {!r}); omit the key instead".format(key))
        out[str(key)] = str(value)
    return out or None


# ---------------------------------------------------------------- benchmark kinds

# asv_runner's benchmark types in the order it tries them: (kind, name pattern, JSON type, unit).
KINDS = [
    ("memory", re.compile(r"^(Mem[A-Z_].+)|(mem_.+)$"), "memory", "bytes"),
    ("peakmemory", re.compile(r"^(PeakMem[A-Z_].+)|(peakmem_.+)$"), "peakmemory", "bytes"),
    ("time", re.compile(r"^(Time[A-Z_].+)|(time_.+)$"), "time", "seconds"),
    ("timeraw", re.compile(r"^(Timeraw[A-Z_].+)|(timeraw_.+)$"), "time", "seconds"),
    ("track", re.compile(r"^(Track[A-Z_].+)|(track_.+)$"), "track", "unit"),
]
TIMED_KINDS = ("time", "timeraw")


def kind_of(attr_name):
    for kind, pattern, _, _ in KINDS:
        if pattern.match(attr_name):
            return kind
    return None


class Benchmark:
    """One benchmark as asv_runner builds it: a fresh instance of its class (if any) and the
    attribute sources [function, instance, module]. Built once at discovery (with `describe`, which
    reads the source for the version) and again, cheaply, for every run."""

    def __init__(self, name, kind, module, klass, attr_name, func, describe=True):
        self.name = name
        self.kind = kind
        self.module = module
        self.klass = klass
        self.attr_name = attr_name
        if klass is not None:
            instance = klass()
            func = getattr(instance, attr_name)
            self.sources = [func, instance, module]
        else:
            self.sources = [func, module]
        self.func = func
        self.pretty_name = getattr(func, "pretty_name", None)
        self.setups = list(all_attrs(self.sources, "setup", True))[::-1]
        self.teardowns = list(all_attrs(self.sources, "teardown", True))
        self.setup_cache = first_attr(self.sources, "setup_cache", None)
        self.setup_cache_timeout = first_attr([self.setup_cache], "timeout", None)
        self.timeout = first_attr(self.sources, "timeout", None)
        self.type = [t for k, _, t, _ in KINDS if k == kind][0]
        self.unit = [u for k, _, _, u in KINDS if k == kind][0]
        if kind == "track":
            self.type = first_attr(self.sources, "type", "track")
            self.unit = first_attr(self.sources, "unit", "unit")
        raw_params = first_attr(self.sources, "params", [])
        raw_names = first_attr(self.sources, "param_names", [])
        self.params, self.param_names = normalize_params(raw_params, raw_names, name)
        self.skip_tuples = first_attr(self.sources, "skip_params", [])
        self.timeraw_env = timeraw_env_of(self.sources) if kind == "timeraw" else None
        if kind in TIMED_KINDS:
            self.rounds = int(first_attr(self.sources, "rounds", int(first_attr(self.sources, "processes", 2))))
            self.load_vars()
        self.current = ()
        self.cache = None
        self.redo_next = False
        # the seconds spent in its setups and teardowns (the measurement's account, not its samples)
        self.setup_seconds = 0.0
        if describe:
            self.setup_cache_key = setup_cache_key_of(self.setup_cache)
            self.code = source_of([self.func] + self.setups + [self.setup_cache])
            self.version = self.version_of()
            self.param_reprs = param_reprs(self.params)

    def version_of(self):
        explicit = first_attr(self.sources, "version", None)
        if explicit is not None:
            return str(explicit)
        code = self.code
        if self.kind == "timeraw" and self.timeraw_env:
            code = code + "\n# timeraw_env\n" + repr(sorted(self.timeraw_env.items()))
        return hashlib.sha256(code.encode("utf-8")).hexdigest()

    def load_vars(self):
        """Timing attributes, re-read after setup (a setup may change them) as asv does."""
        s = self.sources
        self.repeat = first_attr(s, "repeat", 0)
        self.min_run_count = first_attr(s, "min_run_count", 2)
        default_number = 1 if self.kind == "timeraw" else 0
        self.number = int(first_attr(s, "number", default_number))
        self.sample_time = first_attr(s, "sample_time", 0.01)
        self.warmup_time = first_attr(s, "warmup_time", -1)
        self.timer = None if self.kind == "timeraw" else first_attr(s, "timer", wall_timer)

    def add_overrides(self, overrides):
        """asv's `-a`: attributes that win over the benchmark's own (read at the next load_vars)."""
        if overrides:
            holder = type("Overrides", (), dict(overrides))
            self.sources.insert(0, holder)

    def entry(self):
        """The benchmarks.json entry: the attributes asv's discovery serializes (None omitted)."""
        fields = [
            ("name", self.name), ("pretty_name", self.pretty_name),
            ("setup_cache_key", self.setup_cache_key), ("setup_cache_timeout", self.setup_cache_timeout),
            ("timeout", self.timeout), ("code", self.code), ("version", self.version),
            ("type", self.type), ("unit", self.unit), ("param_names", self.param_names),
            ("params", self.param_reprs),
        ]
        if self.kind in TIMED_KINDS:
            fields += [
                ("rounds", self.rounds), ("repeat", self.repeat), ("min_run_count", self.min_run_count),
                ("number", self.number), ("sample_time", self.sample_time), ("warmup_time", self.warmup_time),
            ]
        return {k: v for k, v in fields if isinstance(v, (str, int, float, list, dict, bool))}

    # ---- running (asv_runner's Benchmark methods)

    def combinations(self):
        return list(itertools.product(*self.params)) if self.params else [()]

    def set_param_idx(self, idx):
        combos = self.combinations()
        if not 0 <= idx < len(combos):
            raise ValueError("Invalid benchmark parameter permutation index: {!r}".format(idx))
        self.current = tuple(combos[idx]) if self.params else ()

    def call_args(self):
        if self.cache is not None:
            return (self.cache,) + tuple(self.current)
        return tuple(self.current)

    def skipped_by_params(self):
        return tuple(self.current) in self.skip_tuples

    def do_setup(self):
        """Runs the setups; returns a skip reason (str) or None."""
        if self.skipped_by_params():
            return "skip_params"
        started = account_clock()
        try:
            for setup in self.setups:
                setup(*self.call_args())
        except NotImplementedError as exc:
            print("asv: skipped: {!r} ".format(exc))
            return "NotImplementedError in setup" + (": {}".format(exc) if str(exc) else "")
        finally:
            if self.kind in TIMED_KINDS:
                self.load_vars()
            self.setup_seconds += account_clock() - started
        return None

    def redo_setup(self):
        if not self.redo_next:
            self.redo_next = True
            return
        self.do_teardown()
        self.do_setup()

    def do_teardown(self):
        if self.skipped_by_params():
            return
        started = account_clock()
        try:
            for teardown in self.teardowns:
                teardown(*self.call_args())
        finally:
            self.setup_seconds += account_clock() - started

    def do_setup_cache(self):
        if self.setup_cache is None:
            return None
        for setup in self.setups:
            if parameter_free(setup):
                setup()
        return self.setup_cache()

    def timer_for(self, clock=None, keep=None):
        """A timeit.Timer (or the separate-process timer of timeraw) whose setup is redo_setup;
        `clock` replaces the default timer (a benchmark's own `timer` attribute always wins).
        `keep` (a one-item list): every timed call's return value is stored there (the last one stays)."""
        args = tuple(self.call_args())
        if self.kind == "timeraw":
            func = (lambda: self.func(*args)) if args else self.func
            return SeparateProcessTimer(func, self.timeraw_env)
        if keep is not None:
            bound = self.func

            def func():
                keep[0] = bound(*args)
        elif args:
            def func():
                self.func(*args)
        else:
            func = self.func
        timer = clock if clock is not None and self.timer is wall_timer else self.timer
        return timeit.Timer(stmt=func, setup=self.redo_setup, timer=timer)


def parameter_free(func):
    try:
        inspect.signature(func).bind()
    except TypeError:
        return False
    except ValueError:
        return False
    return True


def is_skip_not_implemented(exc):
    """asv_runner's SkipNotImplemented (matched by name: asv_runner need not be installed)."""
    return isinstance(exc, NotImplementedError) and any(c.__name__ == "SkipNotImplemented" for c in type(exc).__mro__)


class SeparateProcessTimer:
    """timeraw: the benchmark returns code (or (code, setup)) timed by timeit in a fresh interpreter."""

    template = textwrap.dedent(
        '''
        from __future__ import print_function
        from timeit import timeit, default_timer as timer
        print(repr(timeit(stmt="""{stmt}""", setup="""{setup}""",
                    number={number}, timer=timer)))
        '''
    ).strip()

    def __init__(self, func, env=None):
        self.func = func
        self.env = env

    def timeit(self, number):
        stmt = self.func()
        setup = ""
        if isinstance(stmt, tuple):
            stmt, setup = stmt
        stmt = textwrap.dedent(stmt).replace(r'"""', r"\"\"\"")
        setup = textwrap.dedent(setup).replace(r'"""', r"\"\"\"")
        code = self.template.format(stmt=stmt, setup=setup, number=number)
        env = dict(os.environ)
        if self.env:
            env.update(self.env)
        evaler = "import sys\ncode = sys.stdin.read()\nexec(code)\n"
        proc = subprocess.Popen(
            [sys.executable, "-c", evaler], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
        )
        out, err = proc.communicate(code.encode("utf-8"))
        if err:
            sys.stderr.write(err.decode("utf-8", "replace"))
            sys.stderr.flush()
        if proc.returncode != 0:
            raise RuntimeError("Subprocess failed: {}".format(err.decode("utf-8", "replace")))
        return float(out.decode("utf-8").strip())


# ---------------------------------------------------------------- discovery


def benchmark_from(attr_name, module, klass, func, describe=True):
    """asv_runner's _get_benchmark: a Benchmark, or None when the name is not a benchmark's."""
    if getattr(func, "skip_benchmark", False):
        return None
    try:
        custom = func.benchmark_name
    except AttributeError:
        custom = None
        search = attr_name
    else:
        search = custom.split(".")[-1]
    kind = kind_of(search)
    if kind is None:
        return None
    parts = module.__name__.split(".", 1)[1:]
    if klass is None:
        name = custom if custom is not None else ".".join(parts + [func.__name__])
        return Benchmark(name, kind, module, None, attr_name, func, describe)
    name = custom if custom is not None else ".".join(parts + [klass.__name__, attr_name])
    return Benchmark(name, kind, module, klass, attr_name, None, describe)


def benchmarks_in(module):
    for attr_name, value in list(module.__dict__.items()):
        if attr_name.startswith("_"):
            continue
        if inspect.isclass(value) and not inspect.isabstract(value):
            for name, member in inspect.getmembers(value):
                if inspect.isfunction(member) or inspect.ismethod(member):
                    bench = creating(name, module, value, member)
                    if bench is not None:
                        yield bench
        elif inspect.isfunction(value):
            bench = creating(attr_name, module, None, value)
            if bench is not None:
                yield bench


def creating(attr_name, module, klass, func):
    try:
        return benchmark_from(attr_name, module, klass, func)
    except BaseException as exc:  # noqa: B036 - a class __init__ may raise anything
        where = "{}.{}".format(klass.__name__, attr_name) if klass is not None else attr_name
        raise SuiteError("Error creating benchmark {} in module {}: {}".format(where, module.__name__, exception_summary(exc)))


def discover(benchmark_dir, seconds=None):
    """Every benchmark of the suite by name, in discovery order (a later duplicate name wins).
    Raises SuiteError when the suite (any module of it) cannot be imported. With `seconds`, each
    module's own import time is recorded there."""
    if not os.path.isdir(benchmark_dir):
        raise SuiteError("benchmark directory {} not found".format(benchmark_dir))
    check_tree(benchmark_dir)
    prepare_sys_path(benchmark_dir)
    found = {}
    for module in import_modules(os.path.basename(benchmark_dir), seconds):
        for bench in benchmarks_in(module):
            found[bench.name] = bench
    return found


def discover_in(benchmark_dir, modules, seconds=None):
    """The benchmarks of some modules of the suite only (full module names, the package first
    imported), as asv_runner imports one benchmark's module in each of its processes. Raises
    SuiteError when one cannot be imported."""
    check_tree(benchmark_dir)
    prepare_sys_path(benchmark_dir)
    package = os.path.basename(benchmark_dir)
    found = {}
    for name in [package] + [m for m in modules if m != package]:
        module = import_module_timed(name, seconds)
        if name in modules:
            for bench in benchmarks_in(module):
                found[bench.name] = bench
    return found


def find_benchmark(benchmark_dir, name):
    """asv_runner's get_benchmark_from_name: the module guessed from the name is imported directly
    (so a child process imports only that module), else the whole suite is searched."""
    prepare_sys_path(benchmark_dir)
    parts = name.split(".")
    package = os.path.basename(benchmark_dir)
    for i in (1, 2):
        path = os.path.join(benchmark_dir, *parts[:-i]) + ".py"
        if len(parts) <= i or not os.path.isfile(path):
            continue
        module = importlib.import_module(".".join([package] + parts[:-i]))
        value = getattr(module, parts[-i], None)
        if value is None:
            break
        if i == 1 and inspect.isfunction(value):
            bench = benchmark_from(parts[-1], module, None, value)
            if bench is not None and bench.name == name:
                return bench
            break
        if i == 2 and inspect.isclass(value):
            member = getattr(value, parts[-1], None)
            if inspect.isfunction(member) or inspect.ismethod(member):
                bench = benchmark_from(parts[-1], module, value, member)
                if bench is not None and bench.name == name:
                    return bench
            break
    found = discover(benchmark_dir)
    if name not in found:
        raise ValueError("Could not find benchmark '{}'".format(name))
    return found[name]


def fresh_copy(bench):
    """The benchmark rebuilt for one run: a new class instance, attributes read again."""
    func = None if bench.klass is not None else bench.func
    run = Benchmark(bench.name, bench.kind, bench.module, bench.klass, bench.attr_name, func, describe=False)
    run.setup_cache_key = bench.setup_cache_key
    return run


def workload_name(name, combo):
    return "{}({})".format(name, ", ".join(combo)) if combo else name


def selection(benches, regexes):
    """asv's benchmark selection: {name: [param indices]} of benchmarks with a matching workload."""
    chosen = {}
    patterns = [re.compile(r) for r in regexes]
    for name in sorted(benches):
        bench = benches[name]
        if bench.params:
            idx = [
                j for j, combo in enumerate(itertools.product(*bench.param_reprs))
                if not patterns or any(p.search(workload_name(name, combo)) for p in patterns)
            ]
            if idx:
                chosen[name] = idx
        elif not patterns or any(p.search(name) for p in patterns):
            chosen[name] = [0]
    return chosen


def workloads_of(benches, chosen):
    out = []
    for name in sorted(chosen):
        bench = benches[name]
        combos = list(itertools.product(*bench.param_reprs)) if bench.params else [()]
        for j in chosen[name]:
            out.append({"name": workload_name(name, combos[j]), "benchmark": name, "param": j})
    return out


def benchmarks_json(benches, names=None):
    data = {name: benches[name].entry() for name in (names if names is not None else benches)}
    data["version"] = 2
    return data


def check_regexes(regexes):
    for r in regexes:
        try:
            re.compile(r)
        except re.error as exc:
            raise UsageError("--bench {!r} is not a valid regular expression: {}".format(r, exc))


# ---------------------------------------------------------------- timing (asv_runner's TimeBenchmark)


def default_warmup(warmup_time):
    """asv's rule for a negative warmup_time: 1 s on PyPy, 5 s on GraalPy, else 0.1 s."""
    if warmup_time >= 0:
        return warmup_time
    if "__pypy__" in sys.modules:
        return 1.0
    if "__graalpython__" in sys.modules:
        return 5.0
    return 0.1


def repeat_rule(repeat, rounds, timeout):
    """asv's (min_repeat, max_repeat, max_time) from the `repeat` attribute."""
    try:
        min_repeat, max_repeat, max_time = repeat
    except (ValueError, TypeError):
        if repeat == 0:
            min_repeat, max_repeat, max_time = 1, 10, 20.0
            if rounds > 1:
                max_repeat //= 2
                max_time /= 2.0
        else:
            min_repeat = max_repeat = repeat
            max_time = 60.0 if timeout is None else timeout
    return int(min_repeat), int(max_repeat), float(max_time)


def benchmark_timing(bench, timer, min_repeat, max_repeat, max_time, warmup_time, number, min_run_count, sample_time,
                     warmup_calls=None, marks=None):
    """asv_runner's benchmark_timing: (samples of `number` calls, in seconds per sample, number).
    With number 0, number is chosen so that a sample lasts about sample_time, warming up at the
    same time; else a warm-up of warmup_time seconds, or, when warmup_calls is given, of exactly
    that many calls (rounded up to whole samples of `number`), whatever any clock says. Sampling
    stops at max_repeat samples, or once min_repeat samples and min_run_count calls are done and
    max_time is exceeded. `marks` (a list): where the warm-up ends and the samples begin is
    appended to it, as (account_clock(), bench.setup_seconds), for the batch's account."""
    start_time = wall_timer()
    run_count = 0
    samples = []

    def too_slow(num_samples):
        if run_count < min_run_count or num_samples < min_repeat:
            return False
        return wall_timer() > start_time + warmup_time + max_time

    if number == 0:
        number = 1
        while True:
            bench.redo_next = False
            start = wall_timer()
            timing = timer.timeit(number)
            wall_time = wall_timer() - start
            actual = max(wall_time, timing)
            run_count += number
            if actual >= sample_time:
                if wall_timer() > start_time + warmup_time:
                    break
            else:
                try:
                    p = min(10.0, max(1.1, sample_time / actual))
                except ZeroDivisionError:
                    p = 10.0
                number = max(number + 1, int(p * number))
        if too_slow(1):
            return [timing], number
    elif warmup_calls is not None:
        for _ in range(-(-warmup_calls // number)):
            bench.redo_next = False
            timer.timeit(number)
            run_count += number
    elif warmup_time > 0:
        while True:
            bench.redo_next = False
            timing = timer.timeit(number)
            run_count += number
            if wall_timer() >= start_time + warmup_time:
                break
        if too_slow(1):
            return [timing], number
    if marks is not None:
        marks.append((account_clock(), bench.setup_seconds))
    while len(samples) < max_repeat:
        timing = timer.timeit(number)
        run_count += number
        samples.append(timing)
        if too_slow(len(samples)):
            break
    return samples, number


def run_timed_like_asv(bench):
    """TimeBenchmark.run: samples (seconds per call) and number, with the benchmark's attributes."""
    min_repeat, max_repeat, max_time = repeat_rule(bench.repeat, bench.rounds, bench.timeout)
    samples, number = benchmark_timing(
        bench, bench.timer_for(), min_repeat, max_repeat, max_time,
        default_warmup(bench.warmup_time), bench.number, bench.min_run_count, bench.sample_time,
    )
    return {"samples": [s / number for s in samples], "number": number}


# ---------------------------------------------------------------- memory


def maxrss_bytes():
    import resource

    usage = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return usage if sys.platform == "darwin" else usage * 1024


def deep_objects(root, seen):
    """Sizes of every object reachable from root not yet in `seen` (by id), counted once."""
    total = 0
    stack = [root]
    while stack:
        obj = stack.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        if isinstance(obj, type) or inspect.ismodule(obj) or inspect.isroutine(obj):
            continue
        total += sys.getsizeof(obj, 0)
        if isinstance(obj, dict):
            stack.extend(obj.keys())
            stack.extend(obj.values())
        elif isinstance(obj, (list, tuple, set, frozenset)):
            stack.extend(obj)
        else:
            attrs = getattr(obj, "__dict__", None)
            if isinstance(attrs, dict):
                stack.append(attrs)
            for slot in getattr(type(obj), "__slots__", ()) or ():
                if isinstance(slot, str) and hasattr(obj, slot):
                    stack.append(getattr(obj, slot))
    return total


def asizeof(obj):
    """pympler's asizeof when importable, else a standard-library approximation of it."""
    try:
        from pympler.asizeof import asizeof as pympler_asizeof
    except ImportError:
        return deep_objects(obj, set())
    return pympler_asizeof(obj)


def mem_value(obj):
    """asv's MemBenchmark value: the size a copy of the object adds beside the object itself."""
    return asizeof([obj, copy.copy(obj)]) - asizeof([obj, obj])


# ---------------------------------------------------------------- one benchmark in this process (asv's `run`)


def run_here(bench, idx, cache):
    """asv_runner's _run for one parameter combination: the result asv writes (a dict of samples
    and number for timed benchmarks, a value, or NaN when skipped). Exceptions propagate."""
    if bench.params:
        bench.set_param_idx(idx)
    bench.cache = cache
    skip = bench.do_setup()
    try:
        if skip:
            return math.nan
        try:
            if bench.kind in TIMED_KINDS:
                return run_timed_like_asv(bench)
            value = bench.func(*bench.call_args())
            if bench.kind == "memory":
                return mem_value(value)
            if bench.kind == "peakmemory":
                return maxrss_bytes()
            return value
        except NotImplementedError as exc:
            if is_skip_not_implemented(exc):
                return math.nan
            raise
    finally:
        bench.do_teardown()


def load_cache_pickle(bench):
    if bench.setup_cache_key is None:
        return None
    with open("cache.pickle", "rb") as f:
        return pickle.load(f)


def child_run_one(argv):
    """_run-one BENCHMARK_DIR NAME PARAM_IDX OVERRIDES_JSON RESULT_FILE (cwd: the run directory)."""
    benchmark_dir, name, idx, overrides, result_file = argv
    bench = find_benchmark(benchmark_dir, name)
    bench.add_overrides(json.loads(overrides))
    result = run_here(bench, int(idx), load_cache_pickle(bench))
    with open(result_file, "w") as f:
        json.dump(result, f)
    return 0


def child_setup_cache(argv):
    """_setup-cache BENCHMARK_DIR NAME: runs setup_cache in the cwd, pickled to cache.pickle."""
    benchmark_dir, name = argv
    bench = find_benchmark(benchmark_dir, name)
    cache = bench.do_setup_cache()
    with open("cache.pickle", "wb") as f:
        pickle.dump(cache, f)
    return 0


# ---------------------------------------------------------------- statistics (asv_runner's compute_stats)


def binom_pmf(n, k, p):
    if not 0 <= k <= n:
        return 0
    if p == 0:
        return 1.0 * (k == 0)
    if p == 1.0:
        return 1.0 * (k == n)
    return math.exp(
        math.lgamma(1 + n) - math.lgamma(1 + n - k) - math.lgamma(1 + k) + k * math.log(p) + (n - k) * math.log(1 - p)
    )


def quantile(x, q):
    if not 0 <= q <= 1:
        raise ValueError("Invalid quantile")
    y = sorted(x)
    n = len(y)
    z = (n - 1) * q
    j = int(math.floor(z))
    z -= j
    return y[-1] if j == n - 1 else (1 - z) * y[j] + z * y[j + 1]


def quantile_ci(x, q, alpha_min=0.01):
    """The quantile and the order-statistic interval of coverage >= 1 - alpha_min (or +-inf)."""
    y = sorted(x)
    n = len(y)
    alpha = min(alpha_min, 1 - alpha_min)
    pa, pb = alpha / 2, 1 - alpha / 2
    a, b = -math.inf, math.inf
    cumulative = 0
    for k, yk in enumerate(y):
        cumulative += binom_pmf(n, k, q)
        if cumulative <= pa:
            a = yk
        if cumulative >= pb:
            b = yk
            break
    return quantile(y, q), (a, b)


class LaplacePosterior:
    """The posterior of a location under Laplace noise, p(b|y) ~ (sum |y_j - b|)^-(nu+1), whose
    CDF is integrated piecewise between the sorted samples (asv_runner's LaplacePosterior)."""

    def __init__(self, samples, nu=None):
        if not samples:
            raise ValueError("empty input")
        self.nu = len(samples) - 1 if nu is None else nu
        ys = sorted(samples)
        self.mle = quantile(ys, 0.5)
        self.scale = sum(abs(v - self.mle) for v in ys) * self.nu ** (1 / (self.nu + 1))
        self.y = [(v - self.mle) / self.scale for v in ys] if self.scale != 0 else [0 for _ in ys]
        self.knots = self.integrate() if self.scale != 0 else []

    def offset(self, k):
        return sum(self.y[k:]) - sum(self.y[:k])

    def integrate(self):
        """knots[k]: the unnormalized CDF up to y[k]; knots[n]: the total."""
        n, nu = len(self.y), self.nu
        knots = []
        cdf = 0
        for k in range(n + 1):
            c = 2 * k - n
            y = self.offset(k)
            a = -math.inf if k == 0 else self.y[k - 1]
            b = math.inf if k == n else self.y[k]
            if c == 0:
                term = (b - a) / y ** (nu + 1)
            else:
                term = 1 / (nu * c) * ((a * c + y) ** (-nu) - (b * c + y) ** (-nu))
            cdf += max(0, term)
            knots.append(cdf)
        return knots

    def ppf_unnormalized(self, cdfx):
        n, nu = len(self.y), self.nu
        for k in range(n + 1):
            if cdfx <= self.knots[k]:
                break
        c = 2 * k - n
        y = self.offset(k)
        if k == 0:
            z = -nu * c * cdfx
            beta = (z ** (-1 / nu) - y) / c if z > 0 else -math.inf
        else:
            a = self.y[k - 1]
            term = cdfx - self.knots[k - 1]
            if c == 0:
                beta = a + term * y ** (nu + 1)
            else:
                z = (a * c + y) ** (-nu) - nu * c * term
                beta = (z ** (-1 / nu) - y) / c if z > 0 else math.inf
        if k < n:
            beta = min(beta, self.y[k])
        return beta

    def ppf(self, p):
        if p < 0 or p > 1.0:
            return math.nan
        if self.scale == 0:
            return self.mle
        norm = self.knots[-1]
        return self.ppf_unnormalized(min(p * norm, norm)) * self.scale + self.mle


def compute_stats(samples, number):
    """The median of the samples and asv's statistics of it (None, None without samples)."""
    if len(samples) < 1:
        return None, None
    ys = list(samples)
    median, (a, b) = quantile_ci(ys, 0.5, alpha_min=0.99)
    if (math.isinf(a) or math.isinf(b)) and len(ys) > 1:
        posterior = LaplacePosterior(ys)
        if math.isinf(a):
            a = min(posterior.ppf(0.01 / 2), min(ys))
        if math.isinf(b):
            b = max(posterior.ppf(1 - 0.01 / 2), max(ys))
    stats = {
        "ci_99_a": a, "ci_99_b": b, "q_25": quantile(ys, 0.25), "q_75": quantile(ys, 0.75),
        "repeat": len(ys), "number": number,
    }
    return median, stats


# ---------------------------------------------------------------- results files (asv's Results, schema 2)

RESULT_COLUMNS = [
    "result", "params", "version", "started_at", "duration", "stats_ci_99_a", "stats_ci_99_b",
    "stats_q_25", "stats_q_75", "stats_number", "stats_repeat", "samples", "profile",
]


def js_timestamp(seconds):
    """Milliseconds since the epoch, rounded half up from microseconds (asv's rule)."""
    micro = int(round(seconds * 1e6))
    value, remainder = divmod(micro, 1000)
    return value + 1 if remainder >= 500 else value


def truncate_floats(item, digits=5):
    if isinstance(item, float):
        return float("{{:.{}e}}".format(digits - 1).format(item))
    if isinstance(item, list):
        return [truncate_floats(x, digits) for x in item]
    return item


def is_na(value):
    return value is None or (isinstance(value, float) and value != value)


def compatible(values, stored_params, params):
    """Values stored for stored_params, re-indexed to the combinations of params (asv's rule)."""
    if values is None:
        return [None for _ in itertools.product(*params)]
    old = dict(zip(itertools.product(*stored_params), values))
    return [old.get(p) for p in itertools.product(*params)]


class Results:
    """One results file: one commit, one environment, every benchmark as a row."""

    def __init__(self, params, requirements, commit_hash, date, python, env_name, env_vars):
        self.header = {
            "commit_hash": commit_hash, "env_name": env_name, "date": date, "params": params,
            "python": python, "requirements": requirements, "env_vars": env_vars,
        }
        self.results, self.samples, self.stats, self.params = {}, {}, {}, {}
        self.started_at, self.duration, self.version, self.profiles = {}, {}, {}, {}

    def load_rows(self, path):
        """Keeps the rows of an existing file (asv's load_data)."""
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
        self.header["env_vars"] = data.get("env_vars", {})
        self.duration.update(data.get("durations", {}))
        simple = {
            "result": self.results, "params": self.params, "version": self.version, "started_at": self.started_at,
            "duration": self.duration, "samples": self.samples, "profile": self.profiles,
        }
        for name, row in data["results"].items():
            for key, value in zip(data["result_columns"], row):
                if key in simple:
                    simple[key][name] = value
                elif key.startswith("stats_") and value is not None:
                    if name not in self.stats:
                        self.stats[name] = [{} for _ in value]
                    for j, v in enumerate(value):
                        if v is not None:
                            self.stats[name][j][key[6:]] = v
            for d in simple.values():
                d.setdefault(name, None)
            self.stats.setdefault(name, None)

    def remove_samples(self, name, selected):
        if name not in self.results:
            return
        if selected is None:
            self.samples[name] = None
        elif self.samples[name] is not None:
            for j in selected:
                self.samples[name][j] = None

    def add_result(self, entry, result, samples, number, started_at, duration, append_samples, selected):
        """asv's add_result with record_samples: merges, recomputes stats, compresses all-None lists."""
        name, version, params = entry["name"], entry["version"], entry["params"]
        new_result, new_samples = list(result), list(samples)
        new_stats = [None] * len(new_result)
        if name in self.results and version == self.version.get(name):
            if append_samples:
                old = compatible(self.samples[name], self.params[name], params)
                for j in range(len(new_samples)):
                    if old[j] is not None and new_samples[j] is not None:
                        new_samples[j] = old[j] + new_samples[j]
            merge = [j for j in range(len(new_result)) if selected is not None and j not in selected]
            if merge:
                old_result = compatible(self.results[name], self.params[name], params)
                old_samples = compatible(self.samples[name], self.params[name], params)
                old_stats = compatible(self.stats[name], self.params[name], params)
                for j in merge:
                    new_result[j], new_samples[j], new_stats[j] = old_result[j], old_samples[j], old_stats[j]
        for j, (r, s, n) in enumerate(zip(new_result, new_samples, number)):
            if is_na(r):
                new_samples[j] = None
                new_stats[j] = None
                continue
            if n is not None:
                new_result[j], new_stats[j] = compute_stats(s, n)
        self.results[name] = None if all(x is None for x in new_result) else new_result
        self.samples[name] = None if all(x is None for x in new_samples) else new_samples
        self.stats[name] = None if all(x is None for x in new_stats) else new_stats
        self.params[name] = params if params else []
        self.started_at[name] = js_timestamp(started_at)
        self.duration[name] = float(duration)
        self.version[name] = version

    def row(self, name):
        simple = {
            "result": self.results, "params": self.params, "version": self.version, "started_at": self.started_at,
            "duration": self.duration, "samples": self.samples, "profile": self.profiles,
        }
        row = []
        for key in RESULT_COLUMNS:
            if key in simple:
                value = simple[key].get(name)
            else:
                stats = self.stats[name]
                value = None if stats is None else [None if x is None else x.get(key[6:]) for x in stats]
            if key != "params" and isinstance(value, list) and all(x is None for x in value):
                value = None
            if key.startswith("stats_") or key == "duration":
                value = truncate_floats(value)
            row.append(value)
        while row and row[-1] is None:
            row.pop()
        return row

    def save(self, path):
        data = dict(self.header)
        data["result_columns"] = RESULT_COLUMNS
        data["results"] = {name: self.row(name) for name in self.results}
        data["durations"] = {k: v for k, v in self.duration.items() if k.startswith("<")}
        data["version"] = 2
        write_file(path, json.dumps(data))


def write_file(path, text):
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


# ---------------------------------------------------------------- machine and environment


def cpu_model():
    try:
        with open("/proc/cpuinfo", "rb") as f:
            for line in f:
                if b":" in line:
                    key, value = line.split(b":", 1)
                    if key.strip() == b"model name":
                        return value.strip().decode("ascii", "replace")
    except OSError:
        pass
    return ""


def memory_size():
    try:
        with open("/proc/meminfo", "rb") as f:
            for line in f:
                if line.startswith(b"MemTotal:"):
                    value = line.split(b":", 1)[1].strip()
                    return str(int(value.split()[0]) * (1024 if value.endswith(b" kB") else 1))
    except (OSError, ValueError):
        pass
    return ""


def machine_info(name):
    """What `asv machine --yes` records (asv's defaults), sorted as asv stores it."""
    uname = platform.uname()
    info = {
        "arch": platform.machine(), "cpu": cpu_model(), "machine": name, "num_cpu": str(os.cpu_count() or 1),
        "os": "{} {}".format(uname.system, uname.release), "ram": memory_size(),
    }
    return {k: info[k] for k in sorted(info)}


def python_executable():
    return os.path.abspath(shutil.which(sys.executable) or sys.executable)


def existing_env_name(executable):
    """asv's name of the existing environment of an interpreter: existing-py_usr_bin_python3."""
    name = "existing-py{}".format(executable.replace(os.path.sep, "_"))
    return re.sub('[<>:"/\\\\^|?*\x00-\x1f]', "_", name)


def git(repo, *args):
    out = subprocess.run(["git", "-C", repo] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if out.returncode != 0:
        return None
    return out.stdout.decode("utf-8", "replace").strip()


def commit_hash_and_date(repo, sha):
    """The full hash and the author date (JS ms) of the commit, as asv records them; the given sha
    and null when the repository does not know it."""
    full = git(repo, "rev-parse", "--verify", "--quiet", sha + "^{commit}")
    if not full:
        say("warning: commit {} not found in {}; recording it as given, with no date".format(sha, repo))
        return sha, None
    out = git(repo, "rev-list", "-n", "1", "--format=%at", full)
    try:
        return full, int(out.split()[-1]) * 1000
    except (AttributeError, ValueError, IndexError):
        return full, None


# ---------------------------------------------------------------- asv's -a


def parse_repeat(value):
    try:
        return int(value)
    except ValueError:
        pass
    parts = value.strip().lstrip("(").rstrip(")").split(",")
    if len(parts) != 3:
        raise ValueError("expected N or (min_repeat, max_repeat, max_time)")
    return (int(parts[0]), int(parts[1]), float(parts[2]))


OVERRIDE_CONVERTERS = {
    "timeout": ("timeout", float), "version": ("version", str), "warmup_time": ("warmup_time", float),
    "repeat": ("repeat", parse_repeat), "number": ("number", int), "rounds": ("rounds", int),
    "processes": ("rounds", int), "sample_time": ("sample_time", float), "min_run_count": ("min_run_count", int),
}


def parse_overrides(items):
    out = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or key not in OVERRIDE_CONVERTERS:
            raise UsageError(
                "-a expects key=value with key one of {} (got {!r})".format(", ".join(sorted(OVERRIDE_CONVERTERS)), item)
            )
        target, convert = OVERRIDE_CONVERTERS[key]
        try:
            out[target] = convert(value)
        except ValueError as exc:
            raise UsageError("-a {}: {}".format(item, exc))
    return out


# ---------------------------------------------------------------- child processes of `run`

TIMED_OUT = "timeout"


def spawn(args, cwd, timeout):
    """Runs this program's internal command in a fresh process (its own process group, stdout to
    our stderr); its exit code, or TIMED_OUT after killing its process group."""
    proc = subprocess.Popen(
        [sys.executable, HARNESS_PATH] + args, cwd=cwd, stdin=subprocess.DEVNULL,
        stdout=sys.stderr.fileno(), start_new_session=True,
    )
    try:
        return proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_group(proc.pid)
        proc.wait()
        return TIMED_OUT
    except BaseException:
        kill_group(proc.pid)
        proc.wait()
        raise


def kill_group(pgid, wait=2.0):
    """SIGKILLs a process group and waits (at most `wait` seconds) until none of its processes is
    alive, so that "killed" means gone when the caller goes on (zombies count as gone)."""
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        return
    deadline = wall_timer() + wait
    while group_alive(pgid) and wall_timer() < deadline:
        time.sleep(0.002)


def group_alive(pgid):
    """Whether a process of the group is alive (not a zombie), from /proc (False where there is none)."""
    try:
        pids = [p for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        return False
    for pid in pids:
        try:
            with open("/proc/{}/stat".format(pid)) as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2:].split()
        if len(fields) > 2 and fields[0] not in ("Z", "X") and fields[2] == str(pgid):
            return True
    return False


def run_one_in_child(benchmark_dir, name, idx, overrides, cwd, timeout):
    """(result, stderr note): the result asv's child writes, or None when it failed."""
    fd, result_file = tempfile.mkstemp(prefix="perfmine-result-", suffix=".json")
    os.close(fd)
    try:
        code = spawn(["_run-one", benchmark_dir, name, str(idx), json.dumps(overrides), result_file], cwd, timeout)
        if code == TIMED_OUT:
            return None, "benchmark timed out (timeout {}s)".format(timeout)
        if code != 0:
            return None, "benchmark failed (exit status {})".format(code)
        with open(result_file) as f:
            try:
                return json.load(f), None
            except ValueError as exc:
                return None, "failed to parse benchmark result: {}".format(exc)
    finally:
        os.unlink(result_file)


def create_setup_cache(benchmark_dir, name, timeout):
    """A directory holding cache.pickle made by setup_cache in a fresh process, or None."""
    cache_dir = tempfile.mkdtemp(prefix="perfmine-setup-cache-")
    code = spawn(["_setup-cache", benchmark_dir, name], cache_dir, timeout)
    if code == 0:
        return cache_dir
    shutil.rmtree(cache_dir, ignore_errors=True)
    return None


# ---------------------------------------------------------------- run (asv's run_benchmarks)


def run_params(entry, idx):
    if entry["params"]:
        return list(itertools.product(*entry["params"]))[idx]
    return ()


def benchmark_rounds(entry, overrides):
    if "rounds" in overrides:
        return int(overrides["rounds"])
    return int(entry.get("rounds", 1))


def run_benchmark_once(conf, entry, selected, overrides_per_param, cwd, timeout):
    """One round of one benchmark, each selected parameter combination in its own process:
    per combination (result, samples, number); failures None, unselected NaN."""
    result, samples, number = [], [], []
    failed = False
    n = len(list(itertools.product(*entry["params"]))) if entry["params"] else 1
    for idx in range(n):
        if selected is not None and idx not in selected:
            result.append(math.nan)
            samples.append(None)
            number.append(None)
            continue
        run_dir = cwd or tempfile.mkdtemp(prefix="perfmine-run-")
        try:
            data, note = run_one_in_child(conf.benchmark_dir, entry["name"], idx, overrides_per_param[idx], run_dir, timeout)
        finally:
            if cwd is None:
                shutil.rmtree(run_dir, ignore_errors=True)
        if note:
            failed = True
            where = " for parameters {}".format(", ".join(run_params(entry, idx))) if entry["params"] else ""
            say("{}{}: {}".format(entry["name"], where, note))
        if isinstance(data, dict) and "samples" in data and "number" in data:
            result.append(True)
            samples.append(data["samples"])
            number.append(data["number"])
        else:
            result.append(data)
            samples.append(None)
            number.append(None)
    return result, samples, number, failed


def run_suite(conf, entries, chosen, overrides, results):
    """asv's run_benchmarks for one environment: rounds from the last to the first, benchmarks
    sorted and grouped by setup_cache key. Returns True when some benchmark failed."""
    order, timeouts, cache_timeout, users = {}, {}, {}, {}
    for name in sorted(chosen):
        entry = entries[name]
        timeouts[name] = entry["timeout"] if entry.get("timeout") is not None else overrides.get("timeout", conf.default_timeout)
        key = entry.get("setup_cache_key")
        cache_timeout[key] = max(entry.get("setup_cache_timeout", timeouts[name]), cache_timeout.get(key, 0))
        order.setdefault(key, []).append(name)
        users.setdefault(key, set()).add(name)
    max_rounds = max(benchmark_rounds(entries[n], overrides) for n in chosen)
    cache_dirs, failed_caches, failed, previous, durations = {}, {}, set(), set(), {}
    any_failure = False
    total = sum(benchmark_rounds(entries[n], overrides) for n in chosen)
    done = 0
    try:
        for run_round in range(max_rounds, 0, -1):
            for key, names in order.items():
                for name in names:
                    entry = entries[name]
                    if run_round > benchmark_rounds(entry, overrides):
                        if run_round == max_rounds and results.version.get(name) == entry["version"]:
                            results.remove_samples(name, chosen[name])
                        continue
                    done += 1
                    if name in failed:
                        continue
                    started = time.time()
                    if key is not None and key not in cache_dirs and key not in failed_caches:
                        cache_dir = create_setup_cache(conf.benchmark_dir, name, cache_timeout[key])
                        if cache_dir is None:
                            failed_caches[key] = True
                        else:
                            cache_dirs[key] = cache_dir
                        results.duration["<setup_cache {}>".format(key)] = time.time() - started
                        started = time.time()
                    n = len(list(itertools.product(*entry["params"]))) if entry["params"] else 1
                    if key in failed_caches:
                        say("{}: skipped (setup_cache failed)".format(name))
                        results.add_result(entry, [None] * n, [None] * n, [None] * n, started, 0.0, False, chosen[name])
                        failed.add(name)
                        any_failure = True
                        continue
                    per_param = []
                    for j in range(n):
                        p = dict(overrides)
                        if name in previous and results.stats.get(name) and results.stats[name][j] and "number" in results.stats[name][j]:
                            p["number"] = results.stats[name][j]["number"]
                        per_param.append(p)
                    selected = chosen[name] if entry["params"] else None
                    outcome = run_benchmark_once(conf, entry, selected, per_param, cache_dirs.get(key), timeouts[name])
                    result, samples, number, bad = outcome
                    any_failure = any_failure or bad
                    durations[name] = durations.get(name, 0.0) + (time.time() - started)
                    results.add_result(entry, result, samples, number, started, durations[name], name in previous, selected)
                    previous.add(name)
                    if all(r is None for r in result):
                        failed.add(name)
                    status = "failed" if results.results.get(name) is None else ("ok" if not bad else "partly failed")
                    print("[{:6.2f}%] ··· {} (round {}) {}".format(100.0 * done / total, name, run_round, status), flush=True)
                    if key is not None and run_round == 1:
                        users[key].discard(name)
                        if not users[key] and key in cache_dirs:
                            shutil.rmtree(cache_dirs.pop(key), ignore_errors=True)
    finally:
        for path in cache_dirs.values():
            shutil.rmtree(path, ignore_errors=True)
    return any_failure


def cmd_run(conf, args):
    check_regexes(args.bench)
    overrides = parse_overrides(args.attribute)
    benches = import_suite_quietly(conf.benchmark_dir)
    entries = {name: b.entry() for name, b in benches.items()}
    write_file(os.path.join(args.out_dir, "benchmarks.json"), json.dumps(benchmarks_json(benches), indent=4, sort_keys=True))
    machine = args.machine or platform.node()
    info = machine_info(machine)
    write_file(os.path.join(args.out_dir, machine, "machine.json"), json.dumps(dict(info, version=1), indent=4, sort_keys=True))
    chosen = selection(benches, args.bench)
    if not chosen:
        say("no benchmarks found in {}{}".format(conf.benchmark_dir, " matching --bench " + " ".join(args.bench) if args.bench else ""))
        return EXIT_NO_BENCHMARKS
    started = time.time()  # an existing environment: nothing to build, asv records the no-op
    executable = python_executable()
    env_name = args.env_name or existing_env_name(executable)
    build_duration = time.time() - started
    commit, date = commit_hash_and_date(conf.repo, args.commit)
    requirements = conf.requirements()
    params = dict(info)
    params["python"] = executable
    params.update(requirements)
    results = Results(params, requirements, commit, date, executable, env_name, {})
    path = os.path.join(args.out_dir, machine, "{}-{}.json".format(commit[:8], env_name))
    if os.path.isfile(path):
        results.load_rows(path)
    results.duration["<build>"] = build_duration
    failure = run_suite(conf, entries, chosen, overrides, results)
    results.save(path)
    say("wrote {}".format(path))
    return 2 if failure else 0


# ---------------------------------------------------------------- importing with stdout kept clean


class StdoutToStderr:
    """Redirects fd 1 (and sys.stdout) to fd 2 for the duration, at the OS level."""

    def __enter__(self):
        sys.stdout.flush()
        self.saved = os.dup(1)
        os.dup2(2, 1)
        return self

    def __exit__(self, *exc):
        sys.stdout.flush()
        os.dup2(self.saved, 1)
        os.close(self.saved)
        return False


def import_suite_quietly(benchmark_dir):
    """Discovery as asv runs it: in a fresh temporary directory, stdout kept for our own output."""
    here = os.getcwd()
    scratch = tempfile.mkdtemp(prefix="perfmine-discover-")
    try:
        with StdoutToStderr():
            os.chdir(scratch)
            try:
                return discover(benchmark_dir)
            finally:
                os.chdir(here)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def cmd_discover(conf, args):
    check_regexes(args.bench)
    benches = import_suite_quietly(conf.benchmark_dir)
    chosen = selection(benches, args.bench)
    if not chosen:
        what = "matching --bench {}".format(" ".join(args.bench)) if args.bench else "(no time_/timeraw_/mem_/peakmem_/track_ functions or methods)"
        say("no benchmarks found in {} {}".format(conf.benchmark_dir, what))
        return EXIT_NO_BENCHMARKS
    names = [n for n in benches if n in chosen]
    text = json.dumps(benchmarks_json(benches, names), indent=4, sort_keys=True) + "\n"
    if args.out:
        write_file(args.out, text)
    else:
        sys.stdout.write(text)
        sys.stdout.flush()
    return EXIT_OK


# ---------------------------------------------------------------- protocol lines


def finite(obj):
    """The object with every NaN / Infinity replaced by None (protocol lines never carry them)."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [finite(v) for v in obj]
    return obj


def protocol_line(obj):
    return (json.dumps(finite(obj), allow_nan=False, separators=(",", ":")) + "\n").encode("utf-8")


def write_all(fd, data):
    while data:
        n = os.write(fd, data)
        data = data[n:]


# ---------------------------------------------------------------- the worker (child of serve)


class Failure(Exception):
    """A batch that ends with a status other than ok."""

    def __init__(self, status, message):
        Exception.__init__(self, message)
        self.status = status
        self.message = message


def set_parent_death_signal():
    """Linux: the worker is killed when the supervisor dies, whatever kills the supervisor."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def real_number(value):
    import numbers

    return isinstance(value, numbers.Real) and not isinstance(value, bool)


class WorkerState:
    def __init__(self, conf, benches, chosen, root):
        self.conf = conf
        self.benches = benches
        self.chosen = chosen
        self.root = root
        self.caches = {}  # setup_cache key -> (pickled result, directory)
        self.cache_failures = {}
        # the current batch's account: seconds of setup (setup_cache, the instance and its
        # setups, teardowns), of warm-up and of the samples (see new_account)
        self.account = new_account()

    def batch(self, cmd):
        self.account = new_account()
        spec = self.benches[cmd["benchmark"]]
        cached, cache_dir = self.setup_cache_for(spec)
        run_dir = cache_dir or self.empty_run_dir()
        os.chdir(run_dir)
        try:
            if spec.kind == "peakmemory":
                return self.peakmem(spec, cmd["param"], run_dir)
            return self.in_process(spec, cmd, cached)
        finally:
            sys.stdout.flush()
            os.chdir(self.root)

    def empty_run_dir(self):
        """The working directory of a batch without setup_cache: empty, as asv's fresh temporary
        directory is (one directory, emptied only when a benchmark left something: rmdir is slow)."""
        path = os.path.join(self.root, "run")
        if os.path.isdir(path) and not os.listdir(path):
            return path
        shutil.rmtree(path, ignore_errors=True)
        if os.path.lexists(path):  # a benchmark made it unremovable: take a new one
            return tempfile.mkdtemp(prefix="run-", dir=self.root)
        os.mkdir(path)
        return path

    def setup_cache_for(self, spec):
        key = spec.setup_cache_key
        if key is None:
            return None, None
        if key in self.cache_failures:
            raise Failure("failed", self.cache_failures[key])
        if key not in self.caches:
            directory = tempfile.mkdtemp(prefix="setup_cache-", dir=self.root)
            os.chdir(directory)
            started = account_clock()
            try:
                data = pickle.dumps(fresh_copy(spec).do_setup_cache())
                with open("cache.pickle", "wb") as f:
                    f.write(data)
            except BaseException as exc:  # noqa: B036 - the benchmark's own code may raise anything
                if isinstance(exc, KeyboardInterrupt):
                    raise
                self.cache_failures[key] = "setup_cache {} failed: {}".format(key, exception_summary(exc))
                raise Failure("failed", self.cache_failures[key])
            finally:
                self.account["setup"] += account_clock() - started
                os.chdir(self.root)
            self.caches[key] = (data, directory)
        return self.caches[key]

    @staticmethod
    def set_up(spec, cmd, cached):
        """A fresh instance of the benchmark at the command's parameter, with its setup_cache
        value, set up (a skip raises Failure)."""
        bench = fresh_copy(spec)
        if bench.params:
            bench.set_param_idx(cmd["param"])
        bench.cache = pickle.loads(cached) if cached is not None else None
        reason = bench.do_setup()
        if reason:
            raise Failure("skipped", reason)
        return bench

    def in_process(self, spec, cmd, cached):
        started = account_clock()
        try:
            bench = self.set_up(spec, cmd, cached)
        finally:
            self.account["setup"] += account_clock() - started
        bench.setup_seconds = 0.0  # counted above; from here on, the setups redone between samples and the teardown
        try:
            if bench.kind in TIMED_KINDS:
                return self.timed(bench, cmd)
            started = account_clock()
            try:
                value = bench.func(*bench.call_args())
            finally:
                self.account["samples"] += account_clock() - started
            if bench.kind == "memory":
                return {"ok": True, "kind": "memory", "value": mem_value(value)}
            return {"ok": True, "kind": "track", "value": checked_value(spec, value)}
        except NotImplementedError as exc:
            if is_skip_not_implemented(exc):
                raise Failure("skipped", "SkipNotImplemented: {}".format(exc) if str(exc) else "SkipNotImplemented")
            raise
        finally:
            try:
                bench.do_teardown()
            finally:
                self.account["setup"] += bench.setup_seconds

    def timed(self, bench, cmd):
        count = cmd["samples"]
        number = cmd["number"] or bench.number
        warmup = default_warmup(bench.warmup_time if cmd["warmup"] is None else cmd["warmup"])
        sample_time = bench.sample_time if cmd["sample_time"] is None else cmd["sample_time"]
        clock = CLOCKS[cmd.get("clock") or "wall"]
        keep = [None] if cmd.get("values") and bench.kind == "time" else None
        timer = bench.timer_for(clock, keep)
        # the account: the warm-up (with number's calibration) up to the first sample, then the
        # samples, each without the setups redone between them (bench.setup_seconds counts those)
        marks = [(account_clock(), bench.setup_seconds)]
        try:
            samples, number = benchmark_timing(
                bench, timer, count, count, math.inf, warmup, number, bench.min_run_count, sample_time,
                cmd.get("warmup_calls") if number else None, marks,
            )
        finally:
            marks.append((account_clock(), bench.setup_seconds))
            # marks: the start, the first sample's (when the warm-up ended), the end
            self.account["warmup"] += split_seconds(marks[0], marks[1])
            if len(marks) > 2:
                self.account["samples"] += split_seconds(marks[1], marks[2])
        per_call = [s / number for s in samples]
        if not all(math.isfinite(s) for s in per_call):
            raise Failure("failed", "the timer gave a non-finite time: {!r}".format(samples))
        answer = {"ok": True, "kind": "time", "samples": per_call, "number": number}
        if keep is not None:
            answer["value"] = timed_value(keep[0])
        return answer

    def peakmem(self, spec, idx, run_dir):
        """asv's peakmem: the peak RSS of a fresh process importing the benchmark, running setup
        and the benchmark (cache.pickle is in run_dir when there is a setup_cache). The account
        counts that process whole as the sample (its setup runs out of sight)."""
        fd, result_file = tempfile.mkstemp(prefix="peakmem-", suffix=".json", dir=self.root)
        os.close(fd)
        started = account_clock()
        try:
            args = [sys.executable, HARNESS_PATH, "_run-one", self.conf.benchmark_dir, spec.name, str(idx), "{}", result_file]
            proc = subprocess.Popen(args, cwd=run_dir, stdin=subprocess.DEVNULL, stdout=2, stderr=subprocess.PIPE)
            err = proc.communicate()[1].decode("utf-8", "replace")
            sys.stderr.write(err)
            if proc.returncode != 0:
                tail = "\n".join(err.rstrip("\n").split("\n")[-12:])
                raise Failure("failed", "the peakmem process {}:\n{}".format(describe_exit(proc.returncode), tail))
            with open(result_file) as f:
                value = json.load(f)
        finally:
            self.account["samples"] += account_clock() - started
            os.unlink(result_file)
        if is_na(value):
            raise Failure("skipped", "skipped in the peakmem process (NotImplementedError in setup, or SkipNotImplemented)")
        return {"ok": True, "kind": "peakmemory", "value": value}

    def fingerprint(self, cmd):
        """The code a workload runs: setup as for a batch, then one call of the benchmark with every
        Python function call recorded (sys.monitoring's PY_START where the interpreter has it,
        sys.settrace's call events otherwise), then teardown. Answers the executed code objects
        as [file, first line, last line]; a timeraw benchmark's code runs in another interpreter,
        out of sight: opaque."""
        self.account = new_account()
        spec = self.benches[cmd["benchmark"]]
        if spec.kind == "timeraw":
            return {"ok": True, "kind": "fingerprint", "code": [], "opaque": True}
        cached, cache_dir = self.setup_cache_for(spec)
        os.chdir(cache_dir or self.empty_run_dir())
        try:
            bench = self.set_up(spec, cmd, cached)
            try:
                codes = traced_codes(lambda: bench.func(*bench.call_args()))
            except NotImplementedError as exc:
                if is_skip_not_implemented(exc):
                    raise Failure("skipped", "SkipNotImplemented")
                raise
            finally:
                bench.do_teardown()
        finally:
            sys.stdout.flush()
            os.chdir(self.root)
        return {"ok": True, "kind": "fingerprint", "code": sorted(code_span(c) for c in codes)}


def new_account():
    """A batch's account, in seconds: setup (setup_cache when this batch runs it, the benchmark's
    fresh instance with its setup_cache value, its setups and teardowns, those redone between
    samples included), warmup (the warm-up before the first sample, number's calibration
    included) and samples (the timed samples, their timeit loops included, and a timeraw
    sample's fresh interpreter; a mem, track or peakmem benchmark's one call or process). What
    the worker does besides (its working directory, the answer) is not counted: the driver's
    wall time minus these is the overhead."""
    return {"setup": 0.0, "warmup": 0.0, "samples": 0.0}


def split_seconds(start, end):
    """The seconds between two (account_clock(), setup_seconds) marks, less the setup between them."""
    return max(0.0, (end[0] - start[0]) - (end[1] - start[1]))


def traced_codes(call):
    """The code objects of every Python function run by call() (its own included)."""
    codes = set()
    monitoring = getattr(sys, "monitoring", None)
    if monitoring is not None:
        tool = monitoring.PROFILER_ID
        try:
            monitoring.use_tool_id(tool, "perfmine-fingerprint")
        except ValueError:
            monitoring = None
    if monitoring is not None:
        def started(code, offset):
            codes.add(code)
            return monitoring.DISABLE

        monitoring.register_callback(tool, monitoring.events.PY_START, started)
        # DISABLE turns a code object's event off until restart_events(), whatever the tool id's
        # life: without this, a worker's second fingerprint misses every function its first ran
        monitoring.restart_events()
        monitoring.set_events(tool, monitoring.events.PY_START)
        try:
            call()
        finally:
            monitoring.set_events(tool, 0)
            monitoring.register_callback(tool, monitoring.events.PY_START, None)
            monitoring.free_tool_id(tool)
            monitoring.restart_events()
        return codes

    def tracer(frame, event, arg):
        if event == "call":
            codes.add(frame.f_code)
        return None

    previous = sys.gettrace()
    sys.settrace(tracer)
    try:
        call()
    finally:
        sys.settrace(previous)
    return codes


def code_span(code):
    """[real path of the file, first line, last line] of a code object."""
    import dis

    lines = [line for _, line in dis.findlinestarts(code) if line is not None]
    last = max(lines) if lines else code.co_firstlineno
    return [os.path.realpath(code.co_filename), code.co_firstlineno, max(last, code.co_firstlineno)]


def outline(paths):
    """The def and class statements of Python files: {path: [[kind, qualified name, first line,
    last line], ...]} (first line: the first decorator's), or null for a file that cannot be
    read or parsed."""
    import ast

    out = {}
    for path in paths:
        try:
            with open(path, "rb") as f:
                tree = ast.parse(f.read(), filename=path)
        except (OSError, SyntaxError, ValueError):
            out[path] = None
            continue
        spans = []

        def visit(node, prefix):
            for child in ast.iter_child_nodes(node):
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    first = min([child.lineno] + [d.lineno for d in child.decorator_list])
                    name = prefix + child.name
                    kind = "class" if isinstance(child, ast.ClassDef) else "def"
                    spans.append([kind, name, first, getattr(child, "end_lineno", None) or child.lineno])
                    visit(child, name + ".")
                else:
                    visit(child, prefix)

        visit(tree, "")
        out[path] = spans
    return out


def timed_value(value):
    """The hash of a timed call's return value as the verifier's probe encodes it (perfmine_probe.py
    beside this file), or None where it cannot be encoded (or the probe is not here)."""
    try:
        from perfmine_probe import Unencodable, encode, value_hash
    except ImportError:
        return None
    try:
        return value_hash(encode(value))
    except (Unencodable, RecursionError, MemoryError):
        return None
    except Exception:  # noqa: BLE001 - a value's own repr may raise anything
        return None


def checked_value(spec, value):
    if value is None:
        raise Failure("failed", "{} returned None".format(spec.attr_name))
    if not real_number(value):
        raise Failure("failed", "{} returned {!r}, not a number".format(spec.attr_name, value))
    if not math.isfinite(float(value)):
        raise Failure("not-a-number", "{} returned {}".format(spec.attr_name, float(value)))
    return value


def describe_exit(code):
    if code < 0:
        try:
            return "died of {}".format(signal.Signals(-code).name)
        except ValueError:
            return "died of signal {}".format(-code)
    return "exited with status {}".format(code)


def loaded_module_files():
    """The real paths of the files of every module the worker has loaded (the suite, and all it imports)."""
    files = set()
    for module in list(sys.modules.values()):
        path = getattr(module, "__file__", None)
        if isinstance(path, str):
            files.add(os.path.realpath(path))
    return sorted(files)


def worker_answer(state, cmd):
    try:
        op = cmd.get("op")
        if op == "modules":
            answer = {"ok": True, "kind": "modules", "files": loaded_module_files()}
        else:
            answer = state.fingerprint(cmd) if op == "fingerprint" else state.batch(cmd)
    except Failure as f:
        answer = {"ok": False, "status": f.status, "message": f.message}
    except BaseException as exc:  # noqa: B036 - SystemExit from a benchmark is a failure too
        if isinstance(exc, KeyboardInterrupt):
            raise
        answer = {"ok": False, "status": "failed", "message": exception_summary(exc)}
    if cmd.get("op") == "batch":
        answer["account"] = dict(state.account)
    answer["id"] = cmd.get("id")
    return answer


def worker_main(argv):
    """_worker CONFIG COMMAND_FD ANSWER_FD ROOT MODULES [REGEX...]: imports the suite (MODULES "-"),
    or only the modules of a JSON list, then one answer per command."""
    set_parent_death_signal()
    import faulthandler

    faulthandler.enable()
    config, cmd_fd, ans_fd, root, only = argv[:5]
    regexes = argv[5:]
    only = None if only == "-" else json.loads(only)
    ans_fd = int(ans_fd)
    commands = os.fdopen(int(cmd_fd), "rb")
    os.chdir(root)
    started = account_clock()
    seconds = {}
    try:
        conf = load_config(config)
        benches = discover(conf.benchmark_dir, seconds) if only is None else discover_in(conf.benchmark_dir, only, seconds)
    except UsageError as exc:
        write_all(ans_fd, protocol_line({"event": "fatal", "reason": "bad-config", "message": str(exc)}))
        return EXIT_SUITE
    except SuiteError as exc:
        write_all(ans_fd, protocol_line({"event": "fatal", "reason": "suite-not-importable", "message": str(exc)}))
        return EXIT_SUITE
    finally:
        sys.stdout.flush()
        os.chdir(root)
    chosen = selection(benches, regexes)
    if not chosen:
        message = "no benchmarks found in {}{}".format(conf.benchmark_dir, " matching --bench " + " ".join(regexes) if regexes else "")
        write_all(ans_fd, protocol_line({"event": "fatal", "reason": "no-benchmarks", "message": message}))
        return EXIT_SUITE
    names = [n for n in sorted(benches) if n in chosen]
    ready = {
        "event": "ready", "protocol": PROTOCOL_VERSION, "python": platform.python_version(), "pid": os.getpid(),
        "import_seconds": account_clock() - started,
        "benchmarks": {n: benches[n].entry() for n in names}, "workloads": workloads_of(benches, chosen),
        "module_of": {n: benches[n].module.__name__ for n in names},
        "module_import_seconds": seconds,
    }
    write_all(ans_fd, protocol_line(ready))
    state = WorkerState(conf, benches, chosen, root)
    for line in commands:
        cmd = json.loads(line.decode("utf-8"))
        write_all(ans_fd, protocol_line(worker_answer(state, cmd)))
    return EXIT_OK


# ---------------------------------------------------------------- the supervisor (serve)


class WorkerDied(Exception):
    pass


class WorkerTimedOut(Exception):
    pass


class Worker:
    """The worker process seen from the supervisor: two pipes and a process group."""

    def __init__(self, config_path, regexes, root, modules=None):
        cmd_r, cmd_w = os.pipe()
        ans_r, ans_w = os.pipe()
        only = "-" if modules is None else json.dumps(sorted(modules))
        self.proc = subprocess.Popen(
            [sys.executable, HARNESS_PATH, "_worker", config_path, str(cmd_r), str(ans_w), root, only] + list(regexes),
            pass_fds=(cmd_r, ans_w), stdin=subprocess.DEVNULL, stdout=2, start_new_session=True,
        )
        os.close(cmd_r)
        os.close(ans_w)
        self.root = root
        self.cmd_w = cmd_w
        self.ans_r = ans_r
        self.buffer = b""
        self.cached_keys = set()
        self.ready = None

    def read_line(self, deadline):
        while b"\n" not in self.buffer:
            wait = None if deadline is None else max(0.0, deadline - wall_timer())
            readable, _, _ = select.select([self.ans_r], [], [], wait)
            if not readable:
                raise WorkerTimedOut()
            chunk = os.read(self.ans_r, 65536)
            if not chunk:
                raise WorkerDied(self.death())
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        return json.loads(line.decode("utf-8"))

    def send(self, obj):
        try:
            write_all(self.cmd_w, protocol_line(obj))
        except OSError as exc:
            if exc.errno != errno.EPIPE:
                raise
            raise WorkerDied(self.death())

    def death(self):
        """How the worker ended (it closed its answer pipe: it is exiting or has exited)."""
        try:
            code = self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.kill()
            return "the worker closed its pipe and was killed"
        kill_group(self.proc.pid)
        return "the worker " + describe_exit(code)

    def kill(self):
        kill_group(self.proc.pid)
        self.proc.wait()
        kill_group(self.proc.pid)

    def close(self):
        for fd in (self.cmd_w, self.ans_r):
            try:
                os.close(fd)
            except OSError:
                pass
        try:
            self.proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            pass
        self.kill()
        shutil.rmtree(self.root, ignore_errors=True)


def emit(obj):
    write_all(1, protocol_line(obj))


class Supervisor:
    def __init__(self, conf, regexes, import_timeout):
        self.conf = conf
        self.regexes = regexes
        self.import_timeout = import_timeout
        self.root = tempfile.mkdtemp(prefix="perfmine-harness-")
        self.worker = None
        self.benchmarks = {}
        self.params = {}
        self.module_of = {}
        # the benchmarks a restart named (its workers import only their modules); None: the whole suite
        self.only = None

    def start_worker(self):
        modules = None if self.only is None else {self.module_of[name] for name in self.only}
        self.worker = Worker(self.conf.path, self.regexes, tempfile.mkdtemp(prefix="worker-", dir=self.root), modules)

    def await_ready(self):
        """The worker's first line: ready, or a fatal event (a dict with "event")."""
        worker = self.worker
        deadline = None if self.import_timeout is None else wall_timer() + self.import_timeout
        try:
            msg = worker.read_line(deadline)
        except WorkerDied as exc:
            msg = {"event": "fatal", "reason": "suite-not-importable", "message": "{} while importing the suite".format(exc)}
        except WorkerTimedOut:
            worker.kill()
            msg = {"event": "fatal", "reason": "suite-not-importable",
                   "message": "importing the suite took longer than {:g} s".format(self.import_timeout)}
        if msg.get("event") == "ready":
            if self.only is None:
                self.module_of = msg.get("module_of", {})
            worker.ready = msg
        return msg

    def start(self):
        self.start_worker()
        msg = self.await_ready()
        if msg.get("event") != "ready":
            emit(msg)
            return False
        self.benchmarks = msg["benchmarks"]
        self.params = {}
        for w in msg["workloads"]:
            self.params.setdefault(w["benchmark"], set()).add(w["param"])
        msg = dict(msg, pid=os.getpid(), worker_pid=msg["pid"])
        emit(msg)
        return True

    def timeout_for(self, name, given):
        entry = self.benchmarks[name]
        timeout = given if given is not None else entry.get("timeout")
        if timeout is None:
            timeout = self.conf.default_timeout
        key = entry.get("setup_cache_key")
        if key is not None and key not in self.worker.cached_keys:
            users = [e for e in self.benchmarks.values() if e.get("setup_cache_key") == key]
            timeout += max(
                e.get("setup_cache_timeout", e.get("timeout") if e.get("timeout") is not None else self.conf.default_timeout)
                for e in users
            )
        return float(timeout)

    def ensure_worker(self):
        if self.worker is not None and self.worker.ready is not None:
            return None
        if self.worker is None:
            self.start_worker()
        msg = self.await_ready()
        if msg.get("event") != "ready":
            self.worker.close()
            self.worker = None
            return "the worker could not be restarted: " + msg.get("message", "")
        return None

    def ask_worker(self, cmd, timeout=60.0):
        """A command the worker answers at once (no benchmark runs): its answer, or crashed."""
        problem = self.ensure_worker()
        if problem:
            return {"ok": False, "status": "crashed", "message": problem}
        try:
            self.worker.send(cmd)
            return self.worker.read_line(wall_timer() + timeout)
        except (WorkerTimedOut, WorkerDied) as exc:
            self.worker.kill()
            self.worker.close()
            self.start_worker()
            return {"ok": False, "status": "crashed", "message": str(exc) or "the worker did not answer"}

    def batch(self, cmd):
        problem = self.ensure_worker()
        if problem:
            return {"ok": False, "status": "crashed", "message": problem}
        name = cmd["benchmark"]
        timeout = self.timeout_for(name, cmd["timeout"])
        started = wall_timer()
        try:
            self.worker.send(cmd)
            answer = self.worker.read_line(started + timeout)
        except WorkerTimedOut:
            self.worker.kill()
            self.worker.close()
            self.start_worker()
            return {"ok": False, "status": "timeout", "message": "killed after {:g} s".format(timeout)}
        except WorkerDied as exc:
            self.worker.close()
            self.start_worker()
            return {"ok": False, "status": "crashed", "message": str(exc)}
        key = self.benchmarks[name].get("setup_cache_key")
        if key is not None:
            self.worker.cached_keys.add(key)
        if answer.get("ok"):
            answer["elapsed"] = wall_timer() - started
        return answer

    def handle(self, line):
        try:
            cmd = json.loads(line.decode("utf-8"))
        except ValueError as exc:
            return {"id": None, "ok": False, "status": "unknown", "message": "not a JSON line: {}".format(exc)}
        if not isinstance(cmd, dict):
            return {"id": None, "ok": False, "status": "unknown", "message": "a command is a JSON object"}
        ident = cmd.get("id")
        problem = self.invalid(cmd)
        if problem:
            return {"id": ident, "ok": False, "status": "unknown", "message": problem}
        if cmd["op"] == "exit":
            return {"id": ident, "ok": True}
        if cmd["op"] == "restart":
            return dict({"id": ident}, **self.restart(cmd.get("benchmarks")))
        if cmd["op"] == "outline":
            return {"id": ident, "ok": True, "kind": "outline", "files": outline(cmd["files"])}
        if cmd["op"] == "fingerprint":
            answer = self.batch({"id": ident, "op": "fingerprint", "benchmark": cmd["benchmark"], "param": cmd.get("param", 0), "timeout": cmd.get("timeout")})
        elif cmd["op"] == "modules":
            answer = self.ask_worker({"id": ident, "op": "modules"})
        else:
            answer = self.batch(normalized_batch(cmd))
        answer.pop("id", None)
        return dict({"id": ident}, **answer)

    def restart(self, benchmarks=None):
        """A fresh worker process (a new memory layout, the suite imported again; with benchmarks,
        only their modules, and from then on only they are run)."""
        started = wall_timer()
        if self.worker is not None:
            self.worker.close()
            self.worker = None
        if benchmarks is not None:
            self.only = set(benchmarks)
        problem = self.ensure_worker()
        if problem:
            return {"ok": False, "status": "crashed", "message": problem}
        return {"ok": True, "worker_pid": self.worker.ready.get("pid"), "elapsed": wall_timer() - started,
                "import_seconds": self.worker.ready.get("import_seconds")}

    def invalid(self, cmd):
        op = cmd.get("op")
        if op == "exit":
            return None
        if op == "restart":
            names = cmd.get("benchmarks")
            if names is None:
                return None
            if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
                return "restart's benchmarks must be null or a non-empty list of benchmark names"
            unknown = [n for n in names if n not in self.benchmarks or (self.only is not None and n not in self.only)]
            if unknown:
                return "restart names benchmarks this worker does not serve: {}".format(", ".join(sorted(unknown)[:5]))
            return None
        if op == "outline":
            files = cmd.get("files")
            ok = isinstance(files, list) and all(isinstance(f, str) for f in files)
            return None if ok else "outline needs files: a list of paths"
        if op == "modules":
            return None
        if op not in ("batch", "fingerprint"):
            return "unknown op {!r} (known: batch, fingerprint, modules, outline, restart, exit)".format(op)
        name = cmd.get("benchmark")
        if name not in self.benchmarks:
            return "no benchmark {}".format(name)
        if self.only is not None and name not in self.only:
            return "benchmark {} is not served since a restart named the benchmarks to import".format(name)
        param = cmd.get("param", 0)
        if not isinstance(param, int) or isinstance(param, bool) or param not in self.params.get(name, ()):
            return "no benchmark {} / param {!r} out of range".format(name, param)
        samples = cmd.get("samples", 1)
        if not isinstance(samples, int) or isinstance(samples, bool) or samples < 1:
            return "samples must be a positive integer, got {!r}".format(samples)
        number = cmd.get("number") or 0
        if not isinstance(number, int) or isinstance(number, bool) or number < 0:
            return "number must be a non-negative integer (0: as asv chooses), got {!r}".format(number)
        if cmd.get("values") not in (None, True, False):
            return "values must be null or a boolean, got {!r}".format(cmd.get("values"))
        calls = cmd.get("warmup_calls")
        if calls is not None and (not isinstance(calls, int) or isinstance(calls, bool) or calls < 0):
            return "warmup_calls must be null or a non-negative integer, got {!r}".format(calls)
        for key in ("warmup", "sample_time", "timeout"):
            value = cmd.get(key)
            if value is not None and (not real_number(value) or not value >= 0 or not math.isfinite(value)):
                return "{} must be null or a non-negative number of seconds, got {!r}".format(key, value)
        if cmd.get("timeout") == 0:
            return "timeout must be positive"
        if cmd.get("clock") not in (None, "wall", "cpu"):
            return "clock must be null, \"wall\" or \"cpu\", got {!r}".format(cmd.get("clock"))
        return None

    def serve(self, stdin):
        while True:
            line = stdin.readline()
            if not line:
                return EXIT_OK
            if not line.strip():
                continue
            answer = self.handle(line)
            emit(answer)
            if answer.get("ok") and self.is_exit(line):
                return EXIT_OK

    @staticmethod
    def is_exit(line):
        try:
            return json.loads(line.decode("utf-8")).get("op") == "exit"
        except (ValueError, AttributeError):
            return False

    def shutdown(self):
        if self.worker is not None:
            self.worker.close()
            self.worker = None
        shutil.rmtree(self.root, ignore_errors=True)


def normalized_batch(cmd):
    return {
        "id": cmd.get("id"), "op": "batch", "benchmark": cmd["benchmark"], "param": cmd.get("param", 0),
        "samples": cmd.get("samples", 1), "number": cmd.get("number", 0) or 0, "warmup": cmd.get("warmup"),
        "sample_time": cmd.get("sample_time"), "timeout": cmd.get("timeout"), "clock": cmd.get("clock"),
        "warmup_calls": cmd.get("warmup_calls"), "values": cmd.get("values"),
    }


def terminate(signum, frame):
    raise SystemExit(EXIT_OK)


def cmd_serve(args):
    try:
        check_regexes(args.bench)
        conf = load_config(args.config)
    except UsageError as exc:
        emit({"event": "fatal", "reason": "bad-config", "message": str(exc)})
        return EXIT_SUITE
    signal.signal(signal.SIGTERM, terminate)
    signal.signal(signal.SIGINT, terminate)
    supervisor = Supervisor(conf, args.bench, args.import_timeout)
    try:
        if not supervisor.start():
            return EXIT_SUITE
        return supervisor.serve(sys.stdin.buffer)
    except BrokenPipeError:
        return EXIT_OK
    finally:
        supervisor.shutdown()


# ---------------------------------------------------------------- command line

INTERNAL = {"_worker": worker_main, "_run-one": child_run_one, "_setup-cache": child_setup_cache}


def parser():
    import argparse

    p = argparse.ArgumentParser(
        prog="perfmine_harness.py",
        description="Runs an asv benchmark suite with asv's semantics (perfmine's measurement harness).",
    )
    p.add_argument("--config", default=None, help="the asv config file (default asv.conf.json)")
    sub = p.add_subparsers(dest="command")
    d = sub.add_parser("discover", help="write asv's benchmarks.json")
    d.add_argument("--bench", "-b", action="append", default=[], metavar="REGEX")
    d.add_argument("--out", default=None, metavar="FILE")
    r = sub.add_parser("run", help="an asv-compatible run writing a results file")
    r.add_argument("--out-dir", required=True, metavar="DIR")
    r.add_argument("--commit", required=True, metavar="SHA")
    r.add_argument("--machine", default=None)
    r.add_argument("--bench", "-b", action="append", default=[], metavar="REGEX")
    r.add_argument("--attribute", "-a", action="append", default=[], metavar="KEY=VALUE")
    r.add_argument("--env-name", default=None)
    s = sub.add_parser("serve", help="the warm worker: JSON lines on stdin/stdout")
    s.add_argument("--bench", "-b", action="append", default=[], metavar="REGEX")
    s.add_argument("--import-timeout", type=float, default=600.0, metavar="SECONDS")
    return p


def main(argv):
    if argv and argv[0] in INTERNAL:
        return INTERNAL[argv[0]](argv[1:])
    args = parser().parse_args(argv)
    if args.command is None:
        parser().print_usage(sys.stderr)
        return EXIT_USAGE
    if args.command == "serve":
        return cmd_serve(args)
    signal.signal(signal.SIGTERM, terminate)  # so that `run` kills its children's process groups
    try:
        conf = load_config(args.config)
        if args.command == "discover":
            return cmd_discover(conf, args)
        return cmd_run(conf, args)
    except UsageError as exc:
        say("error: {}".format(exc))
        return EXIT_USAGE
    except SuiteError as exc:
        say(str(exc))
        return EXIT_SUITE


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
