#!/usr/bin/env python3
"""perfmine-bench: perfmine's measuring tool inside a task's environment. It lists, times and
compares the repository's asv benchmark workloads with perfmine's own harness
(perfmine_harness.py beside this file), with nothing but the image's Python: no asv, no network.

In an image it lives at /perfmine/bench/perfmine_bench.py beside perfmine_harness.py and its
helpers (perfmine_bench_stats.py: validate's verdict; perfmine_bench_interleave.py: validate's
interleaved driver; perfmine_bench_format.py: asv's human-readable values), and runs as
/usr/local/bin/perfmine-bench (`exec "${PERFMINE_PYTHON:-python3}" /perfmine/bench/perfmine_bench.py "$@"`).

    perfmine-bench list    [--bench REGEX]... [--json]
    perfmine-bench run     [--bench REGEX]... [-a KEY=VALUE]... [--json]
    perfmine-bench compare [--bench REGEX]... [--rounds N] [--base-commit SHA] [--base-source PATH]
                           [--build-script PATH] [--rebuild-working] [--json] [--out FILE] [protocol options]

Options of every command: --repo DIR (the repository, default /repo), --config PATH (the asv
config; default: task.json's asv_config under the repository, else asv.conf.json or
asv.conf.jsonc at its root, else the shallowest one in it), --python PYTHON (the working tree's
interpreter; default $PERFMINE_PYTHON, else task.json's python, else this interpreter), --task FILE
(default task.json beside this file), --bench REGEX (repeatable: the workloads whose name matches
one, as asv's --bench), --json.

task.json (written into task images by perfmine; every value can be overridden by a flag):
    {"base_commit": SHA, "asv_config": "asv.conf.json" (relative to the repository), "repo": "/repo" (optional),
     "build_script": "/perfmine/docker_build.sh", "python": "python3.11" or null,
     "protocol": {validate.harness's keys: rounds, samples, roundsPerProcess, clock, cpus,
                  warmupSeconds, interleave, plan, calibrationRounds, samplesPerRound, batchTimeoutSeconds,
                  hashSeed, seed, adaptive {looks, earlyAlphaShare, futility}; and
                  timeBudgetSeconds, env {NAME: value}, paired {validate.paired's keys}}}
    (interleave: "sample" (default) or "batch"; plan: "cost" (default: each round measures the
    workloads whose share of the time budget, by what each has cost so far, allows another round,
    every one at least the verdict's minPairs rounds) or "even" (every workload every round until
    the budget); calibrationRounds: the rounds the calibration worker takes part in, default 10,
    null every round; samplesPerRound: "by-setup" (default: sample by sample, a workload whose setup
    outweighs its sample takes fewer samples a round) or "fixed". A protocol with rounds but
    without one of these, from before the setting, means "batch", "even", every round or "fixed":
    what it was measured with. timeBudgetSeconds: 600 by
    default, validate's for its harness)

list: the workloads of the working tree's suite, named exactly as asv and validate name them
    (`bench_core.TimeIsPrime.time_is_prime(100003)`), one per line; --json: a list of
    {"name", "benchmark", "param", "params", "param_names", "unit", "type"}.

run: times the selected workloads in the working tree's environment with the harness's asv-
    compatible `run` (each sample in fresh processes, asv's rounds, repeat and number) and prints
    each benchmark as `asv run` does: name and median±(interquartile range/2) in asv's units, a
    table per parameterized benchmark. -a overrides asv attributes (rounds, repeat, number, ...).
    --json: {"workloads": [{"name", "benchmark", "params", "unit", "value", "err", "q_25",
    "q_75", "number", "repeat", "samples"}]}.

compare: the working tree, as installed in the image now, against the base commit, measured as
    validate measures a candidate, and judged by validate's verdict.
    The base commit: --base-commit, else task.json's base_commit, else HEAD of the repository
    (of --base-source when that is a directory). The base side: a copy of its tree outside the
    repository, in a temporary directory: cloned from --base-source (a git bundle, or a git
    directory or work tree) or by default from the repository's own object store (`git clone --shared --no-checkout`, then a
    detached checkout of the base commit); nothing is written into the repository. It is built
    with the task's build script into its own virtual environment (`python -m venv
    --system-site-packages`, so the image's installed dependencies serve and no network is
    needed; pip, PATH and PERFMINE_PYTHON point at the venv's python). The rewriting rule: in the
    build script, the repository's path (/repo) is replaced by the copy's wherever it stands as a
    whole path component: not preceded by a letter, digit, `_`, `.` or `/`, and not followed by a
    letter, digit, `_`, `.` or `-` (`cd /repo`, `/repo/src`, `--prefix=/repo` are rewritten;
    `/repository`, `/work/repo`, `/repo.bak` are not). After the build: the image's own
    installation must be unchanged (its site-packages listings), the packages the build installed
    must import from the copy in the venv and not from it with the image's interpreter, and the
    base workers must load no module file from the repository nor the working one any from the
    copy (outside the suite); otherwise it stops with exit 3 and says what it found.
    The benchmark suite both sides run is the base copy's (the same relative config path):
    edits to the benchmarks in the working tree are not measured. A --config outside the
    repository names a suite both sides run as given.
    Measurement: three warm harness workers as local processes (`serve`): the base (venv
    python), the working tree (the image's python) and a second base for base/base calibration,
    interleaved round by round as validate does (perfmine_bench_interleave.py), CPU time of the
    workers by default, all pinned to the last CPU; the sides take turns sample by sample
    (interleave "sample": each round a one-sample batch per side, `samples` times, each time in a
    new random order) or batch by batch ("batch"); the calibration worker takes part in the first
    calibrationRounds rounds; within the time budget the rounds are planned by each workload's
    cost (plan "cost": an expensive workload may get fewer rounds than the others, never fewer
    than the verdict's minPairs). Verdict: validate's paired verdict
    (perfmine_bench_stats.py) with validate's options. Per workload: speedup = base time /
    working time (exp of minus the median over rounds of log(working/base)); its 95% interval
    from Student's t around that median log ratio with the verdict's moderated noise and degrees
    of freedom; the minimum detectable speedup (the smallest speedup this measurement would call
    improved); the verdict (improved / worsened / unchanged / incomparable) and its reason
    (not-significant, below-floor, directions-disagree, failed-on-base, failed-on-working,
    benchmark-changed, too-few-pairs). The temporary copy and venv are removed at the end, also
    on failure and on Ctrl-C (--keep keeps them).
    --rebuild-working: the working side is built from source too, as the base: a copy of the base
    commit made into the working tree's files (the tracked ones and the untracked ones that are not
    ignored, taken with the copy's own git directory and index: the repository's .git is not
    used), built with the build script into a venv of its own, checked the same way, and its venv
    python runs the working worker. What a verifier measures; needed after changing compiled code
    or build files. The report's build {working_seconds} says how long it took.
    The sides' processes can run as other users (Side(user=RunAs(...)), perfmine_verify.py): a
    verifier runs the base and the code under test as two unprivileged users of their own.
    Besides the samples the workers report, the driver records per batch its wall time and the
    worker processes' CPU time by the kernel's count (`walls`, `cpus`), for a check from outside.
    --json (and --out FILE, which writes it whatever is printed) gives the report with the keys
    tool, schema, command, repo, base_commit, config, suite, pythons, build {script, seconds},
    measurement {seconds, rounds, rounds_planned, batches, budget_exhausted, seed, cpus,
    workers}, protocol, calibration {calibrated, pairs, bias_allowance, false_positives
    {compared, flagged, rate}}, threshold, interval {level, method}, counts, improved, worsened,
    workloads [{name, benchmark, params, unit, verdict, reason, speedup, interval, mds,
    base_value, working_value, pairs, faster_pairs, slower_pairs, p_value, significant,
    settled_at, failure {side, status, message}, median_log, standard_error, df (the verdict's log
    ratio of working over base, its standard error and degrees of freedom)}].

Exit codes: 0 ok; 2 usage (bad flags, no such config, no workload matches); 3 the base could not
be made (copy, venv, build script, isolation checks); 4 the measurement failed (a suite that
cannot be imported, workers that cannot start); 130 interrupted.

Python 3.8+, standard library only.
"""

import argparse
import json
import math
import os
import pwd
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import perfmine_bench_format as fmt  # noqa: E402
import perfmine_bench_stats as stats  # noqa: E402
import perfmine_harness as harness  # noqa: E402
from perfmine_bench_account import no_new_privs  # noqa: E402
from perfmine_bench_interleave import LocalWorker, measure_interleaved  # noqa: E402

HARNESS = os.path.join(HERE, "perfmine_harness.py")
EXIT_OK, EXIT_USAGE, EXIT_BUILD, EXIT_MEASURE, EXIT_INTERRUPTED = 0, 2, 3, 4, 130
DEFAULT_REPO = "/repo"
DEFAULT_BUILD_SCRIPT = "/perfmine/docker_build.sh"
THREAD_ENV = {n: "1" for n in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMEXPR_NUM_THREADS", "VECLIB_MAXIMUM_THREADS")}
DEFAULT_PROTOCOL = {
    "rounds": 20, "samples": 5, "roundsPerProcess": 1, "clock": "cpu", "cpus": "auto", "warmupSeconds": 0.02,
    "batchTimeoutSeconds": None, "hashSeed": "0", "seed": None, "mode": "alternate", "interleave": "sample",
    "plan": "cost", "calibrationRounds": 10, "samplesPerRound": "by-setup",
    "adaptive": stats.DEFAULT_ADAPTIVE, "paired": stats.DEFAULT_PAIRED, "timeBudgetSeconds": 600, "env": THREAD_ENV,
}
#: What a task's protocol recorded before each setting existed was measured with (validate's
#: protocol then): batch by batch, every workload every round, the calibration in every round.
BEFORE_SETTING = {"interleave": "batch", "plan": "even", "calibrationRounds": None, "samplesPerRound": "fixed"}
INTERVAL_METHOD = "Student t around the median log ratio over rounds, with the verdict's moderated noise and degrees of freedom"
OUTPUT_REASON = {"failed-on-expert": "failed-on-working"}


class BenchError(Exception):
    def __init__(self, code, message):
        Exception.__init__(self, message)
        self.code = code


def say(message):
    sys.stderr.write("[perfmine-bench] " + message.rstrip("\n") + "\n")
    sys.stderr.flush()


def child_env(extra=None):
    env = dict(os.environ)
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # nothing is written beside the sources in the repository
    env.update(extra or {})
    return env


def shown(config, repo):
    """The config as the user knows it: relative to the repository when it lies in it."""
    return os.path.relpath(os.path.realpath(config), os.path.realpath(repo)) if inside(config, repo) else config


def inside(path, root):
    path, root = os.path.realpath(path), os.path.realpath(root)
    return path == root or path.startswith(root.rstrip("/") + "/")


# ---------------------------------------------------------------- task.json, config, interpreter


def load_task(path):
    if path is None:
        path = os.path.join(HERE, "task.json")
        if not os.path.isfile(path):
            return {}
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError) as exc:
        raise BenchError(EXIT_USAGE, "cannot read the task file {}: {}".format(path, exc))
    if not isinstance(data, dict):
        raise BenchError(EXIT_USAGE, "the task file {} must hold a JSON object".format(path))
    return data


def shallowest_config(root):
    """The asv config nearest the root (pickAsvConfigPath's order: depth, length, name)."""
    found = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in ("node_modules", "build", "dist")]
        found.extend(os.path.relpath(os.path.join(folder, f), root) for f in files if f in ("asv.conf.json", "asv.conf.jsonc"))
    found.sort(key=lambda p: (p.count("/"), len(p), p))
    return found[0] if found else None


def resolve_config(args, task, repo):
    """(absolute path, path relative to the repository or None when it lies outside it)."""
    if args.config:
        path = os.path.abspath(args.config)
        rel = os.path.relpath(os.path.realpath(path), os.path.realpath(repo)) if inside(path, repo) else None
    elif task.get("asv_config"):
        rel = task["asv_config"]
        path = os.path.join(repo, rel)
    else:
        rel = next((n for n in ("asv.conf.json", "asv.conf.jsonc") if os.path.isfile(os.path.join(repo, n))), None)
        rel = rel or shallowest_config(repo)
        if rel is None:
            raise BenchError(EXIT_USAGE, "no asv config (asv.conf.json) in {}; pass --config PATH".format(repo))
        path = os.path.join(repo, rel)
    if not os.path.isfile(path):
        raise BenchError(EXIT_USAGE, "the asv config {} does not exist; pass --config PATH".format(path))
    return path, rel


def image_python(args, task):
    name = args.python or os.environ.get("PERFMINE_PYTHON") or task.get("python") or sys.executable
    found = name if os.sep in name else shutil.which(name)
    if not found or not os.access(found, os.X_OK):
        raise BenchError(EXIT_USAGE, "no Python interpreter {}; pass --python".format(name))
    return os.path.abspath(found)


def serve_argv(python, config, bench, harness_path=None):
    argv = [python, "-u", harness_path or HARNESS, "--config", config, "serve"]
    for regex in bench:
        argv += ["--bench", regex]
    return argv


def check_regexes(bench):
    try:
        harness.check_regexes(bench)
    except harness.UsageError as exc:
        raise BenchError(EXIT_USAGE, str(exc))


def fatal_code(start, bench):
    if start.get("reason") == "bad-config" or (start.get("reason") == "no-benchmarks" and bench):
        return EXIT_USAGE
    return EXIT_MEASURE


# ---------------------------------------------------------------- list


def param_values(params, index):
    """The parameter values (repr strings) of combination `index` in itertools.product order."""
    out = []
    rest = index
    for values in reversed(params or []):
        out.insert(0, values[rest % len(values)] if values else "")
        rest //= len(values) if values else 1
    return out


def cmd_list(args, task):
    repo = os.path.abspath(args.repo)
    config, _ = resolve_config(args, task, repo)
    check_regexes(args.bench)
    python = image_python(args, task)
    scratch = tempfile.mkdtemp(prefix="perfmine-bench-list-")
    try:
        worker = LocalWorker(serve_argv(python, config, args.bench), child_env({"TMPDIR": scratch}), scratch,
                             os.path.join(scratch, "worker.log"))
        worker.close()
        start = worker.start
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if start.get("event") != "ready":
        raise BenchError(fatal_code(start, args.bench), "{}: {}".format(start.get("reason"), start.get("message")))
    items = []
    for ref in start["workloads"]:
        entry = start["benchmarks"][ref["benchmark"]]
        items.append({
            "name": ref["name"], "benchmark": ref["benchmark"], "param": ref["param"],
            "params": param_values(entry.get("params"), ref["param"]), "param_names": entry.get("param_names") or [],
            "unit": entry.get("unit"), "type": entry.get("type"),
        })
    if args.json:
        print(json.dumps(items, indent=2))
    else:
        for item in items:
            print(item["name"])
        say("{} workloads of {} benchmarks ({} in {}, {})".format(
            len(items), len({i["benchmark"] for i in items}), shown(config, repo), repo, python))
    return EXIT_OK


# ---------------------------------------------------------------- run


def read_results(out_dir, machine):
    folder = os.path.join(out_dir, machine)
    files = [f for f in os.listdir(folder) if f.endswith(".json") and f != "machine.json"] if os.path.isdir(folder) else []
    if not files:
        return None
    results = harness.Results({}, {}, "", None, "", "", {})
    results.load_rows(os.path.join(folder, files[0]))
    return results


def cmd_run(args, task):
    repo = os.path.abspath(args.repo)
    config, _ = resolve_config(args, task, repo)
    check_regexes(args.bench)
    python = image_python(args, task)
    out_dir = tempfile.mkdtemp(prefix="perfmine-bench-run-")
    machine = "perfmine-bench"
    try:
        argv = [python, "-u", HARNESS, "--config", config, "run", "--out-dir", out_dir, "--commit", "HEAD",
                "--machine", machine, "--env-name", "working"]
        for regex in args.bench:
            argv += ["--bench", regex]
        for attribute in args.attribute:
            argv += ["-a", attribute]
        say("timing the working tree's workloads with {} ({} in {})".format(python, shown(config, repo), repo))
        code = subprocess.call(argv, stdout=sys.stderr, cwd=out_dir, env=child_env({"TMPDIR": out_dir}))
        if code == 4 and args.bench:
            raise BenchError(EXIT_USAGE, "no workload matches --bench {}".format(" ".join(args.bench)))
        if code not in (0, 2):
            raise BenchError(EXIT_MEASURE, "the harness could not run the suite (exit {})".format(code))
        with open(os.path.join(out_dir, "benchmarks.json"), encoding="utf-8") as f:
            entries = json.load(f)
        results = read_results(out_dir, machine)
    finally:
        shutil.rmtree(out_dir, ignore_errors=True)
    if results is None:
        raise BenchError(EXIT_MEASURE, "the harness wrote no results")
    workloads, lines = [], []
    for name in sorted(results.results):
        entry = entries.get(name)
        if not isinstance(entry, dict):
            continue
        values = results.results[name] or [None]
        per_stats = results.stats.get(name) or [None] * len(values)
        samples = results.samples.get(name) or [None] * len(values)
        errs = []
        for j, value in enumerate(values):
            s = per_stats[j] if j < len(per_stats) else None
            err = (s["q_75"] - s["q_25"]) / 2 if s and "q_25" in s and "q_75" in s else None
            errs.append(err)
            workloads.append({
                "name": harness.workload_name(name, param_values(entry.get("params"), j)) if entry.get("params") else name,
                "benchmark": name, "params": param_values(entry.get("params"), j), "unit": entry.get("unit"),
                "value": value, "err": err, "q_25": s.get("q_25") if s else None, "q_75": s.get("q_75") if s else None,
                "number": s.get("number") if s else None, "repeat": s.get("repeat") if s else None,
                "samples": samples[j] if j < len(samples) else None,
            })
        lines.extend(fmt.benchmark_lines(entry, values, errs))
    if args.json:
        print(json.dumps(harness.finite({"python": python, "config": config, "workloads": workloads}), indent=2, allow_nan=False))
        return EXIT_OK
    width = max((len(n) for n, _ in lines if n is not None), default=0)
    for name, text in lines:
        print(text if name is None else "{}  {}".format(name.ljust(width), text))
    return EXIT_OK


# ---------------------------------------------------------------- compare: the base side


def git(args, cwd=None, check=True):
    env = child_env({"GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0"})
    out = subprocess.run(["git", "-c", "safe.directory=*"] + args, cwd=cwd, env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    if check and out.returncode != 0:
        raise BenchError(EXIT_BUILD, "git {} failed: {}".format(" ".join(args), out.stderr.decode("utf-8", "replace").strip()))
    return out.stdout.decode("utf-8", "replace").strip() if out.returncode == 0 else None


def base_commit_of(args, task, repo):
    commit = args.base_commit or task.get("base_commit")
    if commit:
        return commit, "given" if args.base_commit else "task.json"
    source = args.base_source if args.base_source and os.path.isdir(args.base_source) else repo
    head = git(["-C", source, "rev-parse", "--verify", "HEAD^{commit}"], check=False)
    if not head:
        raise BenchError(EXIT_USAGE, "no base commit: pass --base-commit SHA")
    return head, "HEAD of {}".format(source)


def make_copy(source, commit, dest):
    """The base commit's tree at dest, cloned from a bundle or a git directory (nothing written there)."""
    if os.path.isfile(source):
        git(["clone", "--quiet", "--no-checkout", source, dest])
    else:
        git(["clone", "--quiet", "--shared", "--no-checkout", source, dest])
    full = git(["-C", dest, "rev-parse", "--verify", "--quiet", commit + "^{commit}"], check=False)
    if not full:
        raise BenchError(EXIT_BUILD, "the base commit {} is not in {}".format(commit, source))
    git(["-C", dest, "-c", "advice.detachedHead=false", "checkout", "--quiet", "--detach", full])
    return full


REPO_WORD = r"(?<![\w./]){}(?![\w.-])"


def rewrite_script(text, repo, copy):
    """The build script with the repository's path replaced by the copy's (see the module docstring)."""
    return re.sub(REPO_WORD.format(re.escape(repo.rstrip("/"))), lambda m: copy, text)


SITE_DIRS = "import json, site; print(json.dumps(list(site.getsitepackages()) + [site.getusersitepackages()]))"
IMPORT_CHECK = r"""
import importlib, json, os, sys
out = {}
for name in sys.argv[1:]:
    try:
        module = importlib.import_module(name)
    except BaseException as exc:
        out[name] = {"error": type(exc).__name__ + ": " + str(exc)[:200]}
        continue
    where = getattr(module, "__file__", None)
    paths = [where] if where else list(getattr(module, "__path__", None) or [])
    out[name] = {"paths": [os.path.realpath(p) for p in paths]}
print(json.dumps(out))
"""


def python_json(python, code, argv=(), cwd=None, env=None, preexec=None, timeout=600):
    """The last line of a small program's output, as JSON. Its output goes to files, not pipes, and
    only the program itself is waited for: a process it leaves behind holding its output cannot
    keep this waiting; past the time limit its process group is killed."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen([python, "-c", code] + list(argv), cwd=cwd, env=env or child_env(), stdout=out, stderr=err,
                                stdin=subprocess.DEVNULL, preexec_fn=preexec, start_new_session=True)
        try:
            code_ = proc.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            raise BenchError(EXIT_BUILD, "{} did not finish within {:.0f} s".format(python, timeout))
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    if code_ != 0:
        raise BenchError(EXIT_BUILD, "{} failed: {}".format(python, stderr.decode("utf-8", "replace")[-2000:]))
    try:
        return json.loads(stdout.decode("utf-8").strip().splitlines()[-1])
    except (ValueError, IndexError) as exc:
        raise BenchError(EXIT_BUILD, "{} wrote no JSON ({}): {}".format(python, exc, stdout[-500:].decode("utf-8", "replace")))


def site_listing(dirs):
    """Top-level entries of the site directories: name -> file size and mtime (directories: None)."""
    listing = {}
    for folder in dirs:
        if not os.path.isdir(folder):
            continue
        for entry in os.listdir(folder):
            if entry == "__pycache__":
                continue
            path = os.path.join(folder, entry)
            st = os.lstat(path)
            listing[path] = None if os.path.isdir(path) else (st.st_size, st.st_mtime_ns)
    return listing


def installed_names(site_dirs):
    """Top-level import names of what was installed into the venv's site directories."""
    names = set()
    for folder in site_dirs:
        if not os.path.isdir(folder):
            continue
        for entry in os.listdir(folder):
            if not entry.endswith((".dist-info", ".egg-info", ".egg-link")):
                continue
            top = os.path.join(folder, entry, "top_level.txt")
            if os.path.isfile(top):
                with open(top, encoding="utf-8", errors="replace") as f:
                    names.update(line.strip() for line in f if line.strip() and "/" not in line)
            else:
                names.add(re.sub(r"[-.]", "_", entry.split("-")[0].split(".egg")[0]))
    return sorted(n for n in names if re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", n))


class RunAs:
    """Another user the processes of a side run as (the caller is root): a verifier builds and runs
    the code under test as an unprivileged user, so that it can change nothing of the base side,
    the image or the verifier."""

    def __init__(self, name):
        if str(name).isdigit():  # a bare uid (its own group), with or without a passwd entry
            self.uid = self.gid = int(name)
            try:
                self.name = pwd.getpwuid(self.uid).pw_name
            except KeyError:
                self.name = str(self.uid)
            return
        try:
            entry = pwd.getpwnam(name)
        except KeyError:
            raise BenchError(EXIT_USAGE, "no user {}".format(name))
        self.name, self.uid, self.gid = entry.pw_name, entry.pw_uid, entry.pw_gid

    @staticmethod
    def unused(start=61000):
        """A uid no account has, for a user of its own (`RunAs.unused()`)."""
        uid = start
        while True:
            try:
                pwd.getpwuid(uid)
            except KeyError:
                return RunAs(str(uid))
            uid += 1

    def preexec(self):
        os.setgroups([])
        os.setgid(self.gid)
        os.setuid(self.uid)
        no_new_privs()  # a setuid program gives the side no other user

    def own(self, path):
        """path and everything under it belong to the user (called before any of its processes runs)."""
        for folder, dirs, files in os.walk(path):
            os.lchown(folder, self.uid, self.gid)
            for name in dirs + files:
                os.lchown(os.path.join(folder, name), self.uid, self.gid)


class Side:
    """One side built from source in a temporary directory: the copy (`repo/`), its venv, its
    build. The base side of `compare`; with `--rebuild-working` (and in a verifier) the working tree
    too. `user` (a RunAs): every process of the side runs as that user, and the directory is
    theirs; what this process writes (the rewritten build script, the logs) goes to `private`, a
    directory the user cannot write."""

    def __init__(self, tmp, repo, python, label="base", user=None, private=None):
        self.tmp = tmp
        self.repo = repo
        self.label = label
        self.image_python = python
        self.user = user
        self.private = private or tmp
        self.copy = os.path.join(tmp, "repo")
        self.venv = os.path.join(tmp, "venv")
        self.python = os.path.join(self.venv, "bin", "python")
        self.scratch = os.path.join(tmp, "work")
        # the temporary files of the build and the workers (pip's, the harness's) go with the rest
        self.temp = os.path.join(tmp, "tmp")
        self.home = os.path.join(tmp, "home")
        for folder in (self.scratch, self.temp) + ((self.home,) if user else ()):
            os.makedirs(folder)
        if user:
            user.own(tmp)
        self.preexec = user.preexec if user else None
        #: more variables of every process of the side (a verifier's PIP_CONSTRAINT)
        self.extra_env = {}

    def env(self):
        path = os.path.join(self.venv, "bin") + os.pathsep + os.environ.get("PATH", "")
        extra = dict(self.extra_env, PATH=path, VIRTUAL_ENV=self.venv, PERFMINE_PYTHON=self.python, TMPDIR=self.temp)
        if self.user:
            extra.update({"HOME": self.home, "USER": self.user.name, "LOGNAME": self.user.name, "PYTHONNOUSERSITE": "1",
                          "PIP_NO_CACHE_DIR": "1", "GIT_AUTHOR_NAME": "perfmine", "GIT_AUTHOR_EMAIL": "perfmine@localhost",
                          "GIT_COMMITTER_NAME": "perfmine", "GIT_COMMITTER_EMAIL": "perfmine@localhost"})
            extra.update(self.extra_env)  # a verifier's names of one length for every side
        return child_env(extra)

    def run(self, argv, **kwargs):
        """A process of this side (as its user), its output captured."""
        return subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, preexec_fn=self.preexec, **kwargs)

    def make_venv(self):
        out = self.run([self.image_python, "-m", "venv", "--system-site-packages", "--without-pip", self.venv],
                       env=self.env(), cwd=self.scratch)
        if out.returncode != 0:
            raise BenchError(EXIT_BUILD, "cannot make the {}'s virtual environment: {}".format(
                self.label, out.stdout.decode("utf-8", "replace")[-2000:]))
        # the image's pip (importable through the system site) installs into the venv when run by its python
        version = "{}.{}".format(*python_json(self.python, "import json, sys; print(json.dumps(sys.version_info[:2]))",
                                              cwd=self.scratch, env=self.env(), preexec=self.preexec))
        script = '#!/bin/sh\nexec "{}" -m pip "$@"\n'.format(self.python)
        for name in ("pip", "pip3", "pip" + version):
            path = os.path.join(self.venv, "bin", name)
            out = self.run(["sh", "-c", 'printf "%s" "$1" > "$2" && chmod 755 "$2"', "sh", script, path], cwd=self.scratch,
                           env=self.env())
            if out.returncode != 0:
                raise BenchError(EXIT_BUILD, "cannot write {}: {}".format(path, out.stdout.decode("utf-8", "replace")))

    def build(self, script_path, timeout):
        try:
            with open(script_path, encoding="utf-8") as f:
                text = f.read()
        except OSError as exc:
            raise BenchError(EXIT_USAGE, "cannot read the build script {}: {}".format(script_path, exc))
        script = os.path.join(self.private, "docker_build-{}.sh".format(self.label))
        with open(script, "w", encoding="utf-8") as f:
            f.write(rewrite_script(text, self.repo, self.copy))
        os.chmod(script, 0o644)
        dirs = python_json(self.image_python, SITE_DIRS, cwd=self.scratch, env=self.env(), preexec=self.preexec)
        before = site_listing(dirs)
        log_path = os.path.join(self.private, "build-{}.log".format(self.label))
        with open(log_path, "wb") as log:
            proc = subprocess.Popen(["bash", script], cwd=self.copy, env=self.env(), stdout=log, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, start_new_session=True, preexec_fn=self.preexec)
            try:
                code = proc.wait(timeout)
            except subprocess.TimeoutExpired:
                code = None
            finally:  # a timeout or an interrupt: nothing of the build is left running
                if proc.poll() is None:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()
        with open(log_path, "rb") as f:
            self.build_log_tail = f.read()[-4000:].decode("utf-8", "replace")
        if code != 0:
            why = "timed out after {:.0f} s".format(timeout) if code is None else "exited {}".format(code)
            raise BenchError(EXIT_BUILD, "the build script {} {} on the {} copy:\n{}".format(
                script_path, why, self.label, self.build_log_tail))
        after = site_listing(dirs)
        changed = sorted(set(before) ^ set(after) | {p for p in before if p in after and before[p] != after[p]})
        if changed:
            raise BenchError(EXIT_BUILD, "the build script changed the image's own Python installation, which this tool "
                             "cannot undo: {}".format(", ".join(changed[:10])))

    def check_imports(self, others=()):
        """The packages the build installed import from this copy in the venv, not with the image's
        python; nor from any of `others` (the other side's directories)."""
        dirs = python_json(self.python, "import json, sysconfig; p = sysconfig.get_paths(); print(json.dumps([p['purelib'], p['platlib']]))",
                           cwd=self.scratch, env=self.env(), preexec=self.preexec)
        names = installed_names(sorted(set(dirs)))
        if not names:
            return []
        in_venv = python_json(self.python, IMPORT_CHECK, names, cwd=self.scratch, env=self.env(), preexec=self.preexec)
        in_image = python_json(self.image_python, IMPORT_CHECK, names, cwd=self.scratch, env=self.env(), preexec=self.preexec)
        problems = []
        for name in names:
            paths = (in_venv.get(name) or {}).get("paths")
            if paths is None:
                continue
            if not all(inside(p, self.tmp) for p in paths):
                problems.append("in the {}'s venv, {} imports from {}, not from the {} copy".format(
                    self.label, name, ", ".join(paths), self.label))
            there = (in_image.get(name) or {}).get("paths") or []
            if any(inside(p, self.tmp) for p in there):
                problems.append("the image's {} imports {} from the {} copy ({})".format(
                    self.image_python, name, self.label, ", ".join(there)))
            elif there and not any(inside(p, self.repo) for p in there) and self.label == "base":
                say("note: {} imports {} from {}, not from {}: edits to the working tree count only once it is "
                    "reinstalled".format(self.image_python, name, ", ".join(there), self.repo))
        if problems:
            raise BenchError(EXIT_BUILD, "the {} is not isolated: {}".format(self.label, "; ".join(problems)))
        return names


Base = Side


class Installed:
    """The working tree as installed in the image now: `compare`'s default working side."""

    label = "working"

    def __init__(self, python, scratch, temp):
        self.python = python
        self.scratch = scratch
        self.temp = temp
        self.preexec = None
        self.tmp = None

    def env(self):
        return child_env({"TMPDIR": self.temp})


GIT_SAFE = ["-c", "safe.directory=*", "-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null",
            "-c", "core.untrackedCache=false", "-c", "diff.external=", "-c", "core.pager=cat"]


def worktree_tree(side, worktree, commit, protected=()):
    """The working tree `worktree` (its tracked files and the untracked ones that are not ignored)
    as a tree of the side's copy, made with the copy's own git directory and a separate index (the
    worktree's own .git is never read), the `protected` pathspecs as they are at `commit`. Then
    the copy's files become that tree. Returns (tree, patch against commit, every path the working
    tree changes, protected or not). Run as the side's user."""
    git_dir = os.path.join(side.copy, ".git")
    index = os.path.join(side.temp, "worktree.index")
    env = dict(side.env(), GIT_INDEX_FILE=index, GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL="/dev/null",
               GIT_TERMINAL_PROMPT="0", GIT_OPTIONAL_LOCKS="0")
    base = ["git"] + GIT_SAFE + ["--git-dir", git_dir, "--work-tree", worktree]

    def run(args, cwd=worktree, environ=env):
        out = side.run(base + args, cwd=cwd, env=environ)
        if out.returncode != 0:
            raise BenchError(EXIT_BUILD, "git {} failed on {}: {}".format(
                args[0], worktree, out.stdout.decode("utf-8", "replace").strip()[-2000:]))
        return out.stdout.decode("utf-8", "replace").strip()

    run(["read-tree", commit])
    run(["add", "--all", "--", "."])
    touched = [line for line in run(["diff", "--cached", "--name-only", "--no-renames", commit]).splitlines() if line]
    if protected:
        run(["reset", "--quiet", commit, "--"] + list(protected))
    tree = run(["write-tree"]).splitlines()[-1]
    out = side.run(["git"] + GIT_SAFE + ["--git-dir", git_dir, "diff", "--binary", "--no-color", "--no-ext-diff",
                                         "--no-textconv", commit, tree], cwd=side.scratch, env=env)
    if out.returncode != 0:
        raise BenchError(EXIT_BUILD, "git diff failed: " + out.stdout.decode("utf-8", "replace")[-2000:])
    patch = out.stdout.decode("utf-8", "replace")
    plain = dict(env)
    del plain["GIT_INDEX_FILE"]
    done = side.run(["git"] + GIT_SAFE + ["-C", side.copy, "read-tree", "-u", "--reset", tree], cwd=side.scratch, env=plain)
    if done.returncode != 0:
        raise BenchError(EXIT_BUILD, "cannot check the working tree out in the {} copy: {}".format(
            side.label, done.stdout.decode("utf-8", "replace")[-2000:]))
    return tree, patch, touched


def check_loaded(workers, base, working, suite_dir):
    """The base workers load nothing from the working tree (the repository, or the working side's
    copy); the working one nothing from the base copy but the suite."""
    problems = []
    theirs = [base.repo] + ([working.tmp] if getattr(working, "tmp", None) else [])
    for side in ("base", "calibration", "expert"):
        worker = workers.get(side)
        files = worker.modules() if worker else None
        if files is None:
            continue
        if side == "expert":
            bad = [f for f in files if inside(f, base.tmp) and not inside(f, suite_dir)]
            what = "the working tree's worker loaded files of the base copy"
        else:
            bad = [f for f in files if any(inside(f, root) for root in theirs)]
            what = "the base's worker loaded files of the working tree"
        if bad:
            problems.append("{}: {}".format(what, ", ".join(sorted(bad)[:5])))
    if problems:
        raise BenchError(EXIT_BUILD, "the base is not isolated from the working tree: " + "; ".join(problems))


# ---------------------------------------------------------------- compare: protocol and measurement


def resolve_protocol(task, args):
    given = dict(task.get("protocol") or {})
    unknown = sorted(set(given) - set(DEFAULT_PROTOCOL))
    if unknown:
        say("task.json protocol: ignoring unknown keys {}".format(", ".join(unknown)))
    p = {k: given.get(k, v) for k, v in DEFAULT_PROTOCOL.items()}
    for key, before in BEFORE_SETTING.items():
        if "rounds" in given and key not in given:
            p[key] = before  # a task's protocol from before the setting: what it was measured with
    p["adaptive"] = dict(stats.DEFAULT_ADAPTIVE, **(given.get("adaptive") or {}))
    p["paired"] = dict(stats.DEFAULT_PAIRED, **(given.get("paired") or {}))
    for flag, key in (("rounds", "rounds"), ("samples", "samples"), ("rounds_per_process", "roundsPerProcess"),
                      ("clock", "clock"), ("seed", "seed"), ("cpus", "cpus"), ("budget", "timeBudgetSeconds")):
        if getattr(args, flag) is not None:
            p[key] = getattr(args, flag)
    if p["mode"] != "alternate":
        say("protocol mode {!r}: perfmine-bench measures in alternate mode only".format(p["mode"]))
        p["mode"] = "alternate"
    if not isinstance(p["rounds"], int) or p["rounds"] < 3:
        raise BenchError(EXIT_USAGE, "rounds must be at least 3 (the verdict needs {} pairs)".format(p["paired"]["minPairs"]))
    if p["clock"] not in ("cpu", "wall"):
        raise BenchError(EXIT_USAGE, "clock must be cpu or wall")
    if p["interleave"] not in ("sample", "batch"):
        raise BenchError(EXIT_USAGE, "interleave must be sample or batch, not {!r}".format(p["interleave"]))
    if p["plan"] not in ("cost", "even"):
        raise BenchError(EXIT_USAGE, "plan must be cost or even, not {!r}".format(p["plan"]))
    if p["samplesPerRound"] not in ("by-setup", "fixed"):
        raise BenchError(EXIT_USAGE, "samplesPerRound must be by-setup or fixed, not {!r}".format(p["samplesPerRound"]))
    bound = p["calibrationRounds"]
    if bound is not None and (not isinstance(bound, int) or isinstance(bound, bool) or bound < 3):
        raise BenchError(EXIT_USAGE, "calibrationRounds must be null (every round) or at least 3 (the calibration needs "
                         "pairs), not {!r}".format(bound))
    p["adaptive"]["looks"] = [n for n in p["adaptive"]["looks"] if n < p["rounds"]]
    if p["seed"] is None:
        p["seed"] = int.from_bytes(os.urandom(4), "big") % (2 ** 31)
    return p


def worker_cpus(setting):
    """validate's cpus for alternate mode: every worker on the last CPU (auto), none, or a list."""
    available = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    if setting == "none" or not available:
        return None
    if setting == "auto":
        return {available[-1]} if len(available) >= 2 else None
    cpus = set()
    for part in str(setting).split(","):
        lo, _, hi = part.partition("-")
        cpus.update(range(int(lo), int(hi or lo) + 1))
    return cpus


def measure(base, working, config, suite_dir, bench, p, log_dir=None):
    """working: a Side (rebuilt) or Installed (the image's interpreter on the repository)."""
    cpus = worker_cpus(p["cpus"])
    env_common = dict(p["env"], PYTHONHASHSEED=str(p["hashSeed"]))
    log_dir = log_dir or base.private

    def open_side(side):
        of = working if side == "expert" else base
        env = dict(of.env(), **env_common)
        worker = LocalWorker(serve_argv(of.python, config, bench), env, of.scratch,
                             os.path.join(log_dir, "worker-{}.log".format(side)), cpus, preexec=of.preexec)
        if worker.start.get("event") != "ready" and side != "calibration":
            # validate goes on without a calibration worker, never without these two
            worker.close()
            who = "working tree" if side == "expert" else side
            raise BenchError(fatal_code(worker.start, bench), "the {} worker could not load the suite: {}: {}".format(
                who, worker.start.get("reason"), worker.start.get("message")))
        return worker

    settings = {
        "rounds": p["rounds"], "roundsPerProcess": p["roundsPerProcess"], "samples": p["samples"], "calibration": True,
        "seed": p["seed"], "budgetSeconds": p["timeBudgetSeconds"], "batchTimeoutSeconds": p["batchTimeoutSeconds"],
        "clock": p["clock"], "warmupSeconds": p["warmupSeconds"], "looks": p["adaptive"]["looks"],
        "interleave": p["interleave"], "plan": p["plan"], "calibrationRounds": p["calibrationRounds"],
        "samplesPerRound": p["samplesPerRound"], "minRounds": p["paired"]["minPairs"],
    }

    def on_round(done, elapsed, measuring):
        say("round {}/{}: {} workloads measured, {:.1f} s".format(done, p["rounds"], measuring, elapsed))

    m = measure_interleaved(
        open_side, settings, on_round=on_round, after_open=lambda workers: check_loaded(workers, base, working, suite_dir),
        settle=lambda snapshot: stats.settlements(snapshot, p["paired"], p["adaptive"]),
    )
    return m, cpus


def failure_of(w):
    for side, label in (("base", "base"), ("expert", "working")):
        f = w[side]["failure"]
        if f and f["status"] != "missing":
            return {"side": label, "status": f["status"], "message": f["message"].split("\n")[0][:300]}
    return None


def report_of(m, verdict, info):
    by_name = {w["ref"]["name"]: w for w in m["workloads"]}
    benchmarks = m["base"]["benchmarks"]
    rows = []
    for v in verdict["workloads"]:
        w = by_name[v["name"]]
        entry = benchmarks.get(w["ref"]["benchmark"], {})
        median_log = v["medianLog"]
        rows.append({
            "name": v["name"], "benchmark": w["ref"]["benchmark"],
            "params": param_values(entry.get("params"), w["ref"]["param"]), "unit": entry.get("unit"),
            "verdict": v["change"], "reason": OUTPUT_REASON.get(v["reason"], v["reason"]),
            "speedup": None if median_log is None else math.exp(-median_log),
            "interval": stats.speedup_interval(v), "mds": v["mds"],
            "base_value": v["baseMedian"], "working_value": v["expertMedian"],
            "pairs": v["usablePairs"], "faster_pairs": v["fasterPairs"], "slower_pairs": v["slowerPairs"],
            "p_value": v["pValue"], "significant": v["significant"],
            "settled_at": w["settled"]["round"] if w["settled"] else None, "failure": failure_of(w),
            "median_log": median_log, "standard_error": v.get("standardError"), "df": v.get("df"),
        })
    cal = verdict["calibration"]
    report = dict(info)
    report.update({
        "calibration": {
            "calibrated": cal["calibrated"], "pairs": cal["pairs"], "bias_allowance": math.exp(cal["biasLog"]),
            "false_positives": {k: cal["falsePositives"][k] for k in ("compared", "flagged", "rate")},
        },
        "threshold": verdict["threshold"],
        "interval": {"level": 0.95, "method": INTERVAL_METHOD},
        "counts": verdict["counts"],
        "improved": [r["name"] for r in rows if r["verdict"] == "improved"],
        "worsened": [r["name"] for r in rows if r["verdict"] == "worsened"],
        "workloads": rows,
    })
    return report


def compare_text(r):
    m = r["measurement"]
    lines = [
        "perfmine-bench compare: the working tree of {} ({}) against the base commit {}".format(
            r["repo"], "as installed for {}".format(r["pythons"]["working"]) if r["build"].get("working_seconds") is None
            else "rebuilt in {}".format(fmt.seconds(r["build"]["working_seconds"])), r["base_commit"][:12]),
        "  benchmark suite: {}".format(r["suite"]["note"]),
        ("  working tree: the code {} imports now (after changing compiled code or build files, rebuild it with the "
         "task's build script first, or pass --rebuild-working)".format(r["pythons"]["working"])
         if r["build"].get("working_seconds") is None else
         "  working tree: a copy of its files (tracked, and untracked ones that are not ignored) built with the "
         "task's build script into its own venv"),
        "  base built in {}; measured in {}: {} rounds of {} samples, 3 workers (base, working tree, base again for "
        "calibration) interleaved {}, {} clock, seed {}{}".format(
            fmt.seconds(r["build"]["seconds"]), fmt.seconds(m["seconds"]), m["rounds"], r["protocol"]["samples"],
            "sample by sample" if r["protocol"].get("interleave") == "sample" else "batch by batch",
            r["protocol"]["clock"], m["seed"], ", time budget reached" if m["budget_exhausted"] else ""),
        "",
    ]
    rows = [["verdict", "speedup", "95% interval", "MDS", "base", "working", "workload"]]
    for w in r["workloads"]:
        interval = "{}-{}".format(fmt.ratio(w["interval"][0]), fmt.ratio(w["interval"][1])) if w["interval"] else "-"
        why = w["reason"] or ""
        failed = w["failure"]["side"] if w["failure"] else None
        if failed:
            why = "{} on the {}: {}".format(w["failure"]["status"], "base" if failed == "base" else "working tree",
                                            w["failure"]["message"][:120])
        name = w["name"] + (" ({})".format(why) if why else "")

        def value(v, side):
            return fmt.human_value(v, w["unit"]) if v is not None or failed == side else "-"

        rows.append([w["verdict"], fmt.ratio(w["speedup"]), interval, fmt.ratio(w["mds"]),
                     value(w["base_value"], "base"), value(w["working_value"], "working"), name])
    lines.append(fmt.plain_table(rows))
    cal = r["calibration"]
    fp = cal["false_positives"]
    c = r["counts"]
    lines += [
        "",
        "speedup: base time / working time, the median over rounds; 95% interval: {}; MDS: the smallest speedup this "
        "measurement would call improved.".format(r["interval"]["method"]),
        "calibration: {}; bias allowance {}, threshold {}, base/base false positives {} of {}.".format(
            "base/base pairs measured" if cal["calibrated"] else "uncalibrated", fmt.ratio(cal["bias_allowance"]),
            fmt.ratio(r["threshold"]), fp["flagged"], fp["compared"]),
        "{} improved, {} worsened, {} unchanged, {} incomparable.".format(c["improved"], c["worsened"], c["unchanged"], c["incomparable"]),
    ]
    return "\n".join(lines)


def cmd_compare(args, task):
    repo = os.path.realpath(args.repo)
    check_regexes(args.bench)
    config, rel = resolve_config(args, task, repo)
    python = image_python(args, task)
    commit, commit_from = base_commit_of(args, task, repo)
    source = os.path.abspath(args.base_source) if args.base_source else repo
    script = args.build_script or task.get("build_script") or DEFAULT_BUILD_SCRIPT
    if not os.path.isfile(script):
        raise BenchError(EXIT_USAGE, "no build script {}; pass --build-script PATH".format(script))
    p = resolve_protocol(task, args)
    tmp = tempfile.mkdtemp(prefix="perfmine-bench-")
    if inside(tmp, repo):
        shutil.rmtree(tmp, ignore_errors=True)
        raise BenchError(EXIT_USAGE, "the temporary directory {} lies in the repository; set TMPDIR elsewhere".format(tmp))
    try:
        started = time.monotonic()
        os.makedirs(os.path.join(tmp, "base"))
        base = Side(os.path.join(tmp, "base"), os.path.abspath(args.repo), python)
        say("copying the base commit {} ({}) from {}".format(commit[:12], commit_from, source))
        full = make_copy(source, commit, base.copy)
        say("building the base copy with {} in a virtual environment of {}".format(script, python))
        base.make_venv()
        base.build(script, args.build_timeout)
        names = base.check_imports()
        build_seconds = time.monotonic() - started
        say("base built in {}{}".format(fmt.seconds(build_seconds), " ({} import from the copy)".format(", ".join(names)) if names else ""))
        if args.rebuild_working:
            started = time.monotonic()
            os.makedirs(os.path.join(tmp, "working"))
            working = Side(os.path.join(tmp, "working"), os.path.abspath(args.repo), python, label="working")
            say("copying the working tree of {} (tracked files and untracked ones that are not ignored)".format(repo))
            make_copy(base.copy, full, working.copy)
            worktree_tree(working, repo, full)
            working.make_venv()
            working.build(script, args.build_timeout)
            working.check_imports()
            working_seconds = time.monotonic() - started
            say("working tree built in {}".format(fmt.seconds(working_seconds)))
        else:
            working, working_seconds = Installed(python, base.scratch, base.temp), None
        suite_config = os.path.join(base.copy, rel) if rel is not None else config
        if not os.path.isfile(suite_config):
            raise BenchError(EXIT_USAGE, "the base commit has no asv config {}".format(rel))
        suite_dir = harness.load_config(suite_config).benchmark_dir
        note = ("the base commit's ({} in the base copy): edits to the benchmarks in the working tree are not measured".format(rel)
                if rel is not None else "the one of {}, as given".format(config))
        m, cpus = measure(base, working, suite_config, suite_dir, args.bench, p)
        say("measured {} rounds in {}".format(m["rounds"], fmt.seconds(m["durationSeconds"])))
        verdict = stats.measurement_verdict(m, p["paired"], p["adaptive"])
        info = {
            "tool": "perfmine-bench", "schema": 1, "command": "compare", "repo": repo, "base_commit": full,
            "config": rel if rel is not None else config,
            "suite": {"source": "base" if rel is not None else "given", "config": suite_config, "note": note},
            "pythons": {"working": python if working_seconds is None else "venv of {} (removed)".format(python),
                        "base": "venv of {} (removed)".format(python)},
            "build": {"script": script, "seconds": build_seconds, "working_seconds": working_seconds},
            "measurement": {"seconds": m["durationSeconds"], "rounds": m["rounds"], "rounds_planned": p["rounds"],
                            "batches": m["batches"], "budget_exhausted": m["budgetExhausted"], "seed": p["seed"],
                            "cpus": sorted(cpus) if cpus else None, "workers": ["base", "working", "calibration"]},
            "protocol": p,
        }
        report = report_of(m, verdict, info)
    finally:
        if args.keep:
            say("kept the base copy and its venv in {}".format(tmp))
        else:
            remove_tree(tmp)
    text = json.dumps(harness.finite(report), indent=2, allow_nan=False)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(text + "\n")
    print(text if args.json else compare_text(report))
    return EXIT_OK


def remove_tree(path):
    def retry(func, target, _):
        try:
            os.chmod(os.path.dirname(target), 0o700)
            os.chmod(target, 0o700)
            func(target)
        except OSError:
            pass

    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C does not leave half a tree
    try:
        shutil.rmtree(path, onerror=retry)
    finally:
        signal.signal(signal.SIGINT, previous)


# ---------------------------------------------------------------- the cross-check entry and the command line


def verdict_check(data):
    paired = dict(stats.DEFAULT_PAIRED, **(data.get("paired") or {}))
    seq = dict(stats.DEFAULT_ADAPTIVE, **(data.get("adaptive") or {}))
    m = data["measurement"]
    final = dict(paired, alpha=stats.final_alpha(paired["alpha"], seq))
    table = stats.harness_pair_table(m)
    out = {"report": stats.verdict_of_tables(table, stats.harness_calibration_table(m), final)}
    evidence, _ = stats.table_evidence(table, stats.harness_calibration_table(m), paired)
    out["settled"] = stats.settle_at_look(evidence, [True] * len(evidence), paired, seq) if seq["looks"] else None
    if data.get("random"):
        draw = stats.mulberry32(data["random"]["seed"])
        out["random"] = [draw() for _ in range(data["random"]["n"])]
        out["shuffled"] = stats.shuffled(list(range(10)), draw)
    return out


def cmd_verdict_check():
    """Hidden `_verdict`, the cross-check with validate's TypeScript: JSON on stdin, one case or a
    list of them, each {"measurement", "paired", "adaptive", "random"} -> the verdict of validate's
    tables at the final alpha (before the failure reasons), the settlements at a look (null without
    looks), and mulberry32's draws and shuffle for a seed."""
    data = json.load(sys.stdin)
    print(json.dumps([verdict_check(d) for d in data] if isinstance(data, list) else verdict_check(data)))
    return EXIT_OK


def parser():
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--repo", default=None, help="the repository (default /repo)")
    common.add_argument("--config", default=None, help="the asv config (default: task.json's, else found in the repository)")
    common.add_argument("--python", default=None, help="the working tree's interpreter (default $PERFMINE_PYTHON, else task.json's)")
    common.add_argument("--task", default=None, help="the task file (default task.json beside this program)")
    common.add_argument("--bench", "-b", action="append", default=[], metavar="REGEX", help="only workloads matching REGEX")
    common.add_argument("--json", action="store_true", help="machine-readable output")
    p = argparse.ArgumentParser(prog="perfmine-bench", description="List, time and compare the repository's asv workloads "
                                "with perfmine's harness (only the image's Python, no network).")
    sub = p.add_subparsers(dest="command")
    sub.add_parser("list", parents=[common], help="the workloads, named as asv names them")
    r = sub.add_parser("run", parents=[common], help="time the workloads in the working tree, printed as asv prints them")
    r.add_argument("--attribute", "-a", action="append", default=[], metavar="KEY=VALUE", help="asv's -a (rounds, repeat, number, ...)")
    c = sub.add_parser("compare", parents=[common], help="the working tree against the base commit, interleaved, with validate's verdict")
    c.add_argument("--base-commit", default=None, metavar="SHA")
    c.add_argument("--base-source", default=None, metavar="PATH", help="a git bundle or git directory holding the base commit")
    c.add_argument("--build-script", default=None, metavar="PATH", help="default task.json's, else /perfmine/docker_build.sh")
    c.add_argument("--build-timeout", type=float, default=3600.0, metavar="SECONDS")
    c.add_argument("--rounds", type=int, default=None, metavar="N", help="rounds (pairs) per workload (default 20)")
    c.add_argument("--samples", type=int, default=None, metavar="N", help="samples per batch (default 5)")
    c.add_argument("--rounds-per-process", type=int, default=None, metavar="N")
    c.add_argument("--clock", choices=["cpu", "wall"], default=None)
    c.add_argument("--cpus", default=None, help="auto (the last CPU), none, or a list such as 1 or 2,3")
    c.add_argument("--seed", type=int, default=None, help="seed of the random orders")
    c.add_argument("--budget", type=float, default=None, metavar="SECONDS", help="measurement time limit (default 600 s, validate's)")
    c.add_argument("--out", default=None, metavar="FILE", help="also write the JSON report to FILE")
    c.add_argument("--keep", action="store_true", help="keep the base copy and its venv (their path is printed)")
    c.add_argument("--rebuild-working", action="store_true",
                   help="build the working tree too, as the base: a copy of it (tracked files and untracked ones that are "
                   "not ignored) built with the build script into its own venv (what a verifier measures; needed "
                   "after changing compiled code or build files)")
    return p


def interrupt(signum, frame):
    raise KeyboardInterrupt()


def main(argv):
    if argv[:1] == ["_verdict"]:
        return cmd_verdict_check()
    args = parser().parse_args(argv)
    if args.command is None:
        parser().print_usage(sys.stderr)
        return EXIT_USAGE
    signal.signal(signal.SIGTERM, interrupt)
    try:
        task = load_task(args.task)
        args.repo = args.repo or task.get("repo") or DEFAULT_REPO
        if not os.path.isdir(args.repo):
            raise BenchError(EXIT_USAGE, "no repository at {}; pass --repo DIR".format(args.repo))
        return {"list": cmd_list, "run": cmd_run, "compare": cmd_compare}[args.command](args, task)
    except BenchError as exc:
        say("error: {}".format(exc))
        return exc.code
    except harness.UsageError as exc:
        say("error: {}".format(exc))
        return EXIT_USAGE
    except KeyboardInterrupt:
        say("interrupted")
        return EXIT_INTERRUPTED


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
