"""The verifier's correctness checks (perfmine_verify.py), each driven over a channel
(perfmine_channel.py) so that no verdict is read from a file the code under test could write:

  - the tests: pytest on each side with perfmine_pytest_channel.py, one test per request, every
    outcome answered as it happens; the run's exit status must agree with its outcomes;
  - the benchmarks' return values: perfmine_probe.py on each side runs every workload as asv
    does and answers its value's canonical encoding; the verifier compares the sides;
  - inputs the agent never saw: the calls the benchmarks make into the package (captured on the
    base), with their numbers perturbed from the task's hidden seed, made on each side and
    compared; the base calls each twice (a nondeterministic answer is left out) and, where the
    expert's patch is measured beside, an input on which the expert's answer differs from the
    base's is left out too (the expert changed that behaviour on purpose).
Each side's process runs as that side's user; with an account (perfmine_bench_account.py) it is
stopped between requests and each answer's CPU time is counted from outside.

Python 3.8+, standard library only.
"""

import json
import math
import os
import shutil
import time

import perfmine_channel as channel
import perfmine_probe as probe

OUTCOMES = ("passed", "failed", "error", "skipped")
#: Seconds for a process to start and say hello; to import the suite.
HELLO_SECONDS = 120.0
IMPORT_SECONDS = 900.0
#: Perturbed variants per captured call, and the CPU seconds they may cost on the base.
MAX_VARIANTS = 64
MIN_VARIANTS = 4
VARIANT_BUDGET = 2.0
INPUTS_BUDGET = 120.0


class SideFailed(Exception):
    """The side's process broke its channel or ran out of time: (what, why)."""

    def __init__(self, what, why):
        Exception.__init__(self, "{}: {}".format(what, why))
        self.what = what
        self.why = why


class Session:
    """A process of one side spoken to over the channel, stopped between requests when an account is given."""

    def __init__(self, argv, side, log_path, what, account=None, env=None, cwd=None):
        self.what = what
        self.account = account
        self.outside = 0.0
        if account is not None and not account.running:
            account.cont()
        self.child = channel.Child(argv, env or side.env(), cwd or side.scratch, log_path, preexec=side.preexec, what=what)

    def _window(self, action):
        """action() with the side continued, then stopped again; its CPU time counted from outside."""
        if self.account is None:
            return action()
        before = self.account.cpu()
        self.account.cont()
        try:
            return action()
        finally:
            self.account.stop()
            self.outside = self.account.cpu() - before

    def receive(self, kind, timeout):
        try:
            return self._window(lambda: self.child.receive(kind, timeout))
        except (channel.ChannelBroken, channel.ChannelTimeout) as exc:
            raise SideFailed(self.what, str(exc))

    def ask(self, request, kind, timeout):
        try:
            return self._window(lambda: self.child.ask(request, kind, timeout))
        except (channel.ChannelBroken, channel.ChannelTimeout) as exc:
            raise SideFailed(self.what, str(exc))

    def finish(self, timeout):
        if self.account is not None:
            self.account.cont()
        try:
            return self.child.finish(timeout)
        except channel.ChannelBroken as exc:
            raise SideFailed(self.what, str(exc))
        finally:
            self.child.close()

    def close(self):
        if self.account is not None:
            self.account.cont()
        self.child.close()


# ---------------------------------------------------------------- the tests


def run_tests(side, argv_tail, timeout, log_path, staging, account=None):
    """{nodeid: outcome} of one side's test run, driven test by test; SideFailed when the run breaks
    its channel, runs out of time, or exits with a status its outcomes contradict."""
    argv = [side.python, "-m", "pytest", "-p", "no:cacheprovider", "-p", "perfmine_pytest_channel", "-q",
            "--continue-on-collection-errors", "--rootdir", side.copy] + list(argv_tail)
    path = staging + (os.pathsep + side.env()["PYTHONPATH"] if side.env().get("PYTHONPATH") else "")
    env = dict(side.env(), PYTEST_DISABLE_PLUGIN_AUTOLOAD="1", PYTHONPATH=path)
    deadline = time.monotonic() + timeout
    session = Session(argv, side, log_path, "the {} side's test run".format(side.label), account, env, cwd=side.copy)

    def left():
        return max(1.0, deadline - time.monotonic())

    try:
        session.receive("hello", min(left(), HELLO_SECONDS))
        collected = session.receive("collected", left())
        items = collected.get("items")
        errors = collected.get("errors")
        if not isinstance(items, list) or not all(isinstance(i, str) for i in items) or len(set(items)) != len(items) \
                or not isinstance(errors, int) or isinstance(errors, bool):
            raise SideFailed(session.what, "a collection answer of the wrong shape")
        outcomes = {}
        for i, nodeid in enumerate(items):
            if time.monotonic() >= deadline:
                raise SideFailed(session.what, "ran out of its {:.0f} s at test {}".format(timeout, nodeid))
            r = session.ask({"op": "run", "i": i}, "result", left())
            if r.get("i") != i or r.get("nodeid") != nodeid or r.get("outcome") not in OUTCOMES:
                raise SideFailed(session.what, "an answer for another test than {} (or of the wrong shape)".format(nodeid))
            outcomes[nodeid] = r["outcome"]
        session.ask({"op": "end"}, "end", left())
        finished = session.receive("finished", left())
        status = finished.get("exitstatus")
        code = session.finish(left())
        session = None
    finally:
        if session is not None:
            session.close()
    failed = errors > 0 or any(o in ("failed", "error") for o in outcomes.values())
    if code != status:
        raise SideFailed("the {} side's test run".format(side.label),
                         "it said pytest's exit status was {} and exited {}".format(status, channel.describe(code)))
    if failed and status not in (1, 2, 3):
        raise SideFailed("the {} side's test run".format(side.label),
                         "exit status {} with failed tests or collection errors".format(status))
    if not failed and status not in (0, 5):
        raise SideFailed("the {} side's test run".format(side.label), "exit status {} with every test passed".format(status))
    return {"outcomes": outcomes, "collection_errors": errors, "exitstatus": status}


def regressions(on_base, on_working):
    passed = sorted(t for t, o in on_base.items() if o == "passed")
    return passed, [{"test": t, "working": on_working.get(t, "not-run")} for t in passed if on_working.get(t) != "passed"]


# ---------------------------------------------------------------- the probe


class Probe:
    """perfmine_probe.py on one side."""

    def __init__(self, side, staging, config, roots, call_seconds, log_path, account=None, env_extra=None):
        argv = [side.python, os.path.join(staging, "perfmine_probe.py"), "--config", config,
                "--call-seconds", str(call_seconds)]
        for root in roots:
            argv += ["--root", root]
        env = dict(side.env(), **(env_extra or {}))
        self.session = Session(argv, side, log_path, "the {} side's probe".format(side.label), account, env)
        self.session.receive("hello", HELLO_SECONDS)
        ready = self.session.receive("ready", IMPORT_SECONDS)
        self.workloads = ready.get("workloads") if isinstance(ready.get("workloads"), list) else []
        self.errors = ready.get("errors") or []
        self.call_seconds = call_seconds

    def value(self, name):
        answer = self.session.ask({"op": "value", "workload": name}, "value", self.call_seconds * 3 + 60)
        if answer.get("workload") != name:
            raise SideFailed(self.session.what, "a value for another workload than {}".format(name))
        return answer

    def capture(self, name, limit=20):
        answer = self.session.ask({"op": "capture", "workload": name, "limit": limit}, "captured", self.call_seconds * 2 + 60)
        if answer.get("workload") != name or not isinstance(answer.get("calls"), list):
            raise SideFailed(self.session.what, "a capture for another workload than {}".format(name))
        return answer

    def call(self, variant, repeat, seconds):
        request = {"op": "call", "function": variant["function"], "args": variant["args"], "kwargs": variant["kwargs"],
                   "repeat": repeat, "seconds": seconds}
        answer = self.session.ask(request, "called", seconds * repeat + 60)
        values = answer.get("values")
        if not isinstance(values, list) or len(values) > repeat:
            raise SideFailed(self.session.what, "a call answer of the wrong shape")
        answer["outside"] = self.session.outside
        return answer

    def time_calls(self, calls, seconds, steady):
        """Each call's first call and its time per call repeated (the side's own clock): ([[first,
        steady] or None], outside CPU seconds)."""
        answer = self.session.ask({"op": "time", "calls": calls, "seconds": seconds, "steady": steady}, "timed",
                                  (seconds + steady) * len(calls) * 2 + 60)
        out = answer.get("seconds")
        ok = isinstance(out, list) and len(out) == len(calls) and all(
            x is None or (isinstance(x, list) and len(x) == 2 and all(y is None or number(y) or y == 0 for y in x)) for x in out)
        if not ok:
            raise SideFailed(self.session.what, "a timing answer of the wrong shape")
        return [x if x is not None and number(x[0]) and number(x[1]) else None for x in out], self.session.outside

    def close(self):
        try:
            self.session.child.send({"op": "exit"})
            self.session.finish(30)
        except (SideFailed, channel.ChannelBroken):
            self.session.close()


def shown(encoding, limit=120):
    text = json.dumps(encoding)
    return text if len(text) <= limit else text[:limit] + "..."


def first(answer):
    """(first call, second call) CPU seconds of a value answer, or None."""
    seconds = answer.get("seconds") if answer else None
    if isinstance(seconds, list) and len(seconds) == 2 and all(number(x) for x in seconds):
        return tuple(seconds)
    return None


def values_check(base, working, reference=None):
    """The benchmarks' return values, side by side: (mismatches, counts, per-workload first-call
    seconds {name: (base, working, reference, the base's steady time per call)}, per-workload value
    hashes {name: (base, working)})."""
    mismatches, counts, cold, hashes = [], {"equal": 0, "mismatch": 0, "skipped": 0}, {}, {}
    working_names = set(working.workloads)
    for name in base.workloads:
        b = base.value(name)
        if b.get("status") != "ok" or not b.get("deterministic"):
            counts["skipped"] += 1
            continue
        r = None
        if reference is not None and name in reference.workloads:
            r = reference.value(name)
            if r.get("status") == "ok" and not probe.same(r.get("value"), b.get("value")):
                counts["skipped"] += 1
                continue
        if name not in working_names:
            mismatches.append({"name": name, "reason": "the working side has no such workload"})
            continue
        w = working.value(name)
        if w.get("status") != "ok":
            why = w.get("error") or w.get("reason") or w.get("status")
            mismatches.append({"name": name, "reason": "{} on the working side: {}".format(w.get("status"), str(why)[:200])})
        elif not probe.same(w.get("value"), b.get("value")):
            mismatches.append({"name": name, "reason": "base {}, working {}".format(shown(b.get("value")), shown(w.get("value")))})
        else:
            counts["equal"] += 1
            cold[name] = (first(b), first(w), first(r) if r is not None and r.get("status") == "ok" else None,
                          b.get("steady") if number(b.get("steady")) else None)
            hashes[name] = (probe.value_hash(b["value"]), probe.value_hash(w["value"]))
    counts["mismatch"] = len(mismatches)
    return mismatches, counts, cold, hashes


def variant_plan(capture, seed):
    """The perturbed variants of a workload's captured calls, within the budget."""
    plan = []
    for call in capture.get("calls") or []:
        if not isinstance(call, dict) or not isinstance(call.get("function"), dict):
            continue
        seconds = call.get("seconds")
        seconds = seconds if isinstance(seconds, (int, float)) and seconds > 0 else 0.01
        count = int(max(MIN_VARIANTS, min(MAX_VARIANTS, VARIANT_BUDGET / max(seconds, 1e-6))))
        far = 2 if seconds < 0.005 else 0
        limit = max(1.0, 20 * seconds)
        for v in probe.variants(call, seed, count, far):
            plan.append((v, limit, seconds))
    return plan


def inputs_check(base, working, reference, workloads, seed, budget=INPUTS_BUDGET):
    """The package's functions the benchmarks call, on perturbed inputs: (mismatches, counts,
    per-workload captures (the base's), per-workload entry functions [[module, qualname]])."""
    mismatches, counts, captures, entries = [], {"compared": 0, "skipped": 0, "calls": 0}, {}, {}
    seen = set()
    started = time.monotonic()
    for name in workloads:
        if name not in base.workloads:
            continue
        capture = captures[name] = base.capture(name)
        counts["calls"] += len(capture.get("calls") or [])
        entries[name] = sorted({(c["function"].get("module"), c["function"].get("qualname")) for c in capture.get("calls") or []
                                if isinstance(c, dict) and isinstance(c.get("function"), dict)})
        for variant, limit, original in variant_plan(capture, "{}|{}".format(seed, name)):
            if time.monotonic() - started > budget:
                counts["skipped"] += 1
                continue
            key = json.dumps(variant, sort_keys=True)
            if key in seen:
                continue
            seen.add(key)
            b = base.call(variant, 2, limit)
            values = b.get("values") or []
            if b.get("status") != "ok" or len(values) != 2 or not probe.same(values[0], values[1]):
                counts["skipped"] += 1
                continue
            if reference is not None:
                r = reference.call(variant, 1, limit)
                if r.get("status") != "ok" or not r.get("values") or not probe.same(r["values"][0], values[0]):
                    counts["skipped"] += 1
                    continue
            w = working.call(variant, 1, limit)
            counts["compared"] += 1
            wv = (w.get("values") or [None])[0]
            if w.get("status") != "ok" or wv is None or not probe.same(wv, values[0]):
                mismatches.append({
                    "workload": name, "function": "{}.{}".format(variant["function"]["module"], variant["function"]["qualname"]),
                    "args": shown([variant["args"], variant["kwargs"]], 200),
                    "base": shown(values[0]), "working": shown(wv) if w.get("status") == "ok" else w.get("status"),
                })
                continue
    return mismatches, counts, captures, entries


def number(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) and x > 0


#: Seconds each perturbed input of the memoisation timing is repeated for (its time per call).
STEADY_SECONDS = 0.005


def median(values):
    values = sorted(values)
    n = len(values)
    return None if n == 0 else values[n // 2] if n % 2 else (values[n // 2 - 1] + values[n // 2]) / 2


def memo_timings(base, working, reference, captures, seed, budget=60.0):
    """Per workload, timings taken inside each side's own process (a process's memory layout moves a
    call's time by tens of percent from one process to the next; ratios within one process do not
    carry that): its entry calls on the timed inputs, and on fresh perturbed inputs (drawn apart
    from the correctness check's, so that no side has seen them) that cost the base between half
    and twice what the timed inputs did (inputs that do the same work), each called once and then
    repeated. {name: {"inputs": n, "relative": {side: the timed inputs' time per call over the
    perturbed ones'}, "first_over_repeat": {side: median over the perturbed inputs of the first
    call over a repeated one}, "timed": {side: the timed inputs' summed time per call}}}."""
    out = {}
    started = time.monotonic()
    sides = {"base": base, "working": working}
    if reference is not None:
        sides["reference"] = reference
    for name, capture in captures.items():
        if time.monotonic() - started > budget:
            break
        plan = variant_plan(capture, "{}|{}|timing".format(seed, name))
        originals = [{k: c[k] for k in ("function", "args", "kwargs")} for c in capture.get("calls") or []
                     if isinstance(c, dict) and isinstance(c.get("function"), dict)]
        if not plan or not originals:
            continue
        limit = max(l for _, l, _ in plan)
        calls = [v for v, _, _ in plan]
        timed_base, _ = base.time_calls(originals, limit, STEADY_SECONDS)
        cost = {json.dumps(c["function"], sort_keys=True): t[1] for c, t in zip(originals, timed_base) if t is not None}
        seen_base, _ = base.time_calls(calls, limit, STEADY_SECONDS)
        matched = [i for i, v in enumerate(calls) if seen_base[i] is not None
                   and number(cost.get(json.dumps(v["function"], sort_keys=True)))
                   and 0.5 <= seen_base[i][1] / cost[json.dumps(v["function"], sort_keys=True)] <= 2.0]
        if len(matched) < 3:
            continue
        chosen = [calls[i] for i in matched]
        seen = {"base": ([seen_base[i] for i in matched], timed_base)}
        for side, session in sides.items():
            if side != "base":
                seen[side] = (session.time_calls(chosen, limit, STEADY_SECONDS)[0],
                              session.time_calls(originals, limit, STEADY_SECONDS)[0])
        keep = [i for i in range(len(chosen)) if all(seen[side][0][i] is not None for side in seen)]
        if len(keep) < 3 or not all(all(t is not None for t in seen[side][1]) for side in seen):
            continue
        entry = {"inputs": len(keep), "relative": {}, "first_over_repeat": {}, "timed": {}}
        for side, (perturbed, timed) in seen.items():
            entry["timed"][side] = sum(t[1] for t in timed)
            entry["relative"][side] = sum(t[1] for t in timed) / len(timed) / (sum(perturbed[i][1] for i in keep) / len(keep))
            entry["first_over_repeat"][side] = median([perturbed[i][0] / perturbed[i][1] for i in keep])
        out[name] = entry
    return out


def copy_into(files, folder):
    """The trusted files the sides' users must read, copied to a folder they can read (the tests
    directory itself may be root's alone)."""
    os.makedirs(folder, exist_ok=True)
    os.chmod(folder, 0o755)
    for name, path in files:
        target = os.path.join(folder, name)
        shutil.copyfile(path, target)
        os.chmod(target, 0o644)
    return folder
