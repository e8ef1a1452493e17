#!/usr/bin/env python3
"""perfmine-verify: the verifier of an agent's change to a perfmine task, run as root in the
task's environment after the agent is done (a Harbor task's tests/test.sh runs it; network off).
It trusts only the files it is given (the task's sealed history, build script, perfmine's harness
and this program, under /tests) and the image as built; nothing the agent could have changed.

    perfmine_verify.py --spec verify.json --tests DIR [--repo /repo] [--out /logs/verifier]
                       [--user nobody] [--rounds N]
    perfmine_verify.py _reward < {"workloads": [...], "correct": bool}     (the formula alone)

What it does, in order:
 1. Stops every process that does not run as root (whatever the agent left running), and again
    before each later step (the code under test runs as an unprivileged user, below).
 2. The agent's change: the working tree of --repo (its tracked files and the untracked ones that
    are not ignored; its own .git is never read) as a tree of a fresh copy of the base commit,
    made from the sealed history with the copy's own git directory, run as --user. Changes to the
    benchmarks (the asv config's benchmark_dir), the asv config, the tests (test_*.py, *_test.py,
    conftest.py, anything under a tests/ or test/ directory) and pytest's own config files are
    dropped: both sides run the base commit's. The change is written to OUT/agent.patch. No
    change left: the repository is the base, speedup 1 on every workload, reward 0.
 3. Two sides built from source, each a copy in a venv (`--system-site-packages`) built with the
    task's build script (its /repo rewritten to the copy), as perfmine-bench builds its base: the
    base from the sealed history, as root, in a directory the user cannot write; the working side
    with the agent's change applied, as --user in a directory of its own. A working side that does
    not build is a failure.
 4. Correctness, as validate checks an expert: pytest on both sides (the base's pytest config file
    with --rootdir the side's copy, plugin autoloading off and the plugins the base sees loaded by
    name, validate's time limit and arguments): every test that passes on the base must pass on
    the working side; the benchmarks' return values recorded on the base and compared on the
    working side (perfmine_snapshot.py). A regression or a mismatch is a failure.
 5. The measurement: perfmine-bench's (validate's) interleaved protocol with three warm workers
    (base, working side as --user, base again for calibration), the base commit's suite on both
    sides, the task's protocol (--rounds overrides its rounds), and validate's paired verdict per
    workload. A workload that fails on the working side is a failure.
 6. The reward (see REWARD_FORMULA), written to OUT/reward.json (flat numbers, as Harbor reads
    them) and OUT/reward.txt, with the details in OUT/perfmine-verify.json.

Exit codes: 0 the reward was written (whatever it is); 2 usage; 3 the verifier itself could not
verify (its files, the base side, the measurement of the base): no reward is written, so that the
harness reports an error rather than a score.

What it cannot see: the agent's code runs inside the processes that test and time it (pytest, the
snapshot helper, the harness's worker), as every in-process harness does; code that detects the
harness and lies to it from inside (patching the timer, pytest's reports) is not caught here.

Python 3.8+, standard library only.
"""

import argparse
import json
import math
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH_DIR = os.path.join(HERE, "bench")
for folder in (BENCH_DIR, HERE):
    if os.path.isdir(folder) and folder not in sys.path:
        sys.path.insert(0, folder)

import perfmine_bench as bench  # noqa: E402
import perfmine_bench_stats as stats  # noqa: E402
import perfmine_harness as harness  # noqa: E402

EXIT_OK, EXIT_USAGE, EXIT_VERIFIER = 0, 2, 3
FAILURE_REWARD = -1.0
FLOOR_REWARD = 0.0
REWARD_FORMULA = (
    "reward = -1 when the change fails a check (the working side does not build, a test that passes on the base fails, "
    "a benchmark returns another value or fails); otherwise reward = max(0, ln S_agent / ln S_expert), where S_agent is "
    "the geometric mean over the task's improved workloads (those the expert's patch made faster, by validate's "
    "verdict) of the agent's credited speedup, and S_expert the geometric mean of the expert's speedups validate "
    "measured on them. A credited speedup is the measured one (base time / working time) where the verdict is improved "
    "or worsened, and 1 where the measurement cannot tell it from no change; where less than half of the time the "
    "working side saves per batch, as its worker reports it, is seen from outside the worker (its CPU time by the "
    "kernel's count; the wall clock with the wall-clock protocol), the speedup seen from outside is credited instead, "
    "if lower. 0: no improvement (or slower); 1: as fast as the expert on the task's workloads; above 1: faster than "
    "the expert. advantage = S_agent - S_expert (FormulaCode's advantage over the task's workloads); speedup_all, "
    "expert_speedup_all and advantage_all: the same over every workload measured, each side credited by its own "
    "verdicts."
)
SNAPSHOT = "perfmine_snapshot.py"
PYTEST_CONFIGS = (("pytest.ini", None), (".pytest.ini", None), ("pyproject.toml", "[tool.pytest.ini_options]"),
                  ("tox.ini", "[pytest]"), ("setup.cfg", "[tool:pytest]"))
TEST_PATHSPECS = [":(glob)**/test_*.py", ":(glob)**/*_test.py", ":(glob)**/conftest.py", ":(glob)**/tests/**",
                  ":(glob)**/test/**", ":(glob)pytest.ini", ":(glob).pytest.ini", ":(glob)tox.ini"]
READ_LIMIT = 64 << 20


class VerifyError(Exception):
    """The verifier could not verify (exit 3, no reward)."""


class Failed(Exception):
    """The agent's change fails a check: the failure reward, with the check and why."""

    def __init__(self, check, message, detail=None):
        Exception.__init__(self, message)
        self.check = check
        self.detail = detail


def say(message):
    sys.stderr.write("[perfmine-verify] " + message.rstrip("\n") + "\n")
    sys.stderr.flush()


# ---------------------------------------------------------------- processes and files


def unprivileged_pids():
    mine = os.getpid()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == mine:
            continue
        try:
            with open("/proc/{}/status".format(entry)) as f:
                uid = next((line.split()[1] for line in f if line.startswith("Uid:")), None)
        except OSError:
            continue
        if uid is not None and uid != "0":
            found.append(int(entry))
    return found


def stop_unprivileged():
    """SIGSTOP every process that is not root's until none is left running, then SIGKILL them: what
    the agent (or the code under test) left behind cannot fork its way past it. Returns how many."""
    stopped = set()
    for _ in range(50):
        fresh = [p for p in unprivileged_pids() if p not in stopped]
        if not fresh:
            break
        for pid in fresh:
            try:
                os.kill(pid, signal.SIGSTOP)
            except OSError:
                pass
            stopped.add(pid)
    for pid in sorted(stopped):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    for _ in range(100):  # reaped by init; what is left is a zombie at worst
        alive = [p for p in stopped if os.path.exists("/proc/{}".format(p)) and state_of(p) not in ("Z", "X", None)]
        if not alive:
            break
        time.sleep(0.05)
    return len(stopped)


def state_of(pid):
    try:
        with open("/proc/{}/stat".format(pid)) as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return None


def read_untrusted(path, uid):
    """A file the unprivileged side wrote: a regular file (no link followed) of that user, read up to a limit."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid not in (uid, 0):
            return None
        chunks, size = [], 0
        while size < READ_LIMIT:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks).decode("utf-8", "replace")
    finally:
        os.close(fd)


def write_out(folder, name, text):
    """A file of the verifier's output: whatever stands at that name is removed first; no link is followed."""
    path = os.path.join(folder, name)
    try:
        st = os.lstat(path)
        if stat.S_ISDIR(st.st_mode):
            shutil.rmtree(path)
        else:
            os.unlink(path)
    except FileNotFoundError:
        pass
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)


def check_tests_dir(tests):
    """Every file the verifier reads from the tests directory is root's and writable by nobody else."""
    for folder, dirs, files in os.walk(tests):
        for name in [folder] + [os.path.join(folder, n) for n in dirs + files]:
            st = os.lstat(name)
            if stat.S_ISLNK(st.st_mode):
                raise VerifyError("{} is a symbolic link".format(name))
            if st.st_uid != 0 or st.st_mode & 0o022:
                raise VerifyError("{} is not root's alone (owner {}, mode {:o})".format(name, st.st_uid, st.st_mode & 0o7777))


# ---------------------------------------------------------------- the agent's change


def protected_pathspecs(asv_config, benchmark_dir):
    specs = [":(literal){}".format(asv_config)]
    if benchmark_dir:
        specs.append(":(literal){}".format(benchmark_dir.strip("/")))
    return specs + TEST_PATHSPECS


def changed_paths(patch):
    paths = []
    for line in patch.splitlines():
        m = re.match(r"^diff --git a/(.*) b/(.*)$", line)
        if m:
            paths.append(m.group(2))
    return paths


def agent_change(working, repo, commit, protected):
    """(patch after the protected paths were dropped, every path the agent changed, the dropped ones)."""
    _, patch, touched = bench.worktree_tree(working, repo, commit, protected)
    kept = set(changed_paths(patch))
    return patch, touched, [p for p in touched if p not in kept]


def hide(repo, users):
    """Closes the agent's working tree to the sides' users once its change is taken (mode 0700; its
    owner, the agent, runs nothing any more): the image's own install may point there (an editable
    finder, a path in a .pth file), and no process of the verifier may import from it. Returns a
    function that puts the mode back."""
    st = os.lstat(repo)
    if not stat.S_ISDIR(st.st_mode):
        return lambda: None
    if st.st_uid in [u.uid for u in users] or st.st_uid == 0:
        raise VerifyError("{} belongs to uid {}: it cannot be closed to the verifier's users".format(repo, st.st_uid))
    os.chmod(repo, 0o700)
    return lambda: os.chmod(repo, stat.S_IMODE(st.st_mode))


# ---------------------------------------------------------------- correctness


def pytest_config(copy):
    """The base's pytest config file (pytest's own order), or None."""
    for name, marker in PYTEST_CONFIGS:
        path = os.path.join(copy, name)
        if not os.path.isfile(path):
            continue
        if marker is None:
            return path
        with open(path, encoding="utf-8", errors="replace") as f:
            if marker in f.read():
                return path
    return None


PLUGINS = r"""
import json
try:
    from importlib.metadata import entry_points
    eps = entry_points()
    group = eps.select(group="pytest11") if hasattr(eps, "select") else eps.get("pytest11", [])
    print(json.dumps(sorted({ep.value.split(":")[0].strip() for ep in group})))
except Exception:
    print("[]")
"""


def junit_outcomes(text):
    """test id (classname::name) -> passed / failed / error / skipped, from pytest's xunit1 report."""
    root = ET.fromstring(text)
    out = {}
    for case in root.iter("testcase"):
        ident = "{}::{}".format(case.get("classname") or case.get("file") or "", case.get("name") or "")
        kinds = {child.tag for child in case}
        outcome = "failed" if "failure" in kinds else "error" if "error" in kinds else "skipped" if "skipped" in kinds else "passed"
        if out.get(ident) not in ("failed", "error"):
            out[ident] = outcome
    return out


def run_pytest(side, config_copy, plugins, spec, uid):
    junit = os.path.join(side.temp, "junit.xml")
    argv = ["timeout", "-s", "INT", "-k", "30", str(max(1, int(spec["tests"]["timeout_seconds"]))), side.python, "-m", "pytest",
            "-p", "no:cacheprovider", "-q", "-o", "junit_family=xunit1", "--junitxml=" + junit, "--rootdir", side.copy]
    if config_copy:
        argv += ["-c", config_copy]
    for plugin in plugins:
        argv += ["-p", plugin]
    argv += list(spec["tests"].get("args") or [])
    env = dict(side.env(), PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
    log = os.path.join(side.private, "pytest-{}.log".format(side.label))
    with open(log, "wb") as f:
        code = subprocess.call(argv, cwd=side.copy, env=env, stdout=f, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                               preexec_fn=side.preexec)
    text = read_untrusted(junit, uid)
    with open(log, "rb") as f:
        tail = f.read()[-3000:].decode("utf-8", "replace")
    if text is None:
        return None, code, tail
    try:
        return junit_outcomes(text), code, tail
    except ET.ParseError as exc:
        return {"__unreadable__": str(exc)}, code, tail


def tests_check(base, working, spec, private):
    config = pytest_config(base.copy)
    config_copy = None
    folder = os.path.join(private, "pytest")
    os.makedirs(folder)
    if config:
        config_copy = os.path.join(folder, os.path.basename(config))
        shutil.copyfile(config, config_copy)
    else:  # no config at the base: none is read on either side (not one the agent added)
        config_copy = os.path.join(folder, "pytest.ini")
        with open(config_copy, "w") as f:
            f.write("[pytest]\n")
    os.chmod(folder, 0o755)
    os.chmod(config_copy, 0o644)
    plugins = bench.python_json(base.python, PLUGINS, cwd=base.scratch, env=base.env(), preexec=base.preexec)
    say("tests on the base ({}{})".format(os.path.relpath(config, base.copy) if config else "no pytest config",
                                          ", plugins " + ", ".join(plugins) if plugins else ""))
    on_base, base_code, base_tail = run_pytest(base, config_copy, plugins, spec, base.user.uid)
    result = {"config": os.path.relpath(config, base.copy) if config else None, "plugins": plugins}
    if not on_base or "__unreadable__" in on_base:
        result.update({"collected": False, "why": "pytest wrote no report on the base (exit {}): {}".format(base_code, base_tail[-500:])})
        say("the base collects no tests: the tests check is skipped, as validate skips it")
        return result
    passed = sorted(t for t, o in on_base.items() if o == "passed")
    say("tests on the working side ({} pass on the base)".format(len(passed)))
    on_working, working_code, working_tail = run_pytest(working, config_copy, plugins, spec, working.user.uid)
    on_working = on_working or {}
    regressions = [{"test": t, "working": on_working.get(t, "not-run")} for t in passed if on_working.get(t) != "passed"]
    result.update({"collected": True, "base_passed": len(passed),
                   "working_passed": sum(1 for o in on_working.values() if o == "passed"), "regressions": regressions})
    if regressions:
        one = len(regressions) == 1
        raise Failed("tests", "{} test{} that pass{} on the base do{} not pass with the change: {}".format(
            len(regressions), "" if one else "s", "es" if one else "", "es" if one else "",
            ", ".join("{} ({})".format(r["test"], r["working"]) for r in regressions[:10])),
            dict(result, log_tail=working_tail[-2000:]))
    return result


def snapshot_check(base, working, rel_config, spec, private):
    snapshot = os.path.join(BENCH_DIR, SNAPSHOT)
    limit = str(max(1, int(spec["snapshot"]["timeout_seconds"])))
    per_call = str(spec["snapshot"]["call_seconds"])
    record = os.path.join(base.temp, "snapshot-base.json")
    say("benchmark return values on the base")
    with open(os.path.join(private, "snapshot-base.log"), "wb") as f:
        subprocess.call(["timeout", "-s", "KILL", limit, base.python, snapshot, "record", "--repo", ".", "--config", rel_config,
                         "--timeout", per_call, "--out", record], cwd=base.copy, env=base.env(), stdout=f,
                        stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, preexec_fn=base.preexec)
    text = read_untrusted(record, base.user.uid)
    if text is None:
        raise VerifyError("the snapshot helper wrote nothing on the base")
    recorded = json.loads(text)
    uid = working.user.uid
    out = os.path.join(working.temp, "snapshot.json")
    say("benchmark return values on the working side")
    with open(os.path.join(private, "snapshot-working.log"), "wb") as f:
        subprocess.call(["timeout", "-s", "KILL", limit, working.python, snapshot, "compare", "--repo", ".", "--config", rel_config,
                         "--timeout", per_call, "--baseline", record, "--out", out], cwd=working.copy, env=working.env(),
                        stdout=f, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, preexec_fn=working.preexec)
    text = read_untrusted(out, uid)
    try:
        compared = json.loads(text) if text else None
    except ValueError:
        compared = None
    if not isinstance(compared, dict) or not isinstance(compared.get("results"), list):
        with open(os.path.join(private, "snapshot-working.log"), "rb") as f:
            tail = f.read()[-1500:].decode("utf-8", "replace")
        raise Failed("snapshot", "the benchmarks' return values could not be compared on the working side: " + tail)
    mismatches = [{"name": str(r.get("name")), "reason": r.get("reason")} for r in compared["results"]
                  if isinstance(r, dict) and r.get("outcome") == "mismatch"]
    result = {"recorded": len(recorded.get("workloads") or []), "counts": compared.get("counts"), "mismatches": mismatches,
              "import_errors": compared.get("importErrors")}
    if mismatches:
        raise Failed("snapshot", "{} benchmark{} return{} another value with the change: {}".format(
            len(mismatches), "" if len(mismatches) == 1 else "s", "s" if len(mismatches) == 1 else "",
            ", ".join("{} ({})".format(m["name"], m["reason"]) for m in mismatches[:10])), result)
    return result


# ---------------------------------------------------------------- the reward


def geomean(values):
    values = [v for v in values if isinstance(v, (int, float)) and math.isfinite(v) and v > 0]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def credited(w):
    s = w.get("speedup")
    if not isinstance(s, (int, float)) or not math.isfinite(s) or s <= 0:
        return None
    outside = w.get("outside") or {}
    if outside.get("consistent") is False and isinstance(outside.get("outside_speedup"), (int, float)):
        s = min(s, outside["outside_speedup"])
    return s if w.get("verdict") in ("improved", "worsened") else 1.0


def expert_credited(w):
    s = w.get("expert_speedup")
    if not isinstance(s, (int, float)) or not math.isfinite(s) or s <= 0:
        return None
    return s if w.get("expert_verdict") in ("improved", "worsened") else 1.0


#: Seconds a batch must save, by the worker's report, before the verifier's clock is asked to see it.
MIN_SAVED = 0.002


def median(values):
    values = sorted(values)
    n = len(values)
    return None if n == 0 else values[n // 2] if n % 2 else (values[n // 2 - 1] + values[n // 2]) / 2


def outside_check(m, clock):
    """Per timed workload: the time a working batch saves by the worker's report against what the
    verifier measured from outside the worker around the same batches: the worker process's CPU
    time by the kernel's count (clock cpu, the default), or this process's wall clock (clock wall);
    medians over rounds. name -> {clock, reported_saved, outside_saved, outside_speedup, consistent}."""
    out = {}
    key = "cpus" if clock == "cpu" else "walls"
    benchmarks = (m.get("base") or {}).get("benchmarks") or {}
    for w in m["workloads"]:
        b, e = w["base"], w["expert"]
        entry = benchmarks.get(w["ref"]["benchmark"]) or {}
        if entry.get("unit") != "seconds" or b.get("failure") or e.get("failure"):
            continue
        number = b.get("number") or 1
        reported_b, reported_w, outside_b, outside_w = [], [], [], []
        for r, (sb, se) in enumerate(zip(b["rounds"], e["rounds"])):
            tb = (b.get(key) or [None] * (r + 1))[r]
            te = (e.get(key) or [None] * (r + 1))[r]
            if not sb or not se or tb is None or te is None or te <= 0:
                continue
            reported_b.append(sum(sb) * number)
            reported_w.append(sum(se) * (e.get("number") or number))
            outside_b.append(tb)
            outside_w.append(te)
        if len(outside_b) < 3:
            continue
        saved = median(reported_b) - median(reported_w)
        seen = median(outside_b) - median(outside_w)
        out[w["ref"]["name"]] = {
            "clock": "kernel cpu time" if clock == "cpu" else "wall", "reported_saved": saved, "outside_saved": seen,
            "outside_speedup": median(outside_b) / median(outside_w), "consistent": saved < MIN_SAVED or seen >= 0.5 * saved,
        }
    return out


def reward_of(workloads, correct):
    """workloads: [{name, task_improved, expert_speedup, expert_verdict, speedup, verdict, outside}] -> the flat
    reward (REWARD_FORMULA)."""
    if not correct:
        return {"reward": FAILURE_REWARD, "correct": 0}
    task = [w for w in workloads if w.get("task_improved")]
    agent = geomean([credited(w) for w in task if credited(w) is not None])
    expert = geomean([w.get("expert_speedup") for w in task])
    agent_all = geomean([credited(w) for w in workloads if credited(w) is not None])
    expert_all = geomean([expert_credited(w) for w in workloads if expert_credited(w) is not None])
    out = {"correct": 1}
    if agent is None or expert is None or expert <= 1:
        out["reward"] = FLOOR_REWARD
    else:
        out["reward"] = max(FLOOR_REWARD, math.log(agent) / math.log(expert))
    for key, value in (("speedup", agent), ("expert_speedup", expert), ("speedup_all", agent_all), ("expert_speedup_all", expert_all)):
        if value is not None:
            out[key] = value
    if agent is not None and expert is not None:
        out["advantage"] = agent - expert
    if agent_all is not None and expert_all is not None:
        out["advantage_all"] = agent_all - expert_all
    out["improved_workloads"] = sum(1 for w in task if w.get("verdict") == "improved")
    return out


# ---------------------------------------------------------------- the run


def load_spec(path):
    with open(path, encoding="utf-8") as f:
        spec = json.load(f)
    for key in ("instance_id", "base_commit", "asv_config", "bundle", "build_script", "workloads"):
        if key not in spec:
            raise VerifyError("{}: no {}".format(path, key))
    spec.setdefault("tests", {"timeout_seconds": 1800, "args": []})
    spec.setdefault("snapshot", {"timeout_seconds": 900, "call_seconds": 60})
    spec.setdefault("build_timeout_seconds", 3600)
    spec.setdefault("protocol", {})
    return spec


def workload_rows(spec, report, outside):
    expert = {w["name"]: w for w in spec["workloads"]}
    rows = []
    for w in report["workloads"]:
        e = expert.get(w["name"]) or {}
        rows.append({
            "outside": outside.get(w["name"]),
            "name": w["name"], "task_improved": bool(e.get("improved")), "expert_speedup": e.get("speedup"),
            "expert_verdict": e.get("verdict"), "speedup": w["speedup"], "interval": w["interval"], "verdict": w["verdict"],
            "reason": w["reason"], "mds": w["mds"], "base_value": w["base_value"], "working_value": w["working_value"],
            "pairs": w["pairs"], "failure": w["failure"],
        })
    return rows


def unchanged_rows(spec):
    return [{"name": w["name"], "task_improved": bool(w.get("improved")), "expert_speedup": w.get("speedup"),
             "expert_verdict": w.get("verdict"), "speedup": 1.0, "verdict": "unchanged", "reason": "no-change"}
            for w in spec["workloads"]]


def verify(args, spec, details):
    tests = os.path.realpath(args.tests)
    check_tests_dir(tests)
    user = bench.RunAs(args.user)
    base_user = bench.RunAs.unused()
    python = bench.image_python(argparse.Namespace(python=args.python), {"python": spec.get("python")})
    commit = spec["base_commit"]
    bundle = os.path.join(tests, spec["bundle"])
    script = os.path.join(tests, spec["build_script"])
    seal = os.path.join(HERE, "seal.sh")
    details["stopped_processes"] = stop_unprivileged()

    root = tempfile.mkdtemp(prefix="perfmine-verify-")
    os.chmod(root, 0o755)  # the working side reads the base's suite and the shared files, writes nothing here
    private = os.path.join(root, "logs")
    os.makedirs(private)
    os.chmod(private, 0o755)
    restore = None
    try:
        os.makedirs(os.path.join(root, "base"))
        base = bench.Side(os.path.join(root, "base"), args.repo, python, "base", user=base_user, private=private)
        working_dir = os.path.join(root, "working")
        os.makedirs(working_dir, 0o700)
        working = bench.Side(working_dir, args.repo, python, "working", user=user, private=private)
        constraints = os.path.join(tests, spec["constraints"]) if spec.get("constraints") else None

        def sealed(side):
            env = dict(side.env(), PERFMINE_REPO=side.copy)
            out = side.run(["bash", seal, "from-bundle", bundle, commit], cwd=side.scratch, env=env)
            if out.returncode != 0:
                raise VerifyError("cannot unbundle the base commit for the {} side: {}".format(
                    side.label, out.stdout.decode("utf-8", "replace")[-2000:]))

        say("the base commit {} from {}".format(commit[:12], spec["bundle"]))
        sealed(base)
        sealed(working)
        config_path, rel = os.path.join(base.copy, spec["asv_config"]), spec["asv_config"]
        if not os.path.isfile(config_path):
            raise VerifyError("the base commit has no asv config {}".format(rel))
        suite_dir = harness.load_config(config_path).benchmark_dir
        benchmark_dir = os.path.relpath(suite_dir, base.copy)
        say("the agent's change: the working tree of {} against the base".format(args.repo))
        try:
            patch, touched, dropped = agent_change(working, args.repo, commit, protected_pathspecs(rel, benchmark_dir))
        except bench.BenchError as exc:
            raise Failed("change", "the working tree cannot be read: {}".format(exc))
        restore = hide(args.repo, (user, base_user))
        write_out(args.out, "agent.patch", patch)
        details["change"] = {"paths": [p for p in touched if p not in dropped], "dropped": dropped,
                             "dropped_why": "the benchmarks, the asv config, the tests and pytest's config are the base's on both sides",
                             "patch_bytes": len(patch.encode("utf-8"))}
        if not patch.strip():
            say("no change to the repository outside its tests and benchmarks: the base itself")
            details["workloads"] = unchanged_rows(spec)
            details["checks"] = {"change": "none"}
            return True
        stop_unprivileged()

        say("building the base (as uid {}) and the working side (as {})".format(base_user.uid, user.name))
        if constraints:
            base.extra_env["PIP_CONSTRAINT"] = working.extra_env["PIP_CONSTRAINT"] = constraints
        started = time.monotonic()
        base.make_venv()
        base.build(script, spec["build_timeout_seconds"])
        base.check_imports()
        details["timing"]["base_build"] = time.monotonic() - started
        started = time.monotonic()
        try:
            working.make_venv()
            working.build(script, spec["build_timeout_seconds"])
            working.check_imports()
        except bench.BenchError as exc:
            raise Failed("build", "the working side does not build: {}".format(exc))
        finally:
            stop_unprivileged()
        details["timing"]["working_build"] = time.monotonic() - started

        started = time.monotonic()
        details["checks"] = {}
        try:
            details["checks"]["tests"] = tests_check(base, working, spec, private)
        finally:
            stop_unprivileged()
        try:
            details["checks"]["snapshot"] = snapshot_check(base, working, rel, spec, private)
        finally:
            stop_unprivileged()
        details["timing"]["checks"] = time.monotonic() - started

        p = bench.resolve_protocol({"protocol": spec["protocol"]}, argparse.Namespace(
            rounds=args.rounds, samples=None, rounds_per_process=None, clock=None, seed=None, cpus=None, budget=None))
        say("measuring: {} rounds, base and working side interleaved".format(p["rounds"]))
        started = time.monotonic()
        try:
            m, cpus = bench.measure(base, working, config_path, suite_dir, [], p, log_dir=private)
        except bench.BenchError as exc:
            if "working tree" in str(exc) or "isolated" in str(exc):
                raise Failed("measurement", str(exc))
            raise VerifyError(str(exc))
        finally:
            stop_unprivileged()
        details["timing"]["measurement"] = time.monotonic() - started
        verdict = stats.measurement_verdict(m, p["paired"], p["adaptive"])
        report = bench.report_of(m, verdict, {"protocol": p, "measurement": {
            "rounds": m["rounds"], "rounds_planned": p["rounds"], "batches": m["batches"], "seed": p["seed"],
            "cpus": sorted(cpus) if cpus else None}})
        details["measurement"] = {k: report[k] for k in ("measurement", "calibration", "threshold", "interval", "counts")}
        details["workloads"] = workload_rows(spec, report, outside_check(m, p["clock"]))
        for w in details["workloads"]:
            if (w["outside"] or {}).get("consistent") is False:
                say("{}: the worker reports {:.4f} s saved per batch, the {} measured from outside {:.4f} s: credited "
                    "with the outside speedup {:.3f}".format(w["name"], w["outside"]["reported_saved"], w["outside"]["clock"],
                                                             w["outside"]["outside_saved"], w["outside"]["outside_speedup"]))
        broken = [w for w in details["workloads"] if w["failure"] and w["failure"]["side"] == "working"]
        if broken:
            raise Failed("benchmarks", "{} workload{} fail{} with the change: {}".format(
                len(broken), "" if len(broken) == 1 else "s", "s" if len(broken) == 1 else "",
                ", ".join("{} ({})".format(w["name"], w["failure"]["message"][:200]) for w in broken[:5])))
        return True
    finally:
        stop_unprivileged()
        bench.remove_tree(root)
        if restore:
            restore()


def main(argv):
    if argv[:1] == ["_reward"]:
        data = json.load(sys.stdin)
        print(json.dumps(reward_of(data["workloads"], data.get("correct", True))))
        return EXIT_OK
    p = argparse.ArgumentParser(prog="perfmine_verify.py", description="perfmine's verifier of an agent's change (as root).")
    p.add_argument("--spec", required=True, help="verify.json: the task's base commit, files, protocol and expert speedups")
    p.add_argument("--tests", required=True, help="the directory of the trusted files (the spec's paths are relative to it)")
    p.add_argument("--repo", default="/repo", help="the agent's working tree")
    p.add_argument("--out", default="/logs/verifier", help="where the reward and the details go")
    p.add_argument("--user", default="nobody", help="the unprivileged user the code under test runs as")
    p.add_argument("--python", default=None, help="the image's interpreter (default $PERFMINE_PYTHON, else the spec's)")
    p.add_argument("--rounds", type=int, default=None, help="rounds of the measurement (default the task's protocol)")
    args = p.parse_args(argv)
    if os.geteuid() != 0:
        say("error: the verifier runs as root (the code under test runs as --user)")
        return EXIT_USAGE
    signal.signal(signal.SIGTERM, bench.interrupt)
    started = time.monotonic()
    details = {"tool": "perfmine-verify", "schema": 1, "formula": REWARD_FORMULA, "timing": {}}
    try:
        spec = load_spec(args.spec)
        details.update({"instance_id": spec["instance_id"], "base_commit": spec["base_commit"]})
        os.makedirs(args.out, exist_ok=True)
        correct = verify(args, spec, details)
        failure = None
    except Failed as exc:
        correct, failure = False, {"check": exc.check, "message": str(exc)}
        if exc.detail is not None:
            details.setdefault("checks", {})[exc.check] = exc.detail
        say("failure ({}): {}".format(exc.check, exc))
    except (VerifyError, bench.BenchError, harness.UsageError, OSError, ValueError) as exc:
        say("error: the verifier could not verify: {}".format(exc))
        return EXIT_VERIFIER
    except KeyboardInterrupt:
        say("interrupted")
        return 130
    stop_unprivileged()
    reward = reward_of(details.get("workloads") or [], correct)
    details["failure"] = failure
    details["reward"] = reward
    details["timing"]["total"] = time.monotonic() - started
    write_out(args.out, "perfmine-verify.json", json.dumps(harness.finite(details), indent=2, allow_nan=False) + "\n")
    write_out(args.out, "reward.json", json.dumps(reward) + "\n")
    write_out(args.out, "reward.txt", "{}\n".format(reward["reward"]))
    say("reward {:.4f}{}".format(reward["reward"], " ({}: {})".format(failure["check"], failure["message"][:300]) if failure else ""))
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
