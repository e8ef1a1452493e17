"""perfmine-bench's interleaved measurement: validate's driver (stages/validate/harness/interleave.ts)
ported to Python, with the harness's `serve` workers as local processes instead of containers
(stages/validate/harness/container-worker.ts's counterpart).

Alternate mode, as validate's default: base, working tree ("expert" in validate's words and in the
data) and a second base for calibration are warm worker processes, and the driver visits them
batch by batch in a randomized order. Round-major: each round visits every workload still
measured, in a random order, and for each runs one batch per side in a random order. With
`interleave` "sample" (validate's default since it has the setting; absent here: "batch") the
sides take turns sample by sample instead: a round is `samples` turns of a one-sample batch per
side, each turn in a new random order (the warm-up seconds before the first turn only), whose
samples add up to the side's batch of the round (`3:BAC/CAB/...` in the order); a side that fails
part-way loses that round's samples. Before the rounds, a warm-up pass per workload: the base
calibrates asv's `number` and warms up, the other sides warm up with that number, and every later
batch of every side uses it (the warm-up batches are not evidence). Every `roundsPerProcess`
rounds all workers are replaced by fresh processes. A workload that fails on the base is measured
no further; one that fails on the working side too; a calibration failure only ends its
calibration. A single-value benchmark (mem, peakmem, track: no `number`) answers one value a batch
and keeps batch turns by sample too. With `calibrationRounds` N (absent or None: every round) the
calibration worker takes part in the first N rounds only, then it is closed (its log's tail kept)
and the rounds measure base and working side. The time budget, by `plan`: "even" (absent) stops
the rounds once the rounds so far plus one more would pass it; "cost" (validate's default since it
has the setting) gives each round the workloads whose share of the budget, by what each has cost so
far, allows another round (every one at least `minRounds` rounds, absent the first interim look,
else 6; perfmine-bench gives the verdict's minPairs, as validate does: water-filling,
next_round below) and stops once the next round of those would pass it; a workload left out of a
round counts it (`leftOut`). Interim looks (adaptive sampling) stop workloads whose verdict is
settled. The random orders are the pipeline's mulberry32's, so a seed gives validate's order (with
three workers).

What a verifier adds (perfmine_verify.py), each by a setting (accounts, warmupCalls and values count
or keep something per batch and need interleave "batch"; the verifier measures batch by batch):
  - `reference`: a fourth worker, the task's expert patch, measured beside the agent's change so
    that the reward compares the two on the same machine at the same time; like calibration, its
    failure ends only its own measurement (a fourth worker changes the random draws);
  - `accounts` ({side: perfmine_bench_account.UidAccount}): every side runs as a user of its own,
    is stopped whole between its batches and continued for its own batches only, and the driver
    records per batch that side's CPU time from outside (every process of its uid, however it
    was started) instead of the worker's descendants; each side's start-up (the suite's import)
    is counted the same way (`startup`);
  - `numberPerSide`: each side calibrates asv's `number` by its own clock in the warm-up pass, so
    that every side's batch lasts about as long (a batch of a much faster side is then long
    enough for the outside count to resolve);
  - `warmupCalls`: a batch's warm-up is one sample's worth of calls (`number`), counted, not
    timed, so that no clock can shorten it; a batch then makes (samples + 1) x number calls,
    recorded per round (`calls`);
  - `values`: every batch of a time_ benchmark keeps its timed calls' return values and answers
    the hash of the last one, recorded per round (`values`);
  - `extend` ({"rounds": N, "workloads": [names], "sides": [sides]}): after the planned rounds,
    rounds up to N of those workloads only, on those sides only (the verifier's reward workloads on
    the base, the working side and the reference: the reward's precision, not the verdicts of
    every workload, is what more rounds buy), within the same time budget.

Python 3.8+, standard library only.
"""

import json
import math
import os
import select
import signal
import subprocess
import time

from perfmine_bench_account import own
from perfmine_bench_stats import median, mulberry32, shuffled

SIDE_LETTER = {"base": "A", "expert": "B", "calibration": "C", "reference": "D"}
SIDES = ("base", "expert", "calibration", "reference")
#: Added to a batch's own time limit before the driver gives up on the harness itself.
ANSWER_MARGIN = 60.0
#: asv's default benchmark timeout, when neither the command nor the benchmark gives one.
DEFAULT_TIMEOUT = 60.0
TIMEOUT, EOF = object(), object()


def tail(text, n):
    return "\n".join(text.rstrip().split("\n")[-n:])


FAILURE_STATUSES = ("skipped", "failed", "timeout", "crashed", "not-a-number", "unknown")


def is_number(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def read_batch_answer(a):
    """A batch answer as the driver keeps it (messages.ts's readBatchAnswer): {"ok": True,
    "samples", "number"} (a single-value benchmark's value as its one sample, number None), or
    {"ok": False, "status", "message"}; an answer of the wrong shape is an `unknown` failure."""
    unexpected = {"ok": False, "status": "unknown", "message": "unexpected answer " + json.dumps(a)[:200]}
    if a.get("ok") is False:
        status = a.get("status")
        if status not in FAILURE_STATUSES or not isinstance(a.get("message"), str):
            return unexpected
        return {"ok": False, "status": status, "message": a["message"]}
    if a.get("ok") is not True:
        return unexpected
    if a.get("kind") == "time":
        samples, number = a.get("samples"), a.get("number")
        if (not isinstance(samples, list) or not samples or not all(is_number(x) and x > 0 for x in samples)
                or not isinstance(number, int) or isinstance(number, bool) or number <= 0):
            return unexpected
        out = {"ok": True, "samples": samples, "number": number}
        account = a.get("account")
        if isinstance(account, dict) and all(is_number(account.get(k)) for k in ("setup", "samples")):
            out["account"] = {"setup": account["setup"], "samples": account["samples"]}
        if "value" in a:
            out["value"] = a["value"] if isinstance(a["value"], str) and len(a["value"]) == 64 else None
        return out
    if a.get("kind") in ("memory", "peakmemory", "track") and is_number(a.get("value")):
        if not math.isfinite(a["value"]):
            return {"ok": False, "status": "not-a-number", "message": "{} value {}".format(a["kind"], a["value"])}
        return {"ok": True, "samples": [a["value"]], "number": None}
    return unexpected


class LocalWorker:
    """The harness's `serve` mode in a process of this machine, spoken to over JSON lines."""

    def __init__(self, argv, env, cwd, log_path, cpus=None, start_timeout=600.0, preexec=None):
        """preexec: run in the child before the harness starts (after the CPU pinning), e.g. to
        drop to another user."""
        self.log_path = log_path
        self.start_timeout = start_timeout
        self._log = open(log_path, "wb")
        self._buf = b""
        self._next = 1
        self.dead = None
        user_preexec = preexec

        def child_setup():
            if cpus:
                os.sched_setaffinity(0, cpus)
            if user_preexec:
                user_preexec()

        preexec = child_setup if cpus or user_preexec else None
        self.proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._log, env=env, cwd=cwd,
            start_new_session=True, preexec_fn=preexec,
        )
        own(self.proc.pid)  # a verifier's reaper leaves it to this object
        try:
            first = self._line(start_timeout)
        except BaseException:  # interrupted while the suite loads: nothing is left running
            self.kill()
            self._log.close()
            raise
        if isinstance(first, str):
            try:
                start = json.loads(first)
            except ValueError:
                start = {"event": "fatal", "reason": "worker-exited", "message": "not a protocol line: " + first[:200]}
        else:
            why = (
                "the harness did not load the suite within {:.0f} s".format(start_timeout) if first is TIMEOUT
                else "the harness exited before loading the suite (exit {})".format(self.proc.wait())
            )
            start = {"event": "fatal", "reason": "start-timeout" if first is TIMEOUT else "worker-exited",
                     "message": "{}: {}".format(why, tail(self.log(), 12))}
        self.start = start
        if start.get("event") != "ready":
            self.dead = start.get("message", "the harness could not start")

    def _line(self, timeout):
        deadline = time.monotonic() + timeout
        fd = self.proc.stdout.fileno()
        while True:
            nl = self._buf.find(b"\n")
            if nl >= 0:
                line, self._buf = self._buf[:nl], self._buf[nl + 1:]
                return line.decode("utf-8", "replace")
            left = deadline - time.monotonic()
            if left <= 0:
                return TIMEOUT
            ready, _, _ = select.select([fd], [], [], left)
            if ready:
                chunk = os.read(fd, 65536)
                if not chunk:
                    return EOF
                self._buf += chunk

    def _send(self, command):
        ident = self._next
        self._next += 1
        self.proc.stdin.write((json.dumps(dict(command, id=ident)) + "\n").encode("utf-8"))
        self.proc.stdin.flush()
        return ident

    def _answer(self, ident, limit):
        """The answer with this id (answers to other ids are skipped); None when the harness is gone."""
        while True:
            line = self._line(limit)
            if line is TIMEOUT or line is EOF:
                if line is TIMEOUT:
                    self.dead = "the harness stopped answering (no answer within {:.0f} s); it was killed".format(limit)
                    self.kill()
                else:
                    self.dead = "the harness exited (exit {})".format(self.proc.wait())
                self.dead += ": " + tail(self.log(), 8)
                return None
            try:
                answer = json.loads(line)
            except ValueError:
                continue
            if answer.get("id") is not None and answer.get("id") != ident:
                continue
            return answer

    def _ask(self, command, limit):
        if self.dead is not None:
            return None
        try:
            ident = self._send(command)
        except OSError:
            self.dead = "the harness exited (exit {}): {}".format(self.proc.wait(), tail(self.log(), 8))
            return None
        return self._answer(ident, limit)

    def batch(self, command):
        info = (self.start.get("benchmarks") or {}).get(command["benchmark"]) or {}
        limit = (command.get("timeout") or info.get("timeout") or DEFAULT_TIMEOUT) + ANSWER_MARGIN
        answer = self._ask(dict(command, op="batch"), limit)
        if answer is None:
            return {"ok": False, "status": "crashed", "message": self.dead}
        return read_batch_answer(answer)

    def send_restart(self, benchmarks=None):
        """First half of a restart (all workers are asked at once, then answered): the id or None.
        With benchmarks, the fresh worker imports only their modules and serves only them."""
        if self.dead is not None:
            return None
        try:
            return self._send(dict({"op": "restart"}, **({"benchmarks": benchmarks} if benchmarks else {})))
        except OSError:
            self.dead = "the harness exited (exit {})".format(self.proc.wait())
            return None

    def await_restart(self, ident):
        if ident is None:
            return {"ok": False, "message": self.dead}
        answer = self._answer(ident, self.start_timeout + ANSWER_MARGIN)
        if answer is None:
            return {"ok": False, "message": self.dead}
        if not answer.get("ok"):
            self.dead = answer.get("message", "the worker could not start again")
            return {"ok": False, "message": self.dead}
        return {"ok": True}

    def cpu_seconds(self):
        """The CPU time so far of the harness's processes (this one and every live descendant: the
        supervisor and the worker it runs the suite in), every thread, by the kernel's count (/proc
        schedstat), or None where it cannot be read: a check from outside of the times the worker
        reports."""
        children = {}
        try:
            for entry in os.listdir("/proc"):
                if not entry.isdigit():
                    continue
                try:
                    with open("/proc/{}/stat".format(entry)) as f:
                        ppid = int(f.read().rsplit(")", 1)[1].split()[1])
                except (OSError, ValueError, IndexError):
                    continue
                children.setdefault(ppid, []).append(int(entry))
            with open("/proc/{}/schedstat".format(self.proc.pid)):
                pass
        except OSError:
            return None
        total, todo = 0, [self.proc.pid]
        while todo:
            pid = todo.pop()
            todo.extend(children.get(pid, []))
            try:
                for task in os.listdir("/proc/{}/task".format(pid)):
                    with open("/proc/{}/task/{}/schedstat".format(pid, task)) as f:
                        total += int(f.read().split()[0])
            except (OSError, ValueError, IndexError):
                continue  # gone meanwhile
        return total / 1e9

    def modules(self):
        """The files of every module the suite's import loaded (None: no answer)."""
        answer = self._ask({"op": "modules"}, ANSWER_MARGIN)
        return answer.get("files") if answer and answer.get("ok") else None

    def log(self):
        try:
            with open(self.log_path, "rb") as f:
                f.seek(0, os.SEEK_END)
                f.seek(max(0, f.tell() - 16000))
                return f.read().decode("utf-8", "replace")
        except OSError:
            return ""

    def kill(self):
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(self.proc.pid, sig)
            except OSError:
                return
            try:
                self.proc.wait(5)
                return
            except subprocess.TimeoutExpired:
                continue

    def close(self):
        if self.proc.poll() is None:
            if self.dead is None:
                try:
                    self._send({"op": "exit"})
                    self.proc.stdin.close()
                    self.proc.wait(10)
                except (OSError, subprocess.TimeoutExpired):
                    pass
            if self.proc.poll() is None:
                self.kill()
        for stream in (self.proc.stdin, self.proc.stdout):
            try:
                stream.close()
            except OSError:
                pass
        self._log.close()


def empty_side(rounds):
    return {"number": None, "rounds": [None] * rounds, "failure": None}


def active(w):
    return w["base"]["failure"] is None and w["expert"]["failure"] is None and w["settled"] is None


def sides_of(w, calibrating=True):
    """The sides of a workload's round (calibrating: whether the round is one of the calibration's)."""
    cal = w["calibration"]
    sides = ["base", "expert", "calibration"] if calibrating and cal is not None and cal["failure"] is None \
        else ["base", "expert"]
    ref = w.get("reference")
    return sides + ["reference"] if ref is not None and ref["failure"] is None else sides


def versions_of(start):
    if not start or start.get("event") != "ready":
        return {}
    return {name: entry.get("version") for name, entry in start["benchmarks"].items()}


#: The verifier's settings that count or keep something per batch: they need whole batches.
BATCH_ONLY = ("accounts", "warmupCalls", "values")


def interleave_of(settings):
    """What the sides take turns by: "batch" (absent) or "sample"; ValueError for anything else, or for
    "sample" with a setting that needs whole batches (BATCH_ONLY)."""
    how = settings.get("interleave") or "batch"
    if how not in ("batch", "sample"):
        raise ValueError("interleave must be batch or sample, not {!r}".format(how))
    bad = [key for key in BATCH_ONLY if settings.get(key)]
    if how == "sample" and bad:
        raise ValueError("interleave sample cannot be combined with {}: they count or keep per batch and need whole "
                         "batches (interleave batch)".format(", ".join(bad)))
    return how


def restarts_from(start, stop, rounds_per_process):
    """How many of rounds [start, stop) start with fresh worker processes (every roundsPerProcess-th but the first)."""
    def up_to(n):
        return 0 if n <= 0 else (n - 1) // rounds_per_process
    return max(0, up_to(stop) - up_to(max(start, 1)))


def plan_of(settings):
    """How the time budget is spent: "even" (absent) or "cost"; ValueError for anything else."""
    plan = settings.get("plan") or "even"
    if plan not in ("cost", "even"):
        raise ValueError("plan must be cost or even, not {!r}".format(plan))
    return plan


def calibration_rounds_of(settings):
    """The rounds the calibration worker takes part in: None (absent) for every round, else an int >= 0."""
    n = settings.get("calibrationRounds")
    if n is not None and (not isinstance(n, int) or isinstance(n, bool) or n < 0):
        raise ValueError("calibrationRounds must be null or a whole number of rounds, not {!r}".format(n))
    return n


# ---------------------------------------------------------------- the round plan (stages/validate/harness/plan.ts)
# Which of the workloads still measured the next round measures (plan "cost"), from what each has
# cost so far and the time budget left: water-filling over time. Each workload would cost, to the
# last round, what it has spent plus its mean round cost for every round left; when those costs do
# not fit in what the workloads have spent plus the budget left, each gets at most a level L of
# time, the level at which the capped costs fit exactly. A workload takes the next round if it
# still fits under L, or if it has fewer than `min_rounds` rounds (settings' minRounds). The
# sums are plain left-to-right additions, as the TypeScript's (Python's sum() of floats is
# compensated since 3.12), so that both decide alike. A planned workload: {"name", "spentMs" (wall
# time of its rounds' batches, every side), "rounds" (rounds it took part in), "roundsLeft"}.


def _added(values):
    total = 0
    for x in values:
        total = total + x
    return total


def water_level(costs, total):
    """The level L with sum(min(x, L)) = total (inf when everything fits)."""
    if _added(costs) <= total:
        return math.inf
    ordered = sorted(costs)
    below = 0
    for i, x in enumerate(ordered):
        level = (total - below) / (len(ordered) - i)
        if level <= x:
            return level
        below = below + x
    return math.inf


def _round_cost(w):
    return w["spentMs"] / w["rounds"] if w["rounds"] > 0 else None


def next_round(workloads, budget_left_ms, min_rounds):
    """The names the next round measures."""
    whole = [w["spentMs"] + (0 if _round_cost(w) is None else _round_cost(w)) * w["roundsLeft"] for w in workloads]
    available = _added(w["spentMs"] for w in workloads) + max(0, budget_left_ms)
    level = water_level(whole, available)
    return {
        w["name"] for w in workloads
        if _round_cost(w) is None or w["rounds"] < min_rounds or w["spentMs"] + _round_cost(w) <= level
    }


def expected_round_ms(workloads):
    """The time the next round of these workloads is expected to take (their mean round costs), ms."""
    return _added(0 if _round_cost(w) is None else _round_cost(w) for w in workloads)


def samples_for_setup(samples, setup_seconds, sample_seconds):
    """Samples a round of a workload whose setup runs before every sample (plan.ts's
    samplesForSetup): `samples` while setup is cheap, fewer as it outweighs a sample, at least one."""
    if not (setup_seconds > 0) or not (sample_seconds >= 0) or not math.isfinite(setup_seconds):
        return samples
    return max(1, min(samples, int(math.ceil(samples * sample_seconds / (setup_seconds + sample_seconds)))))


def measure_interleaved(open_side, settings, on_round=None, after_open=None, settle=None):
    """open_side(side) -> a started worker (LocalWorker's interface). settings: rounds,
    roundsPerProcess, samples, calibration, seed, budgetSeconds, batchTimeoutSeconds, clock,
    warmupSeconds, looks, interleave ("batch", the default, or "sample"), plan ("even", the default,
    or "cost"), calibrationRounds (None, the default: every round); and a verifier's
    reference, accounts, numberPerSide, warmupCalls, values, extend (see the module's docstring;
    accounts, warmupCalls and values need interleave "batch": ValueError otherwise).
    after_open(workers) may raise to stop before any batch (the import check); settle(measurement)
    -> {name: "changed" | "unchanged"} at the looks."""
    started = time.monotonic()
    random = mulberry32(settings["seed"])
    accounts = settings.get("accounts") or {}
    by_sample = interleave_of(settings) == "sample"
    by_cost = plan_of(settings) == "cost"
    calibration_rounds = calibration_rounds_of(settings)
    opened = {}
    # the stderr tails of workers closed before the end (the calibration worker after its rounds)
    closed_logs = {}
    state = {"batches": 0}
    startup = {}
    order = []

    def result(starts, records, done, exhausted, measured=True):
        """measured: False when a worker could not start (as validate's, without calibrationRounds)."""
        out = {
            "base": starts[0], "expert": starts[1], "calibration": starts[2],
            "reference": starts[3] if len(starts) > 3 else None, "workloads": records,
            "rounds": done, "roundsPerProcess": settings["roundsPerProcess"], "order": order,
            "batches": state["batches"], "durationSeconds": time.monotonic() - started, "budgetExhausted": exhausted,
            "baseVersions": versions_of(starts[0]), "expertVersions": versions_of(starts[1]),
            "referenceVersions": versions_of(starts[3]) if len(starts) > 3 else {},
            "startup": startup, "logs": dict(closed_logs, **{side: w.log() for side, w in opened.items()}),
        }
        if measured and calibration_rounds is not None:
            # the calibration's rounds at most: its pairs (perfmine_bench_stats.harness_calibration_table)
            out["calibrationRounds"] = calibration_rounds
        return out

    def running(sides, on):
        """Continues (on) or stops every side's processes (sides with an account only)."""
        for side in sides:
            account = accounts.get(side)
            if account is not None and account.running != on:
                (account.cont if on else account.stop)()

    def opened_side(side):
        account = accounts.get(side)
        before = account.cpu() if account is not None else None
        worker = opened[side] = open_side(side)
        if account is not None:
            account.stop()
            startup[side] = account.cpu() - before
        return worker

    try:
        base = opened_side("base")
        if base.start.get("event") != "ready":
            return result((base.start, None, None), [], 0, False, measured=False)
        expert = opened_side("expert")
        if expert.start.get("event") != "ready":
            return result((base.start, expert.start, None), [], 0, False, measured=False)
        calibration = opened_side("calibration") if settings["calibration"] else None
        cal_ready = calibration is not None and calibration.start.get("event") == "ready"
        reference = opened_side("reference") if settings.get("reference") else None
        ref_ready = reference is not None and reference.start.get("event") == "ready"
        worker = {"base": base, "expert": expert, "calibration": calibration if cal_ready else None,
                  "reference": reference if ref_ready else None}
        starts = (base.start, expert.start, calibration.start if calibration else None,
                  reference.start if reference else None)
        if after_open:
            running(opened, True)
            after_open(worker)
            running(opened, False)

        expert_refs = {w["name"]: w for w in expert.start["workloads"]}
        reference_refs = {w["name"]: w for w in reference.start["workloads"]} if ref_ready else {}
        rounds_planned = settings["rounds"]
        extend = settings.get("extend") or {}
        extend_names = set(extend.get("workloads") or ())
        rounds_total = max(rounds_planned, int(extend.get("rounds") or 0)) if extend_names else rounds_planned
        extend_sides = tuple(extend.get("sides") or ("base", "expert"))

        def measured_in(w, r):
            """Whether round r measures workload w (every active one in the planned rounds; the extended ones after)."""
            return active(w) and (r < rounds_planned or w["ref"]["name"] in extend_names)

        def sides_in(w, r):
            sides = sides_of(w, calibration_rounds is None or r < calibration_rounds)
            return sides if r < rounds_planned else [s for s in sides if s in extend_sides or s in ("base", "expert")]

        records = [
            {
                "ref": ref, "base": empty_side(rounds_total), "expert": empty_side(rounds_total),
                "calibration": empty_side(rounds_total) if worker["calibration"] else None,
                "calibrationBase": None, "settled": None,
                **({"reference": empty_side(rounds_total)} if worker["reference"] else {}),
            }
            for ref in base.start["workloads"]
        ]

        def ref_of(w, side):
            return (expert_refs if side == "expert" else reference_refs)[w["ref"]["name"]] if side in ("expert", "reference") \
                else w["ref"]

        def still_measured(side, r):
            """The benchmarks a side may still run from round r on (a settled or failed workload is never measured again)."""
            return sorted({ref_of(w, side)["benchmark"] for w in records
                           if measured_in(w, r) and w.get(side) is not None and w[side]["failure"] is None})

        def run(w, side, round_index, first=None):
            """One batch of a side. first: None for a round's batch of `samples` samples; by sample,
            whether this one-sample turn is the round's first (the others add to its samples)."""
            rec = w[side]
            ref = ref_of(w, side)
            own = settings.get("numberPerSide")
            if round_index is None and own:
                number = 0  # asv's choice, by this side's own clock
            else:
                number = rec["number"] if rec["number"] is not None else w["base"]["number"]
            counted = round_index is not None and settings.get("warmupCalls") and number
            command = {
                "benchmark": ref["benchmark"], "param": ref["param"],
                "samples": 1 if round_index is None or first is not None else settings["samples"],
                "number": number or 0,
                "warmup": None if round_index is None else (0 if counted or first is False else settings["warmupSeconds"]),
                "sample_time": None, "timeout": settings["batchTimeoutSeconds"], "clock": settings["clock"],
            }
            if counted:
                command["warmup_calls"] = number
            if settings.get("values") and round_index is not None:
                command["values"] = True
            account = accounts.get(side)
            if account is not None:
                cpu = account.cpu()
                account.cont()
            else:
                cpu = worker[side].cpu_seconds()
            asked = time.monotonic()
            answer = worker[side].batch(command)
            wall = time.monotonic() - asked
            if account is not None:
                account.stop()
                after = account.cpu()
            else:
                after = worker[side].cpu_seconds() if cpu is not None else None
            state["batches"] += 1
            if not answer.get("ok"):
                rec["failure"] = {"status": answer.get("status", "unknown"), "message": answer.get("message", ""),
                                  "round": round_index}
                if round_index is not None and first is not None:
                    # a round a side did not finish is no evidence (the samples of its earlier turns go)
                    for key in ("rounds", "walls", "cpus", "calls"):
                        if key in rec:
                            rec[key][round_index] = None
                return
            if round_index is None:
                rec["number"] = answer["number"]
                return
            # by sample, the turns after the first add up to the round's batch
            more = first is False

            def put(key, value):
                values = rec.setdefault(key, [None] * rounds_total)
                if more and key == "rounds":
                    values[round_index] = (values[round_index] or []) + value
                elif more:
                    values[round_index] = None if value is None or values[round_index] is None else values[round_index] + value
                else:
                    values[round_index] = value

            put("rounds", answer["samples"])
            # the batch's wall time as this process saw it (the request to the answer) and the side's
            # CPU time by the kernel's count: checks from outside the worker of the times it reports
            # (perfmine_verify.py)
            put("walls", wall)
            put("cpus", None if after is None else after - cpu)
            if answer.get("number"):
                put("calls", answer["number"] * (len(answer["samples"]) + (1 if counted else 0)))
            if "value" in answer:
                rec.setdefault("values", [None] * rounds_total)[round_index] = answer["value"]
            return answer.get("account")

        # warm-up pass: the base calibrates `number`, the others warm up with it (or, numberPerSide,
        # each calibrates its own)
        for w in records:
            run(w, "base", None)
            if w["base"]["failure"]:
                continue
            if w["ref"]["name"] not in expert_refs:
                w["expert"]["failure"] = {"status": "missing", "message": "the working side has no such workload", "round": None}
                continue
            run(w, "expert", None)
            if w["calibration"] is not None and w["expert"]["failure"] is None:
                run(w, "calibration", None)
            if w.get("reference") is not None and w["expert"]["failure"] is None:
                if w["ref"]["name"] in reference_refs:
                    run(w, "reference", None)
                else:
                    w["reference"]["failure"] = {"status": "missing", "message": "the reference has no such workload",
                                                 "round": None}

        done = 0
        exhausted = False
        # what each workload's rounds cost (every side's batches, ms), for the round plan
        spent = [{"ms": 0, "rounds": 0} for _ in records]
        looks = settings.get("looks") or []
        min_rounds = min(rounds_planned, settings.get("minRounds") or (looks[0] if looks else 6))
        # what the fresh worker processes between rounds cost (ms), reserved for the rounds ahead
        restarts = {"ms": 0, "times": 0}
        for r in range(rounds_total):
            measuring = [w for w in records if measured_in(w, r)]
            if not measuring:
                break
            elapsed = time.monotonic() - started
            planned = measuring
            if by_cost:
                # in ms, as validate's plan, so that both decide alike
                costs = [{"name": w["ref"]["name"], "spentMs": spent[records.index(w)]["ms"],
                          "rounds": spent[records.index(w)]["rounds"], "roundsLeft": rounds_total - r} for w in measuring]
                budget_ms = settings["budgetSeconds"] * 1000
                restart_ms = restarts["ms"] / restarts["times"] if restarts["times"] > 0 else 0
                ahead = restart_ms * restarts_from(r, rounds_total, settings["roundsPerProcess"])
                chosen = next_round(costs, budget_ms - elapsed * 1000 - ahead, min_rounds)
                expected = (expected_round_ms([c for c in costs if c["name"] in chosen])
                            + restart_ms * restarts_from(r, r + 1, settings["roundsPerProcess"]))
                if done > 0 and (not chosen or elapsed * 1000 + expected > budget_ms):
                    exhausted = True
                    break
                for w in measuring:
                    if w["ref"]["name"] not in chosen:
                        w["leftOut"] = w.get("leftOut", 0) + 1
                planned = [w for w in measuring if w["ref"]["name"] in chosen]
            else:
                per_round = 0 if done == 0 else elapsed / (done + 1)
                if done > 0 and elapsed + per_round > settings["budgetSeconds"]:
                    exhausted = True
                    break
            if calibration_rounds is not None and r >= calibration_rounds and worker["calibration"] is not None:
                # its rounds are done: the calibration worker goes (its stderr's tail kept)
                running(["calibration"], True)
                closed_logs["calibration"] = worker["calibration"].log()
                worker["calibration"].close()
                worker["calibration"] = None
                opened.pop("calibration", None)
            if r > 0 and r % settings["roundsPerProcess"] == 0:
                # fresh worker processes for the next rounds, all asked at once; a side that
                # cannot start again is done
                alive = [side for side in SIDES if worker.get(side) is not None
                         and any(side in sides_in(w, r) for w in measuring)]
                running(alive, True)
                restarting = time.monotonic()
                # the fresh processes import only the modules of the workloads still to measure
                # (restartModules False: the whole suite, as before; the verifier's choice)
                named = settings.get("restartModules", True)
                asked = [(side, worker[side].send_restart(still_measured(side, r) if named else None)) for side in alive]
                for side, ident in asked:
                    if worker[side].await_restart(ident)["ok"]:
                        continue
                    message = "the worker could not start again: {}".format(worker[side].dead)
                    for rec in records:
                        side_record = rec.get(side)
                        if side_record is not None and side_record["failure"] is None:
                            side_record["failure"] = {"status": "crashed", "message": message, "round": r}
                    worker[side] = None
                restarts["ms"] += (time.monotonic() - restarting) * 1000
                restarts["times"] += 1
                running(alive, False)
                if not any(measured_in(w, r) for w in records):
                    break
            steps = []
            for w in shuffled([w for w in planned if measured_in(w, r)], random):
                index = records.index(w)
                step_from = time.monotonic()
                # a single-value benchmark (mem, peakmem, track: no `number`) gives one value a batch:
                # its sides take turns by batch either way
                if by_sample and w["base"]["number"] is not None:
                    # sample by sample: every turn each side still measured runs one sample, in a new order
                    turns = []
                    # the base's turns of the workload's first round: what a sample's setup costs
                    probing = settings.get("samplesPerRound") == "by-setup" and w.get("samples") is None
                    setups, sampled = [], []
                    for k in range(w.get("samples") or settings["samples"]):
                        if not active(w):
                            break
                        sides = shuffled(sides_in(w, r), random)
                        turns.append("".join(SIDE_LETTER[s] for s in sides))
                        for side in sides:
                            account = run(w, side, r, first=(k == 0))
                            # the first turn's setup may hold a setup_cache and its warm-up: the later ones tell
                            if probing and side == "base" and account and (k > 0 or settings["samples"] == 1):
                                setups.append(account["setup"])
                                sampled.append(account["samples"])
                            if not active(w):
                                break
                    if probing and setups:
                        w["samples"] = samples_for_setup(settings["samples"], median(setups), median(sampled))
                    steps.append("{}:{}".format(index, "/".join(turns)))
                else:
                    sides = shuffled(sides_in(w, r), random)
                    steps.append("{}:{}".format(index, "".join(SIDE_LETTER[s] for s in sides)))
                    for side in sides:
                        run(w, side, r)
                        if not active(w):
                            break
                cost = spent[index]
                cost["ms"] = cost["ms"] + (time.monotonic() - step_from) * 1000
                cost["rounds"] += 1
            order.append(" ".join(steps))
            done += 1
            if on_round:
                on_round(done, time.monotonic() - started, len(planned))
            if settle and done in settings.get("looks", []) and done < rounds_planned:
                for name, outcome in settle(result(starts, records, done, exhausted)).items():
                    for w in records:
                        if w["ref"]["name"] == name and active(w):
                            w["settled"] = {"round": done, "as": outcome}
        return result(starts, records, done, exhausted)
    finally:
        running(opened, True)
        for w in opened.values():
            if w is not None:
                w.close()
