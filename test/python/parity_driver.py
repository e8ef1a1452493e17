#!/usr/bin/env python3
"""The Python side of the parity tests (test/python/*-parity.test.ts): the in-image modules' answers
to cases the TypeScript twins answer too.

    python3 parity_driver.py PYTHON_DIR KIND < cases.json > answers.json

PYTHON_DIR is the folder of the in-image modules (the repository's python/, or where an image has
them); KIND is one of:

  format       human_float / human_time / human_file_size / human_value (perfmine_bench_format.py)
               of each case; numbers are passed as JavaScript's String(x) ("NaN", "-0", "1e-7"),
               so that every double, NaN and the infinities arrive exactly.
  interleave   measure_interleaved (perfmine_bench_interleave.py) with scripted workers, a
               scripted clock (a batch's seconds per workload) and scripted settlements (batch by
               batch or sample by sample, the rounds planned evenly or by cost, the calibration in
               every round or the first N): every batch command each side was given, the order,
               and the records with the rounds the plan left each workload out of (failure
               messages left out: they are worded per side).
  plan         the round plan's pure functions (next_round, water_level, expected_round_ms of
               perfmine_bench_interleave.py) on planned workloads: the next round's names, the
               expected round time and the water level.
  protected    which of a case's paths a measured change keeps from the base: the asv config file
               written at its path, its benchmark_dir read by the harness (load_config) and made
               relative as perfmine_verify.py does, the pathspecs of protected_pathspecs, and the
               paths of a git repository holding every case path that `git ls-files` matches with
               them (the pathspecs `git reset` restores in perfmine_bench.worktree_tree).

Python 3.8+, standard library only (and git, for `protected`).
"""

import json
import os
import subprocess
import sys
import tempfile


def number(text):
    return None if text is None else float(text)


def format_case(fmt, case):
    fn = case["fn"]
    if fn == "float":
        return fmt.human_float(number(case["value"]), case["significant"], case["truncateSmall"], case["significantZeros"])
    if fn == "time":
        return fmt.human_time(number(case["value"]), number(case["err"]))
    if fn == "size":
        return fmt.human_file_size(number(case["value"]), number(case["err"]))
    if fn == "value":
        value = number(case["value"])
        if case.get("integer") and value is not None:
            value = int(value)
        return fmt.human_value(value, case["unit"], number(case["err"]))
    raise ValueError("unknown function " + fn)


class Clock:
    """time.monotonic for the interleaved driver: it moves only when a batch runs."""

    def __init__(self):
        self.now = 0.0

    def monotonic(self):
        return self.now


def interleave_case(il, case):
    clock = Clock()
    il.time = clock
    asked = {}
    restarts = {}
    restarted = {}
    failures = {(f["side"], f["workload"], f["round"], f.get("turn", 0)): f["status"] for f in case["failures"]}
    # sample by sample, a round is `samples` one-sample batches of a side, a turn each (a
    # single-value workload's round one batch)
    single = set(case.get("singleValue") or [])
    by_sample = case["settings"].get("interleave") == "sample"
    restart_failures = {(f["side"], f["restart"]) for f in case["restartFailures"]}
    workloads = [{"name": n, "benchmark": "bench." + n, "param": 0} for n in case["workloads"]]

    class Worker:
        def __init__(self, side):
            self.side = side
            self.dead = None
            self.round = None
            names = [w for w in workloads if w["name"] not in case["missing"].get(side, [])]
            if side in case["fatal"]:
                self.start = {"event": "fatal", "reason": "import", "message": "scripted"}
            else:
                self.start = {"event": "ready", "protocol": 1, "python": "3", "workloads": names,
                              "benchmarks": {w["benchmark"]: {"version": "1"} for w in names}}

        def batch(self, command):
            asked.setdefault(self.side, []).append(command)
            name = command["benchmark"][len("bench."):]
            clock.now += (case.get("secondsPerBatchOf") or {}).get(name, case["secondsPerBatch"])
            turns = case["settings"]["samples"] if by_sample and name not in single else 1
            # the warm-up batch (no warm-up seconds given), then one batch a round (or a turn) while
            # the side measures it
            warmup = command["warmup"] is None
            seen = sum(1 for c in asked[self.side] if c["benchmark"] == command["benchmark"]) - 2
            status = failures.get((self.side, name) + ((None, 0) if warmup else divmod(seen, turns)))
            if status:
                return {"ok": False, "status": status, "message": "scripted"}
            value = 0.001 * (1 + case["workloads"].index(name)) * (2 if self.side == "expert" else 1)
            if name in single:
                return {"ok": True, "samples": [value], "number": None}
            # a round's first turn (its warm-up seconds) reports 30 s more setup, as a setup_cache would
            account = {"setup": (case.get("setupSecondsOf") or {}).get(name, 0) + (30 if command["warmup"] else 0), "warmup": 0,
                       "samples": (case.get("secondsPerBatchOf") or {}).get(name, case["secondsPerBatch"])}
            return {"ok": True, "samples": [value + 0.0001 * i for i in range(command["samples"])],
                    "number": command["number"] or 7, "account": account}

        def send_restart(self, benchmarks=None):
            restarted.setdefault(self.side, []).append(list(benchmarks) if benchmarks else None)
            restarts[self.side] = restarts.get(self.side, 0) + 1
            return restarts[self.side]

        def await_restart(self, ident):
            clock.now += case.get("secondsPerRestart") or 0
            if (self.side, ident) in restart_failures:
                self.dead = "scripted"
                return {"ok": False}
            return {"ok": True}

        def cpu_seconds(self):
            return None

        def log(self):
            return ""

        def close(self):
            pass

    settings = dict(case["settings"])
    looks = {int(k): v for k, v in case["settle"].items()}

    def settle(measurement):
        return {name: outcome for name, outcome in looks.get(measurement["rounds"], {}).items()}

    m = il.measure_interleaved(Worker, settings, settle=settle if looks else None)

    def side(record):
        if record is None:
            return None
        failure = record["failure"]
        return {"number": record["number"], "rounds": record["rounds"],
                "failure": None if failure is None else {"status": failure["status"], "round": failure["round"]}}

    fields = ("benchmark", "param", "samples", "number", "warmup", "sample_time", "timeout", "clock")
    return {
        "order": m["order"], "rounds": m["rounds"], "batches": m["batches"], "budgetExhausted": m["budgetExhausted"],
        "calibrationRounds": m.get("calibrationRounds"),
        "asked": {s: [{k: c[k] for k in fields} for c in commands] for s, commands in asked.items()},
        "restarted": restarted,
        "workloads": [{"name": w["ref"]["name"], "base": side(w["base"]), "expert": side(w["expert"]),
                       "calibration": side(w["calibration"]), "settled": w["settled"],
                       "leftOut": w.get("leftOut", 0), "samples": w.get("samples")} for w in m["workloads"]],
    }


def plan_case(il, case):
    """The round plan's pure functions (as parity.ts's planTs): the next round's names, sorted, the
    expected round time, and the water level nextRound decides by (None: infinite)."""
    ws = case["workloads"]
    whole = [w["spentMs"] + (w["spentMs"] / w["rounds"] if w["rounds"] > 0 else 0) * w["roundsLeft"] for w in ws]
    spent = 0
    for w in ws:
        spent = spent + w["spentMs"]
    level = il.water_level(whole, spent + max(0, case["budgetLeftMs"]))
    return {"next": sorted(il.next_round(ws, case["budgetLeftMs"], case["minRounds"])),
            "expected": il.expected_round_ms(ws), "level": None if level == float("inf") else level}


def protected_case(verify, case, scratch):
    repo = tempfile.mkdtemp(dir=scratch)
    config = case["configPath"]
    files = [config] + [p for p in case["paths"] if p != config]
    for path in files:
        full = os.path.join(repo, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w", encoding="utf-8") as f:
            f.write(case["configText"] if path == config else "x\n")
    # as perfmine_verify.py main: the harness's reading of the config, relative to the checkout
    suite_dir = verify.harness.load_config(os.path.join(repo, config)).benchmark_dir
    specs = verify.protected_pathspecs(config, os.path.relpath(suite_dir, repo))
    env = dict(os.environ, GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL="/dev/null")
    subprocess.run(["git", "init", "-q", repo], check=True, env=env)
    subprocess.run(["git", "-C", repo, "add", "--all", "."], check=True, env=env)
    out = subprocess.run(["git", "-C", repo, "-c", "core.quotePath=false", "ls-files", "-z", "--"] + specs,
                         check=True, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    matched = set(out.stdout.decode("utf-8").split("\0"))
    return [p for p in case["paths"] if p in matched]


def main(argv):
    python_dir, kind = argv[1], argv[2]
    sys.path.insert(0, python_dir)
    cases = json.load(sys.stdin)
    if kind == "format":
        import perfmine_bench_format as fmt
        answers = []
        for c in cases:
            try:
                answers.append(format_case(fmt, c))
            except (ValueError, OverflowError, ZeroDivisionError) as exc:
                answers.append({"error": type(exc).__name__})
    elif kind == "interleave":
        import perfmine_bench_interleave as il
        answers = [interleave_case(il, c) for c in cases]
    elif kind == "plan":
        import perfmine_bench_interleave as il
        answers = [plan_case(il, c) for c in cases]
    elif kind == "protected":
        import perfmine_verify as verify
        scratch = tempfile.mkdtemp(prefix="perfmine-parity-")
        try:
            answers = []
            for c in cases:
                try:
                    answers.append(protected_case(verify, c, scratch))
                except subprocess.CalledProcessError as exc:
                    answers.append({"error": "git failed: {}".format((exc.stderr or b"").decode("utf-8", "replace").strip())})
        finally:
            subprocess.run(["rm", "-rf", scratch], check=False)
    else:
        raise SystemExit("unknown kind " + kind)
    print(json.dumps(answers))


if __name__ == "__main__":
    main(sys.argv)
