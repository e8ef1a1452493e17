#!/usr/bin/env python3
"""perfmine-verify: the verifier of an agent's change to a perfmine task, run as root in the
task's environment after the agent is done (a Harbor task's tests/test.sh runs it; network off;
`perfmine score` and `perfmine replay` run it too). It trusts only the files it is given (the
task's sealed history, build script, expert patch, perfmine's harness and this program, under
/tests) and the image as built; nothing the agent could have changed. It never ends without a
verdict: whatever goes wrong, the reward files are written (the failure reward, with the reason
and whether the verifier or the change failed).

    perfmine_verify.py --spec verify.json --tests DIR [--repo /repo] [--out /logs/verifier]
                       [--user nobody] [--rounds N]
    perfmine_verify.py _reward < {"workloads": [...], "correct": bool}      (the formula alone)
    perfmine_verify.py _detect < {"patch": ..., "files": {...}, ...}         (the hack detector alone)

What it does, in order:
 1. Stops every process that is not root's (whatever the agent left running), and again before
    each later step; removes what users other than root left in /tmp, /var/tmp and /dev/shm
    (each a finding) and closes /tmp and /var/tmp to them for the run (TMPDIR is each side's own).
 2. The agent's change: the working tree of --repo (its tracked files and the untracked ones that
    are not ignored; its own .git is never read) as a tree of a fresh copy of the base commit,
    made from the sealed history with the copy's own git directory. A file of --repo changed
    after the verifier's files arrived (its ctime later than theirs: the agent's processes were
    still at work) is a hack. Changes to the benchmarks (the asv config's benchmark_dir), the
    asv config, the tests (test_*.py, *_test.py, conftest.py, anything under a tests/ or test/
    directory) and pytest's own config files are dropped: both sides run the base commit's. The
    change is written to OUT/agent.patch. No change left: the repository is the base, speedup 1
    on every workload, reward 0.
 3. The hack detector (perfmine_detect.py) on the change: a hack ends the verification with the
    failure reward; suspect findings are reported.
 4. Four sides, each a copy in a venv (`--system-site-packages`) built with the task's build
    script (pip given the task's constraints and, when the task carries its lock's files under
    /tests, those files and no index), each process of a side run as a user of its own with
    no_new_privs: the base (from the sealed history), the working side (the agent's change
    applied; a working side that does not build is a failure; its venv gaining an interpreter
    hook, a .pth that runs code or a sitecustomize, is a hack), the reference (the task's expert
    patch, for the reward's denominator; closed to the other users) and calibration (the base's
    build, another user).
 5. Correctness (perfmine_verify_checks.py), over channels the code under test cannot rewrite:
    the tests that pass on the base must pass on the working side; the benchmarks' return values
    must be the base's; the package's functions the benchmarks call must return the base's
    values on inputs perturbed from the task's hidden seed. A failure of any is the failure
    reward.
 6. The measurement: perfmine-bench's (validate's) interleaved protocol with four warm workers
    (base, working side, calibration, reference), the base commit's suite on every side, the task's
    protocol but batch by batch (interleave "batch": the outside counts are per batch) and every
    workload and side in every round (plan "even", calibrationRounds null), then more
    rounds of the task's improved workloads alone on the base, the working side and the reference,
    up to REWARD_ROUNDS (--rounds: exactly that many rounds, no more); every side stopped between
    its batches and its CPU time counted from outside (perfmine_bench_account.py); each side's
    `number` its own, its warm-up counted in calls; the sides' directories and user names of one
    length (SIDE_DIRS). Then the credit (perfmine_verify_credit.py): the working side's reported
    times checked against the outside count, within what calibration shows; a workload fast only on
    the inputs it was timed with credited with no speedup; the working side compared with the
    reference round by round.
 7. The reward (REWARD_FORMULA), written to OUT/reward.json (flat numbers, as Harbor reads them:
    the reward, its parts, and counts of findings), OUT/reward.txt, and the details (every
    workload, every check, every finding, the timing) to OUT/perfmine-verify.json.

Exit codes: 0 a verdict of the change was written (whatever it is); 2 usage; 3 the verifier
itself could not verify (its files, the base side, the measurement of the base): the failure
reward is written with verifier_error = 1, so that no harness counts a broken verification as
better than a failed change.

What it cannot see: code inside the processes that test and time it (pytest, the probe, the
harness's worker) that speaks for them, patching their own functions before they answer; the
channels see only what those processes say, and the hack detector looks for such code by its
names (a clock, the harness, the test runner). A saving in a benchmark's setup widens the outside
check's allowance by that saving. Inputs are perturbed only where they are numbers.

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
import sys
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH_DIR = os.path.join(HERE, "bench")
for folder in (BENCH_DIR, HERE):
    if os.path.isdir(folder) and folder not in sys.path:
        sys.path.insert(0, folder)

import perfmine_bench as bench  # noqa: E402
import perfmine_bench_account as account  # noqa: E402
import perfmine_bench_stats as stats  # noqa: E402
import perfmine_detect as detect  # noqa: E402
import perfmine_harness as harness  # noqa: E402
import perfmine_verify_checks as checks  # noqa: E402
import perfmine_verify_credit as credit  # noqa: E402
from perfmine_verify_credit import FAILURE_REWARD, REWARD_FORMULA, reward_of  # noqa: E402

EXIT_OK, EXIT_USAGE, EXIT_VERIFIER = 0, 2, 3
PYTEST_CONFIGS = (("pytest.ini", None), (".pytest.ini", None), ("pyproject.toml", "[tool.pytest.ini_options]"),
                  ("tox.ini", "[pytest]"), ("setup.cfg", "[tool:pytest]"))
TEST_PATHSPECS = [":(glob)**/test_*.py", ":(glob)**/*_test.py", ":(glob)**/conftest.py", ":(glob)**/tests/**",
                  ":(glob)**/test/**", ":(glob)pytest.ini", ":(glob).pytest.ini", ":(glob)tox.ini"]
SHARED_TMP = ("/tmp", "/var/tmp")
LEFTOVER_DIRS = ("/tmp", "/var/tmp", "/dev/shm")
#: The files of the verifier every side's user must read (copied out of the tests directory).
STAGED = ("perfmine_harness.py", "perfmine_probe.py", "perfmine_channel.py", "perfmine_pytest_channel.py",
          "perfmine_bench_account.py")
EDITABLE_FINDER = re.compile(r"^import __editable__[\w.\-]*finder; __editable__[\w.\-]*finder\.install\(.*\)$")


class VerifyError(Exception):
    """The verifier could not verify (the failure reward with verifier_error)."""


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
    for pid in account.pids():
        if pid == mine:
            continue
        uids = account.read_uids(pid)
        if uids is not None and any(u != 0 for u in uids):
            found.append(pid)
    return found


def stop_unprivileged():
    """SIGSTOP every process not wholly root's until none is left running, then SIGKILL them: what
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
    for _ in range(100):  # reaped by init (or by this process, the subreaper); a zombie at worst
        alive = [p for p in stopped if os.path.exists("/proc/{}".format(p)) and (account.read_stat(p) or ("X",))[0] not in ("Z", "X")]
        if not alive:
            break
        time.sleep(0.05)
    return len(stopped)


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


def empty_out(folder, keep=()):
    """The output folder emptied (no link followed), root's, writable by root alone."""
    os.makedirs(folder, exist_ok=True)
    for name in os.listdir(folder):
        if name in keep:
            continue
        path = os.path.join(folder, name)
        st = os.lstat(path)
        if stat.S_ISDIR(st.st_mode):
            shutil.rmtree(path, ignore_errors=True)
        else:
            os.unlink(path)
    os.chmod(folder, 0o755)


def check_tests_dir(tests):
    """Every file the verifier reads from the tests directory is root's and writable by nobody else."""
    for folder, dirs, files in os.walk(tests):
        for name in [folder] + [os.path.join(folder, n) for n in dirs + files]:
            st = os.lstat(name)
            if stat.S_ISLNK(st.st_mode):
                raise VerifyError("{} is a symbolic link".format(name))
            if st.st_uid != 0 or st.st_mode & 0o022:
                raise VerifyError("{} is not root's alone (owner {}, mode {:o})".format(name, st.st_uid, st.st_mode & 0o7777))


def tests_arrival(tests):
    """When the verifier's files arrived: the earliest status change of a file under the tests directory."""
    times = []
    for folder, _, files in os.walk(tests):
        times.extend(os.lstat(os.path.join(folder, f)).st_ctime_ns for f in files)
    return min(times) if times else None


def changed_after(repo, arrival, limit=20):
    """Files (and directories) of repo whose status changed after `arrival` (ns): the agent's processes
    still at work once the verifier's files were there. Only root can set a ctime."""
    if arrival is None:
        return []
    late = []
    for folder, dirs, files in os.walk(repo):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in [folder] + [os.path.join(folder, f) for f in files]:
            try:
                if os.lstat(name).st_ctime_ns > arrival:
                    late.append(os.path.relpath(name, repo))
            except OSError:
                continue
            if len(late) >= limit:
                return late
    return late


def leftovers():
    """Files and directories left by users other than root in the shared temporary directories:
    findings, removed so that no side reads them."""
    found = []
    for top in LEFTOVER_DIRS:
        try:
            names = os.listdir(top)
        except OSError:
            continue
        for name in names:
            path = os.path.join(top, name)
            try:
                st = os.lstat(path)
            except OSError:
                continue
            if st.st_uid == 0:
                continue
            found.append(detect.finding("leftovers", detect.SUSPECT, path, None, "",
                                        "left by uid {} outside the repository (removed before the sides ran)".format(st.st_uid)))
            if stat.S_ISDIR(st.st_mode) and not stat.S_ISLNK(st.st_mode):
                shutil.rmtree(path, ignore_errors=True)
            else:
                try:
                    os.unlink(path)
                except OSError:
                    pass
    return found


def close_shared_tmp():
    """/tmp and /var/tmp closed to other users for the run (others may pass through, not write);
    returns a function that puts their modes back."""
    before = []
    for top in SHARED_TMP:
        try:
            mode = stat.S_IMODE(os.lstat(top).st_mode)
            os.chmod(top, 0o1711)
            before.append((top, mode))
        except OSError:
            continue

    def restore():
        for top, mode in before:
            try:
                os.chmod(top, mode)
            except OSError:
                pass

    return restore


# ---------------------------------------------------------------- the agent's change


def protected_pathspecs(asv_config, benchmark_dir):
    """The pathspecs of what both sides keep from the base: the asv config, the benchmark directory
    (relative to the checkout; "." is the checkout itself, all of it; one outside the checkout
    protects nothing there, and git refuses a pathspec outside the repository), the tests and
    pytest's config. validate's twin: pipeline/concepts/measured-patch.ts isProtectedPath."""
    specs = [":(literal){}".format(asv_config)]
    folder = benchmark_dir.strip("/") if benchmark_dir else ""
    if folder and folder != ".." and not folder.startswith("../"):
        specs.append(":(literal){}".format(folder))
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


def changed_texts(copy, patch):
    """The new text of every Python file the change touches (as the working side's copy holds it)."""
    out = {}
    for path in changed_paths(patch):
        full = os.path.join(copy, path)
        if path.endswith((".py", ".pyi")) and os.path.isfile(full) and not os.path.islink(full):
            with open(full, encoding="utf-8", errors="replace") as f:
                out[path] = f.read(1 << 22)
    return out


# ---------------------------------------------------------------- sides


#: The sides' directories: names of one length, so that no side's paths (and so its processes'
#: environment, argv and module file names) are longer than another's. Identical code in
#: directories named base, working and reference ran up to 3% apart, the working side the faster.
SIDE_DIRS = {"base": "side-1", "working": "side-2", "reference": "side-3", "calibration": "side-4"}


def same_size_names(user):
    """USER and LOGNAME of a side's processes, of one length for every side (u + the uid)."""
    name = "u{:05d}".format(user.uid)
    return {"USER": name, "LOGNAME": name}


class Calibration:
    """The calibration worker's side: the base's build, run as another user with directories of its own."""

    label = "calibration"

    def __init__(self, base, tmp, user):
        self.base = base
        self.tmp = tmp
        self.user = user
        self.python = base.python
        self.copy = base.copy
        self.scratch = os.path.join(tmp, "work")
        self.temp = os.path.join(tmp, "tmp")
        self.home = os.path.join(tmp, "home")
        for folder in (self.scratch, self.temp, self.home):
            os.makedirs(folder)
        user.own(tmp)
        self.preexec = user.preexec

    def env(self):
        return dict(self.base.env(), TMPDIR=self.temp, HOME=self.home, **same_size_names(self.user))


def users_for(working_name):
    """The sides' users: working (--user), base, calibration, reference: four distinct uids."""
    working = bench.RunAs(working_name)
    taken = {working.uid}
    found = []
    start = 61000
    while len(found) < 3:
        u = bench.RunAs.unused(start)
        start = u.uid + 1
        if u.uid not in taken:
            taken.add(u.uid)
            found.append(u)
    return working, found[0], found[1], found[2]


def venv_hooks(base, working):
    """Interpreter hooks the working side's build planted in its venv that the base's has not: a
    sitecustomize or usercustomize, a .pth line that runs code (other than an editable finder's)."""
    found = []

    def site_files(side):
        out = {}
        for root, dirs, files in os.walk(side.venv):
            dirs[:] = [d for d in dirs if d not in ("__pycache__",) and not d.endswith((".dist-info", ".egg-info"))]
            for name in files:
                if name.endswith(".pth") or name in ("sitecustomize.py", "usercustomize.py"):
                    path = os.path.join(root, name)
                    with open(path, "rb") as f:
                        out[os.path.relpath(path, side.venv)] = f.read(1 << 20).decode("utf-8", "replace")
        return out

    theirs = site_files(base)
    for rel, text in sorted(site_files(working).items()):
        name = os.path.basename(rel)
        if name in ("sitecustomize.py", "usercustomize.py"):
            if rel not in theirs:
                found.append(detect.finding("interpreter-hook", detect.HACK, rel, None, "",
                                            "the working side's build installed {}".format(name)))
            continue
        if text in theirs.values():
            continue
        for line in text.splitlines():
            s = line.strip()
            if s.startswith(("import ", "import\t")) and not EDITABLE_FINDER.match(s):
                found.append(detect.finding("interpreter-hook", detect.HACK, rel, None, s,
                                            "a .pth line the working side's build installed runs code at every start"))
                break
    return found


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


def tests_check(base, working, spec, private, staging, accounts):
    config = pytest_config(base.copy)
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
    plugins = [p for p in plugins if p != "perfmine_pytest_channel"]
    tail = ["-c", config_copy]
    for plugin in plugins:
        tail += ["-p", plugin]
    tail += list(spec["tests"].get("args") or [])
    timeout = max(1, int(spec["tests"]["timeout_seconds"]))
    say("tests on the base ({}{})".format(os.path.relpath(config, base.copy) if config else "no pytest config",
                                          ", plugins " + ", ".join(plugins) if plugins else ""))
    result = {"config": os.path.relpath(config, base.copy) if config else None, "plugins": plugins}
    try:
        on_base = checks.run_tests(base, tail, timeout, os.path.join(private, "pytest-base.log"), staging, accounts["base"])
    except checks.SideFailed as exc:
        result.update({"collected": False, "why": "the base's test run gives no verdict: {}".format(exc)})
        say("the base's tests give no verdict ({}): the tests check is skipped, as validate skips it".format(exc))
        return result
    finally:
        stop_unprivileged()
    if not on_base["outcomes"]:
        result.update({"collected": False, "why": "the base collects no tests"})
        say("the base collects no tests: the tests check is skipped, as validate skips it")
        return result
    passed = sorted(t for t, o in on_base["outcomes"].items() if o == "passed")
    say("tests on the working side ({} pass on the base)".format(len(passed)))
    try:
        on_working = checks.run_tests(working, tail, timeout, os.path.join(private, "pytest-working.log"), staging,
                                      accounts["working"])
    except checks.SideFailed as exc:
        raise Failed("tests", "the working side's test run gives no verdict the verifier can trust: {}".format(exc.why),
                     dict(result, collected=True, base_passed=len(passed)))
    finally:
        stop_unprivileged()
    _, regressed = checks.regressions(on_base["outcomes"], on_working["outcomes"])
    result.update({"collected": True, "base_passed": len(passed),
                   "working_passed": sum(1 for o in on_working["outcomes"].values() if o == "passed"),
                   "regressions": regressed, "channel": "driven test by test"})
    if regressed:
        one = len(regressed) == 1
        raise Failed("tests", "{} test{} that pass{} on the base do{} not pass with the change: {}".format(
            len(regressed), "" if one else "s", "es" if one else "", "es" if one else "",
            ", ".join("{} ({})".format(r["test"], r["working"]) for r in regressed[:10])), result)
    return result


def open_probe(side, staging, config, spec, private, acct, p):
    roots = [side.copy] + [os.path.join(side.venv, "lib")]
    env = dict(p["env"], PYTHONHASHSEED=str(p["hashSeed"]))
    return checks.Probe(side, staging, config, roots, float(spec["snapshot"]["call_seconds"]),
                        os.path.join(private, "probe-{}.log".format(side.label)), acct, env)


def correctness(sides, spec, private, staging, accounts, suite_config, p, details):
    """The benchmarks' values and the perturbed inputs. Returns (per-workload perturbed timings,
    per-workload first-call seconds, per-workload entry functions)."""
    base, working, reference = sides["base"], sides["working"], sides.get("reference")
    opened = {}
    started = time.monotonic()

    def side_failed(exc, check):
        if exc.what.startswith("the base"):
            raise VerifyError(str(exc))
        raise Failed(check, "the working side's probe gives no verdict the verifier can trust: {}".format(exc.why))

    try:
        say("the benchmarks' return values and the package's answers on perturbed inputs")
        try:
            opened["base"] = open_probe(base, staging, suite_config, spec, private, accounts["base"], p)
        except checks.SideFailed as exc:
            raise VerifyError("the base's probe: {}".format(exc))
        if opened["base"].errors:
            raise VerifyError("the base's suite cannot be imported: {}".format(opened["base"].errors[0][:500]))
        if reference is not None:
            try:
                opened["reference"] = open_probe(reference, staging, suite_config, spec, private, accounts["reference"], p)
            except checks.SideFailed as exc:
                say("the reference's probe failed ({}): its answers are not used".format(exc))
        try:
            opened["working"] = open_probe(working, staging, suite_config, spec, private, accounts["working"], p)
            mismatches, counts, cold, hashes = checks.values_check(opened["base"], opened["working"], opened.get("reference"))
        except checks.SideFailed as exc:
            side_failed(exc, "snapshot")
        details["checks"]["snapshot"] = {"counts": counts, "mismatches": mismatches, "channel": "request by request"}
        if mismatches:
            raise Failed("snapshot", "{} benchmark{} return{} another value with the change: {}".format(
                len(mismatches), "" if len(mismatches) == 1 else "s", "s" if len(mismatches) == 1 else "",
                ", ".join("{} ({})".format(m["name"], m["reason"]) for m in mismatches[:10])), details["checks"]["snapshot"])
        details["timing"]["values"] = time.monotonic() - started
        seed = str(os.environ.get("PERFMINE_VERIFY_SEED") or spec.get("probe_seed") or spec["instance_id"])
        try:
            wrong, counts, captures, entries = checks.inputs_check(opened["base"], opened["working"], opened.get("reference"),
                                                                   opened["base"].workloads, seed)
        except checks.SideFailed as exc:
            side_failed(exc, "inputs")
        details["checks"]["inputs"] = {"counts": counts, "mismatches": wrong}
        details["timing"]["inputs"] = time.monotonic() - started - details["timing"]["values"]
        if wrong:
            raise Failed("inputs", "{} call{} of the package on perturbed inputs return{} another value with the change: {}".format(
                len(wrong), "" if len(wrong) == 1 else "s", "s" if len(wrong) == 1 else "",
                "; ".join("{}{} (base {}, working {})".format(m["function"], m["args"], m["base"], m["working"])
                          for m in wrong[:5])), details["checks"]["inputs"])
        improved = {w["name"] for w in spec["workloads"] if w.get("improved")}
        started = time.monotonic()
        try:
            timings = checks.memo_timings(opened["base"], opened["working"], opened.get("reference"),
                                          {k: v for k, v in captures.items() if k in improved}, seed)
        except checks.SideFailed as exc:
            side_failed(exc, "inputs")
        details["timing"]["memo_inputs"] = time.monotonic() - started
        return timings, cold, entries, hashes
    finally:
        for session in opened.values():
            session.close()
        stop_unprivileged()


# ---------------------------------------------------------------- measurement and credit


#: The fewest rounds in which the reward's workloads are measured on the base, the working side and
#: the reference (the rounds after the protocol's measure those only): the reward compares the change
#: with the expert's patch, and a workload 1.4x faster reads, on a 2-CPU machine, 0.97 to 1.05 of
#: itself in 6 rounds. PERFMINE_VERIFY_ROUNDS (--rounds) measures exactly its rounds.
REWARD_ROUNDS = 20
#: The measurement's time budget when the task's protocol gives none: perfmine-bench's default before
#: it took validate's 600 s (planned by cost there); the verifier measures every workload and side in
#: every round, and the task's verifier timeout (three of validate's measurements) bounds it.
MEASURE_BUDGET_SECONDS = 4 * 3600


def measure(sides, suite_config, suite_dir, p, private, accounts, staging, reward_workloads=(), reward_rounds=0):
    """The four workers interleaved, each side stopped between its batches and counted from outside;
    then, up to reward_rounds, the reward's workloads on the base, the working side and the reference."""
    cpus = bench.worker_cpus(p["cpus"])
    env_common = dict(p["env"], PYTHONHASHSEED=str(p["hashSeed"]))
    of = {"base": sides["base"], "expert": sides["working"], "calibration": sides["calibration"],
          "reference": sides.get("reference")}
    harness_path = os.path.join(staging, "perfmine_harness.py")

    def open_side(side):
        s = of[side]
        accounts[{"expert": "working"}.get(side, side)].cont()
        worker = bench.LocalWorker(bench.serve_argv(s.python, suite_config, [], harness_path), dict(s.env(), **env_common),
                                   s.scratch, os.path.join(private, "worker-{}.log".format(side)), cpus, preexec=s.preexec)
        if worker.start.get("event") != "ready" and side in ("base", "expert"):
            worker.close()
            if side == "base":
                raise VerifyError("the base worker could not load the suite: {}: {}".format(
                    worker.start.get("reason"), worker.start.get("message")))
            raise Failed("benchmarks", "the working side's worker could not load the suite: {}: {}".format(
                worker.start.get("reason"), (worker.start.get("message") or "")[:1000]))
        return worker

    def after_open(workers):
        for side, worker in workers.items():
            if worker is None:
                continue
            files = worker.modules() or []
            theirs = [sides["working"].tmp] if side != "expert" else [sides["base"].tmp] + (
                [sides["reference"].tmp] if sides.get("reference") else [])
            bad = [f for f in files if any(bench.inside(f, t) for t in theirs) and not bench.inside(f, suite_dir)]
            if bad:
                raise VerifyError("the {} worker loaded files of another side: {}".format(side, ", ".join(sorted(bad)[:5])))

    settings = {
        "rounds": p["rounds"], "roundsPerProcess": p["roundsPerProcess"], "samples": p["samples"], "calibration": True,
        "seed": p["seed"], "budgetSeconds": p["timeBudgetSeconds"], "batchTimeoutSeconds": p["batchTimeoutSeconds"],
        "clock": p["clock"], "warmupSeconds": p["warmupSeconds"], "looks": p["adaptive"]["looks"],
        "reference": sides.get("reference") is not None, "numberPerSide": True, "warmupCalls": True, "values": True,
        # batch by batch whatever the task's protocol says: each side's CPU time is counted from
        # outside per batch (accounts), and a one-sample batch is too short for that count to resolve
        "interleave": "batch",
        # every round on every side: the reward workloads' precision needs all their pairs and calibration's
        "plan": "even", "calibrationRounds": None, "samplesPerRound": "fixed",
        # fresh workers import the whole suite, as before issue 37's module-restricted restarts:
        # the hack checks' probes were not re-validated against them (two honest oracles judged
        # memoised in the rehearsals of the stop that added them)
        "restartModules": False,
        "extend": {"rounds": reward_rounds, "workloads": sorted(reward_workloads), "sides": ["base", "expert", "reference"]}
        if sides.get("reference") is not None and reward_workloads and reward_rounds > p["rounds"] else None,
        "accounts": {"base": accounts["base"], "expert": accounts["working"], "calibration": accounts["calibration"],
                     "reference": accounts.get("reference")} if sides.get("reference") else
        {"base": accounts["base"], "expert": accounts["working"], "calibration": accounts["calibration"]},
    }

    def on_round(done, elapsed, measuring):
        say("round {}/{}: {} workloads measured, {:.1f} s".format(done, max(p["rounds"], reward_rounds), measuring, elapsed))

    m = bench.measure_interleaved(open_side, settings, on_round=on_round, after_open=after_open,
                                  settle=lambda snapshot: stats.settlements(snapshot, p["paired"], p["adaptive"]))
    return m, cpus


def verdict_rows(report):
    return {w["name"]: w for w in report["workloads"]}


def workload_rows(spec, report, ref_report, outside, memo, vs_reference=None):
    expert = {w["name"]: w for w in spec["workloads"]}
    refs = verdict_rows(ref_report) if ref_report else {}
    rows = []
    for w in report["workloads"]:
        e = expert.get(w["name"]) or {}
        r = refs.get(w["name"]) or {}
        row = {
            "name": w["name"], "task_improved": bool(e.get("improved")), "expert_speedup": e.get("speedup"),
            "expert_verdict": e.get("verdict"), "reference_speedup": r.get("speedup"), "reference_verdict": r.get("verdict"),
            "speedup": w["speedup"], "interval": w["interval"], "verdict": w["verdict"], "reason": w["reason"],
            "mds": w["mds"], "base_value": w["base_value"], "working_value": w["working_value"], "pairs": w["pairs"],
            "failure": w["failure"], "outside": outside.get(w["name"]), "memo": memo.get(w["name"]),
            "median_log": w.get("median_log"), "standard_error": w.get("standard_error"), "df": w.get("df"),
            "vs_reference_log": (vs_reference or {}).get(w["name"]),
        }
        if row["memo"] and row["memo"].get("memoised"):
            row["reported_speedup"], row["reported_interval"] = row["speedup"], row["interval"]
            row["speedup"], row["verdict"], row["reason"] = 1.0, "unchanged", "memoised"
            row["interval"], row["median_log"], row["vs_reference_log"] = [1.0, 1.0], 0.0, None
        rows.append(row)
    return rows


def unchanged_rows(spec):
    return [{"name": w["name"], "task_improved": bool(w.get("improved")), "expert_speedup": w.get("speedup"),
             "expert_verdict": w.get("verdict"), "speedup": 1.0, "verdict": "unchanged", "reason": "no-change"}
            for w in spec["workloads"]]


def memo_signals(report, ref_report, spec, timings, cold):
    """Per task-improved workload the working side improved: whether it is fast only on the inputs it
    was timed with, from timings taken within each side's own process (memo_timings):
      - cached: on fresh perturbed inputs (else on the timed inputs in a fresh process), its first
        call at least CACHED_RATIO times slower than a repeated one, and that many times more so
        than the base's and the expert's patch's;
      - special-cased: its timed inputs, relative to comparable perturbed ones, SPECIAL_RATIO times
        cheaper than the base has them, beyond what the expert's patch does;
      - two-faced: the harness's speedup TWO_FACED_RATIO times what the probe finds on the very same
        inputs, beyond the expert's patch, where those calls are most of the benchmark's work.
    Each way the workload is credited with no speedup: what a cache, an answer kept for the timed
    inputs or code that knows it is timed saves is not the task's work."""
    improved = {w["name"] for w in spec["workloads"] if w.get("improved")}
    recorded = {w["name"]: w.get("speedup") for w in spec["workloads"]}
    refs = verdict_rows(ref_report) if ref_report else {}
    out = {}
    for w in report["workloads"]:
        name = w["name"]
        if name not in improved or w["verdict"] != "improved" or not checks.number(w["speedup"]):
            continue
        timing = timings.get(name) or {}
        ratios = timing.get("first_over_repeat")
        source = "fresh perturbed inputs"
        if not ratios:
            b, k, r, _ = cold.get(name, (None, None, None, None))
            ratios = {side: t[0] / t[1] for side, t in (("base", b), ("working", k), ("reference", r)) if t}
            source = "the timed inputs in a fresh process"
        whole = cold.get(name, (None, None, None, None))[3]  # the base's benchmark call, repeated, in its probe
        probe_base = (timing.get("timed") or {}).get("base")
        coverage = probe_base / whole if checks.number(whole) and checks.number(probe_base) else None
        expert = (refs.get(name) or {}).get("speedup") or recorded.get(name)
        entry = {"first_over_repeat": ratios, "relative_cost": timing.get("relative"), "inputs": timing.get("inputs"),
                 "probe_timed": timing.get("timed"), "coverage": coverage}
        if credit.cached(ratios):
            entry.update(memoised=True, why="cached: its first call on {} far slower than a repeated one".format(source))
        elif timing.get("relative") and credit.special_cased(timing["relative"]):
            entry.update(memoised=True, why="special-cased: its timed inputs far cheaper than comparable ones")
        elif credit.two_faced(w["speedup"], expert, timing.get("timed"), coverage):
            entry.update(memoised=True, why="two-faced: far faster under the harness than under the probe on the same inputs")
        else:
            entry["memoised"] = False
        out[name] = entry
    return out


def timed_values(m, hashes):
    """Workloads whose timed calls on the working side returned other values than the working side's
    probe saw (where the base's timed calls returned what the base's probe saw): code that answers
    the check one way and the timer another."""
    out = []
    for w in m["workloads"]:
        name = w["ref"]["name"]
        if name not in hashes:
            continue
        base_hash, working_hash = hashes[name]
        base_seen = [h for h in w["base"].get("values") or [] if h is not None]
        if not base_seen or any(h != base_hash for h in base_seen):
            continue
        values, rounds = w["expert"].get("values") or [], w["expert"]["rounds"]
        working_seen = [values[r] for r in range(min(len(values), len(rounds))) if rounds[r]]
        if any(h != working_hash for h in working_seen):
            out.append(name)
    return out


# ---------------------------------------------------------------- the run


def load_spec(path):
    try:
        with open(path, encoding="utf-8") as f:
            spec = json.load(f)
    except (OSError, ValueError, RecursionError) as exc:
        raise VerifyError("{}: {}".format(path, exc))
    if not isinstance(spec, dict):
        raise VerifyError("{}: not a JSON object".format(path))
    for key in ("instance_id", "base_commit", "asv_config", "bundle", "build_script", "workloads"):
        if key not in spec:
            raise VerifyError("{}: no {}".format(path, key))
    spec.setdefault("tests", {"timeout_seconds": 1800, "args": []})
    spec.setdefault("snapshot", {"timeout_seconds": 900, "call_seconds": 60})
    spec.setdefault("build_timeout_seconds", 3600)
    spec.setdefault("protocol", {})
    return spec


def pip_env(spec, staging):
    """What pip reads in every side's build: the task's build constraints (constraints.txt), and,
    when the task carries its lock's files (spec["wheels"], staged under STAGING/wheels), those
    files and no index, so that a build needs no network."""
    env = {}
    if spec.get("constraints"):
        env["PIP_CONSTRAINT"] = os.path.join(staging, "constraints.txt")
    if spec.get("wheels"):
        env.update(PIP_NO_INDEX="1", PIP_FIND_LINKS=os.path.join(staging, "wheels"))
    return env


def stage_wheels(spec, tests, staging):
    """The task's locked files (tests/WHEELS, checked by MANIFEST.sha256) copied where every side's
    user can read them."""
    if not spec.get("wheels"):
        return
    folder = os.path.join(tests, spec["wheels"])
    if not os.path.isdir(folder):
        raise VerifyError("the spec names the locked files {}, which are not under {}".format(spec["wheels"], tests))
    names = sorted(os.listdir(folder))
    checks.copy_into([(name, os.path.join(folder, name)) for name in names], os.path.join(staging, "wheels"))


def build_side(side, script, spec, what):
    side.make_venv()
    side.build(script, spec["build_timeout_seconds"])
    side.check_imports()
    return side


def verify(args, spec, details, findings):
    tests = os.path.realpath(args.tests)
    check_tests_dir(tests)
    details["stopped_processes"] = stop_unprivileged()
    arrival = tests_arrival(tests)
    findings.extend(leftovers())
    restore_tmp = close_shared_tmp()
    working_user, base_user, cal_user, ref_user = users_for(args.user)
    reaper = account.Reaper()
    accounts = {name: account.UidAccount(u.uid, u.gid, reaper) for name, u in
                (("base", base_user), ("working", working_user), ("calibration", cal_user), ("reference", ref_user))}
    python = bench.image_python(argparse.Namespace(python=args.python), {"python": spec.get("python")})
    commit = spec["base_commit"]
    root = tempfile.mkdtemp(prefix="perfmine-verify-")
    os.chmod(root, 0o755)  # the sides read the base's suite and the staged files, write nothing here
    private = os.path.join(root, "logs")
    os.makedirs(private)
    os.chmod(private, 0o755)
    restore = None
    try:
        staged = [(name, os.path.join(BENCH_DIR, name)) for name in STAGED]
        staged += [("seal.sh", os.path.join(HERE, "seal.sh")), ("repo.bundle", os.path.join(tests, spec["bundle"])),
                   ("docker_build.sh", os.path.join(tests, spec["build_script"]))]
        if spec.get("constraints"):
            staged.append(("constraints.txt", os.path.join(tests, spec["constraints"])))
        staging = checks.copy_into(staged, os.path.join(root, "bin"))
        stage_wheels(spec, tests, staging)
        bundle, script = os.path.join(staging, "repo.bundle"), os.path.join(staging, "docker_build.sh")
        expert_patch = os.path.join(tests, spec["expert_patch"]) if spec.get("expert_patch") else None

        sides = {}
        for label, user in (("base", base_user), ("working", working_user)):
            os.makedirs(os.path.join(root, SIDE_DIRS[label]))
            sides[label] = bench.Side(os.path.join(root, SIDE_DIRS[label]), args.repo, python, label, user=user, private=private)
        os.chmod(sides["working"].tmp, 0o700)
        if expert_patch and os.path.isfile(expert_patch):
            os.makedirs(os.path.join(root, SIDE_DIRS["reference"]))
            sides["reference"] = bench.Side(os.path.join(root, SIDE_DIRS["reference"]), args.repo, python, "reference", user=ref_user,
                                            private=private)
            os.chmod(sides["reference"].tmp, 0o700)  # the expert's code: no other side may read it
            held = os.path.join(sides["reference"].tmp, "expert.patch")
            shutil.copyfile(expert_patch, held)
            os.chown(held, ref_user.uid, ref_user.gid)
            os.chmod(held, 0o600)
        for side in sides.values():
            side.extra_env.update(same_size_names(side.user))
            side.extra_env.update(pip_env(spec, staging))

        def sealed(side):
            env = dict(side.env(), PERFMINE_REPO=side.copy)
            out = side.run(["bash", os.path.join(staging, "seal.sh"), "from-bundle", bundle, commit], cwd=side.scratch, env=env)
            if out.returncode != 0:
                raise VerifyError("cannot unbundle the base commit for the {} side: {}".format(
                    side.label, out.stdout.decode("utf-8", "replace")[-2000:]))

        say("the base commit {} from {}".format(commit[:12], spec["bundle"]))
        for side in sides.values():
            sealed(side)
        config_path, rel = os.path.join(sides["base"].copy, spec["asv_config"]), spec["asv_config"]
        if not os.path.isfile(config_path):
            raise VerifyError("the base commit has no asv config {}".format(rel))
        suite_dir = harness.load_config(config_path).benchmark_dir
        benchmark_dir = os.path.relpath(suite_dir, sides["base"].copy)
        protected = protected_pathspecs(rel, benchmark_dir)

        late = changed_after(args.repo, arrival)
        if late:
            findings.append(detect.finding("changed-after-tests", detect.HACK, late[0], None, "",
                                           "{} file{} of the repository changed after the verifier's files arrived: {}".format(
                                               len(late), "" if len(late) == 1 else "s", ", ".join(late[:5]))))
        say("the agent's change: the working tree of {} against the base".format(args.repo))
        try:
            patch, touched, dropped = agent_change(sides["working"], args.repo, commit, protected)
        except bench.BenchError as exc:
            raise Failed("change", "the working tree cannot be read: {}".format(exc))
        restore = hide(args.repo, (working_user, base_user, cal_user, ref_user))
        write_out(args.out, "agent.patch", patch)
        details["change"] = {"paths": [p for p in touched if p not in dropped], "dropped": dropped,
                             "dropped_why": "the benchmarks, the asv config, the tests and pytest's config are the base's on both sides",
                             "patch_bytes": len(patch.encode("utf-8"))}
        if dropped:
            findings.append(detect.finding("edits-dropped", detect.SUSPECT, dropped[0], None, "",
                                           "edits to what both sides keep from the base (not measured): {}".format(", ".join(dropped[:5]))))
        if not patch.strip():
            say("no change to the repository outside its tests and benchmarks: the base itself")
            details["workloads"] = unchanged_rows(spec)
            details["checks"] = {"change": "none"}
            hacks(findings)
            return True
        literals = detect.suite_literals(suite_dir)
        texts = changed_texts(sides["working"].copy, patch)
        findings.extend(detect.scan_change(patch, texts, literals))
        hacks(findings)
        stop_unprivileged()

        if "reference" in sides:
            ref = sides["reference"]
            out = ref.run(["git", "-C", ref.copy, "apply", "--whitespace=nowarn", os.path.join(ref.tmp, "expert.patch")],
                          cwd=ref.scratch, env=ref.env())
            if out.returncode != 0:
                say("the expert's patch does not apply: the reward uses validate's recorded speedups")
                del sides["reference"]
            else:
                bench.worktree_tree(ref, ref.copy, commit, protected)
        say("building the base (as uid {}), the working side (as {}){}".format(
            base_user.uid, working_user.name, " and the expert's patch (as uid {})".format(ref_user.uid) if "reference" in sides else ""))
        started = time.monotonic()
        build_side(sides["base"], script, spec, "base")
        details["timing"]["base_build"] = time.monotonic() - started
        started = time.monotonic()
        try:
            build_side(sides["working"], script, spec, "working")
        except bench.BenchError as exc:
            raise Failed("build", "the working side does not build: {}".format(exc))
        finally:
            stop_unprivileged()
        details["timing"]["working_build"] = time.monotonic() - started
        findings.extend(venv_hooks(sides["base"], sides["working"]))
        hacks(findings)
        if "reference" in sides:
            started = time.monotonic()
            try:
                build_side(sides["reference"], script, spec, "reference")
            except bench.BenchError as exc:
                say("the expert's patch does not build here ({}): the reward uses validate's recorded speedups".format(str(exc)[:300]))
                del sides["reference"]
            finally:
                stop_unprivileged()
            details["timing"]["reference_build"] = time.monotonic() - started
        os.makedirs(os.path.join(root, SIDE_DIRS["calibration"]))
        sides["calibration"] = Calibration(sides["base"], os.path.join(root, SIDE_DIRS["calibration"]), cal_user)

        p = bench.resolve_protocol({"protocol": spec["protocol"]}, argparse.Namespace(
            rounds=args.rounds, samples=None, rounds_per_process=None, clock=None, seed=None, cpus=None, budget=None))
        # what measure() measures with, whatever the task's protocol says (see there)
        p.update(interleave="batch", plan="even", calibrationRounds=None, samplesPerRound="fixed")
        if "timeBudgetSeconds" not in (spec["protocol"] or {}):
            p["timeBudgetSeconds"] = MEASURE_BUDGET_SECONDS
        started = time.monotonic()
        details["checks"] = {}
        details["checks"]["tests"] = tests_check(sides["base"], sides["working"], spec, private, staging, accounts)
        details["timing"]["tests"] = time.monotonic() - started
        timings, cold, entries, hashes = correctness(sides, spec, private, staging, accounts, config_path, p, details)
        details["timing"]["checks"] = time.monotonic() - started
        # the detector again, now that the functions the benchmarks call are known (a cache on one of them)
        entry_list = sorted({tuple(e) for found in entries.values() for e in found})
        findings[:] = [f for f in findings if f["rule"] not in ("memo", "memo-entry")] + [
            f for f in detect.scan_change(patch, texts, literals, entry_list) if f["rule"] in ("memo", "memo-entry")]

        say("measuring: {} rounds, base, working side, calibration{} interleaved, each counted from outside".format(
            p["rounds"], " and the expert's patch" if "reference" in sides else ""))
        started = time.monotonic()
        try:
            reward_workloads = [w["name"] for w in spec["workloads"] if w.get("improved")]
            m, cpus = measure(sides, config_path, suite_dir, p, private, accounts, staging, reward_workloads,
                              0 if args.rounds else REWARD_ROUNDS)
        except bench.BenchError as exc:
            raise VerifyError(str(exc))
        finally:
            stop_unprivileged()
        details["timing"]["measurement"] = time.monotonic() - started
        details["startup_cpu"] = m.get("startup")
        if os.environ.get("PERFMINE_VERIFY_KEEP"):
            with open(os.path.join(private, "measurement.json"), "w") as f:
                json.dump({k: v for k, v in m.items() if k != "logs"}, f, default=str)
        outside = credit.outside_check(m, p["clock"])
        credited_m = credit.credited_measurement(m, outside)
        verdict = stats.measurement_verdict(credited_m, p["paired"], p["adaptive"])
        report = bench.report_of(credited_m, verdict, {"protocol": p, "measurement": {
            "rounds": m["rounds"], "rounds_planned": p["rounds"], "batches": m["batches"], "seed": p["seed"],
            "cpus": sorted(cpus) if cpus else None}})
        ref_m = credit.reference_view(m)
        ref_report = bench.report_of(ref_m, stats.measurement_verdict(ref_m, p["paired"], p["adaptive"]), {}) if ref_m else None
        memo = memo_signals(report, ref_report, spec, timings, cold)
        for name in timed_values(m, hashes):
            findings.append(detect.finding("timed-values", detect.HACK, name, None, "",
                                           "returns other values while timed than when its values were checked"))
        details["measurement"] = {k: report[k] for k in ("measurement", "calibration", "threshold", "interval", "counts")}
        details["workloads"] = workload_rows(spec, report, ref_report, outside, memo, credit.against_reference(credited_m))
        for w in details["workloads"]:
            o = w["outside"] or {}
            if o.get("consistent") is False:
                findings.append(detect.finding("outside-time", detect.SUSPECT, w["name"], None, "",
                                               "its worker reports {:.0%} less work than its processes did (tolerance {:.1%}): "
                                               "credited with the outside count".format(
                                                   1 - math.exp(-o["median_log_q"]), math.exp(o["tolerance"]) - 1)))
            if (w["memo"] or {}).get("memoised"):
                findings.append(detect.finding("memoised", detect.SUSPECT, w["name"], None, "",
                                               "{:.2f}x when timed, but {}: credited with no speedup".format(
                                                   w["reported_speedup"], w["memo"]["why"])))
        hacks(findings)
        broken = [w for w in details["workloads"] if w["failure"] and w["failure"]["side"] == "working"]
        if broken:
            raise Failed("benchmarks", "{} workload{} fail{} with the change: {}".format(
                len(broken), "" if len(broken) == 1 else "s", "s" if len(broken) == 1 else "",
                ", ".join("{} ({})".format(w["name"], w["failure"]["message"][:200]) for w in broken[:5])))
        return True
    finally:
        stop_unprivileged()
        for acct in accounts.values():
            acct.kill()
        reaper.reap()
        reaper.close()
        if os.environ.get("PERFMINE_VERIFY_KEEP"):
            say("kept the sides and their logs in {} (PERFMINE_VERIFY_KEEP)".format(root))
        else:
            bench.remove_tree(root)
        restore_tmp()
        if restore:
            restore()


def detector_enforced():
    """PERFMINE_VERIFY_DETECTOR=report lists the hack detector's findings without their effect (to see
    what the verifier's other defences catch on their own); the task sets its verifier's environment,
    the agent cannot."""
    return os.environ.get("PERFMINE_VERIFY_DETECTOR", "enforce") != "report"


def hacks(findings):
    found = [f for f in findings if f["severity"] == detect.HACK]
    if found and detector_enforced():
        raise Failed("hack", "the hack detector found {} hack{}: {}".format(
            len(found), "" if len(found) == 1 else "s",
            "; ".join("{} in {}{}: {}".format(f["rule"], f["path"], ":{}".format(f["line"]) if f["line"] else "", f["message"])
                      for f in found[:5])))


def flat_reward(details, findings, correct, failure, error):
    reward = reward_of(details.get("workloads") or [], correct and not error, failure)
    reward["verifier_error"] = 1 if error else 0
    reward["detector_enforced"] = 1 if detector_enforced() else 0
    reward["hack"] = sum(1 for f in findings if f["severity"] == detect.HACK)
    reward["suspect"] = sum(1 for f in findings if f["severity"] == detect.SUSPECT)
    for f in findings:
        key = "finding_" + re.sub(r"[^a-z0-9]+", "_", f["rule"].lower())
        reward[key] = reward.get(key, 0) + 1
    rows = details.get("workloads") or []
    reward["outside_credited"] = sum(1 for w in rows if (w.get("outside") or {}).get("consistent") is False)
    reward["memoised"] = sum(1 for w in rows if (w.get("memo") or {}).get("memoised"))
    return reward


def finish(args, details, findings, correct, failure, error, started):
    """The verdict written, whatever happened before: reward.json, reward.txt, perfmine-verify.json."""
    stop_unprivileged()
    try:
        empty_out(args.out, keep=("agent.patch", "test-stdout.txt"))
    except OSError:
        pass
    reward = flat_reward(details, findings, correct, failure, error)
    details["failure"] = failure
    details["error"] = error
    details["findings"] = findings
    details["reward"] = reward
    details["timing"]["total"] = time.monotonic() - started
    try:
        text = json.dumps(harness.finite(details), indent=2, allow_nan=False, default=str) + "\n"
    except (TypeError, ValueError, RecursionError) as exc:
        text = json.dumps({"tool": "perfmine-verify", "error": "details not writable: {}".format(exc), "reward": reward}) + "\n"
    write_out(args.out, "perfmine-verify.json", text)
    write_out(args.out, "reward.json", json.dumps(reward) + "\n")
    write_out(args.out, "reward.txt", "{}\n".format(reward["reward"]))
    why = failure or error
    say("reward {:.4f}{}".format(reward["reward"], " ({}: {})".format(why["check"], why["message"][:300]) if why else ""))


def main(argv):
    if argv[:1] == ["_reward"]:
        data = json.load(sys.stdin)
        print(json.dumps(reward_of(data["workloads"], data.get("correct", True))))
        return EXIT_OK
    if argv[:1] == ["_detect"]:
        return detect.main()
    p = argparse.ArgumentParser(prog="perfmine_verify.py", description="perfmine's verifier of an agent's change (as root).")
    p.add_argument("--spec", required=True, help="verify.json: the task's base commit, files, protocol and expert speedups")
    p.add_argument("--tests", required=True, help="the directory of the trusted files (the spec's paths are relative to it)")
    p.add_argument("--repo", default="/repo", help="the agent's working tree")
    p.add_argument("--out", default="/logs/verifier", help="where the reward and the details go")
    p.add_argument("--user", default="nobody", help="the unprivileged user the code under test runs as")
    p.add_argument("--python", default=None, help="the image's interpreter (default $PERFMINE_PYTHON, else the spec's)")
    p.add_argument("--rounds", type=int, default=None, help="rounds of the measurement (default the task's protocol)")
    args = p.parse_args(argv)
    started = time.monotonic()
    details = {"tool": "perfmine-verify", "schema": 2, "formula": REWARD_FORMULA, "timing": {}}
    findings = []
    correct, failure, error = False, None, None
    if os.geteuid() != 0:
        say("error: the verifier runs as root (the code under test runs as --user)")
        return EXIT_USAGE
    signal.signal(signal.SIGTERM, bench.interrupt)
    try:
        empty_out(args.out, keep=("test-stdout.txt", "reward.txt", "reward.json"))  # test.sh's provisional verdict stays
        spec = load_spec(args.spec)
        details.update({"instance_id": spec["instance_id"], "base_commit": spec["base_commit"]})
        correct = verify(args, spec, details, findings)
    except Failed as exc:
        failure = {"check": exc.check, "message": str(exc)}
        if exc.detail is not None:
            details.setdefault("checks", {})[exc.check] = exc.detail
        say("failure ({}): {}".format(exc.check, exc))
    except KeyboardInterrupt:
        error = {"check": "verifier", "message": "interrupted (the verifier's time ran out, or it was stopped)"}
    except BaseException as exc:  # noqa: B036 - whatever breaks, the verdict is written
        error = {"check": "verifier", "message": "{}: {}".format(type(exc).__name__, str(exc)[:2000]),
                 "traceback": traceback.format_exc()[-4000:]}
        say("error: the verifier could not verify: {}: {}".format(type(exc).__name__, exc))
    try:
        finish(args, details, findings, correct, failure, error, started)
    except BaseException as exc:  # noqa: B036 - the last resort: the failure reward, as plain as it gets
        say("error: the verdict could not be written in full: {}".format(exc))
        try:
            write_out(args.out, "reward.txt", "{}\n".format(FAILURE_REWARD))
            write_out(args.out, "reward.json", json.dumps({"reward": FAILURE_REWARD, "correct": 0, "verifier_error": 1}) + "\n")
        except BaseException:  # noqa: B036
            pass
        return EXIT_VERIFIER
    return EXIT_VERIFIER if error else EXIT_OK


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
