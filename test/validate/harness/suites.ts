/** Fixture suites for the harness tests (Python sources as text). */

export const CONFIG = `{
  // asv accepts comments and trailing commas
  "version": 1,
  "project": "fixture",
  "repo": ".",
  "matrix": {"numpy": [], "setuptools": ["59.2.0"],},
}
`;

/** Everything the stand-in asv also understands: functions, classes, params, setup_cache, nesting, track, mem. */
export const PARITY_SUITE: Record<string, string> = {
  'asv.conf.json': CONFIG,
  'benchmarks/__init__.py': '',
  'benchmarks/bench_funcs.py': `
import math


def time_plain():
    sum(range(50))


def time_params(n, word):
    "x".join([word] * n)


time_params.params = ([1, 10, 100], ["a", "bc"])
time_params.param_names = ["n", "word"]


def track_answer():
    return 42


track_answer.unit = "answers"


def time_pretty():
    math.sqrt(2.0)


time_pretty.pretty_name = "square root"
time_pretty.version = "fixed-1"


def helper_not_a_benchmark():
    return 1
`,
  'benchmarks/bench_classes.py': `
class Thing:
    def __init__(self, size):
        self.size = size


class Suite:
    params = [[1, 3], ["x", "yy"], [Thing(2), None]]
    param_names = ["count", "text"]

    def setup(self, count, text, thing):
        self.data = [text] * count

    def teardown(self, count, text, thing):
        del self.data

    def time_join(self, count, text, thing):
        "".join(self.data)

    def mem_data(self, count, text, thing):
        return self.data

    def peakmem_data(self, count, text, thing):
        return list(self.data)

    def track_len(self, count, text, thing):
        return len(self.data)


class Cached:
    timeout = 30

    def setup_cache(self):
        return list(range(100))

    def time_sum(self, data):
        sum(data)

    def track_size(self, data):
        return len(data)
`,
  'benchmarks/nested/__init__.py': '',
  'benchmarks/nested/deeper/__init__.py': '',
  'benchmarks/nested/deeper/bench_deep.py': `
def time_deep():
    pass


class TimeStyle:
    number = 3
    repeat = 4
    rounds = 1
    sample_time = 0.002
    warmup_time = 0

    def time_attrs(self):
        pass

    def TimeUpper(self):
        pass
`,
};

/** Benchmarks only asv (not the stand-in) knows: timeraw, a tuple repeat, duplicate param reprs. */
export const ASV_ONLY_SUITE: Record<string, string> = {
  'asv.conf.json': CONFIG,
  'benchmarks/__init__.py': '',
  'benchmarks/bench_more.py': `
import os

print("module output at import time")
os.write(1, b"C-level output at import time\\n")


def timeraw_import():
    return "import json"


def time_tuple_repeat():
    pass


time_tuple_repeat.repeat = (1, 3, 1.0)


class Obj:
    pass


class Dupes:
    params = [1, 1, Obj(), Obj()]

    def time_x(self, p):
        pass


class Skipping:
    params = [1, 2]

    def setup(self, p):
        if p == 2:
            raise NotImplementedError("two is not supported")

    def time_x(self, p):
        pass
`,
};

/** A suite for `run`: fast timed benchmarks, a failure, a skip, a track. */
export const RUN_SUITE: Record<string, string> = {
  'asv.conf.json': CONFIG,
  'benchmarks/__init__.py': '',
  'benchmarks/bench_run.py': `
def time_sum():
    sum(range(200))


def time_pow(n):
    2 ** n


time_pow.params = [10, 100]


def track_value():
    return 7


def time_broken():
    raise ValueError("broken on purpose")


class Skip:
    def setup(self):
        raise NotImplementedError()

    def time_never(self):
        pass


class Cached:
    def setup_cache(self):
        with open("data.txt", "w") as f:
            f.write("12345")
        return 5

    def track_file_in_cwd(self, n):
        with open("data.txt") as f:
            return len(f.read()) * 10 + n
`,
};

/** A suite of misbehaving benchmarks for `serve`. */
export const BAD_SUITE: Record<string, string> = {
  'asv.conf.json': CONFIG,
  'benchmarks/__init__.py': '',
  'benchmarks/bad.py': `
import ctypes
import os
import subprocess
import sys
import time

_here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(_here, "imports.log"), "a") as _f:
    _f.write("imported in %d\\n" % os.getpid())


def time_ok():
    sum(range(100))


def time_hang():
    while True:
        time.sleep(0.01)


time_hang.timeout = 1.5


def time_segfault():
    ctypes.string_at(0)


def time_exit():
    os._exit(7)


def time_prints():
    print("python-level noise on stdout")
    sys.stdout.flush()
    os.write(1, b"C-level noise on fd 1\\n")


def time_chdir():
    os.chdir("/")


def track_cwd_is_root():
    return 1 if os.getcwd() == "/" else 0


def track_leaves_a_file():
    with open("left-behind.txt", "w") as f:
        f.write("x")
    return len(os.listdir("."))


def track_cwd_entries():
    return len(os.listdir("."))


def track_nan():
    return float("nan")


def track_inf():
    return float("inf")


def track_text():
    return "eleven"


def track_spawns():
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
    return child.pid


class SetupRaises:
    def setup(self):
        raise KeyError("missing")

    def time_x(self):
        pass


class SetupSkips:
    def setup(self):
        raise NotImplementedError("not on this platform")

    def time_x(self):
        pass


class Params:
    params = [1, 2]

    def time_x(self, p):
        pass


class Cached:
    def setup_cache(self):
        with open(os.path.join(_here, "setup_cache.log"), "a") as f:
            f.write("setup_cache\\n")
        return [1, 2, 3]

    def track_len_after_append(self, data):
        data.append(4)
        return len(data)

    def time_sum(self, data):
        sum(data)


def time_sleep_10ms():
    time.sleep(0.01)


time_sleep_10ms.number = 1
`,
};

/** A suite whose import fails. */
export const BROKEN_SUITE: Record<string, string> = {
  'asv.conf.json': CONFIG,
  'benchmarks/__init__.py': '',
  'benchmarks/fine.py': 'def time_fine():\n    pass\n',
  'benchmarks/broken.py': 'import no_such_module_perfmine\n\ndef time_never():\n    pass\n',
};
