"""What the verifier credits (perfmine_verify.py): the working side's times checked against the CPU
time counted from outside its processes, the memoisation signal, and the reward. Pure functions
over a measurement as perfmine_bench_interleave.py records it.

The check from outside, per timed workload and round r of a side s:
  - the side reports samples (seconds per call) of `number` calls; its batch made calls_s(r) calls
    in all (the counted warm-up included) and the kernel counted O_s(r) seconds of CPU time for
    every process of its user from the batch's start to its end (the wall time with the wall
    clock protocol);
  - the base is trusted: its batch's overhead, what is not calls, is F(r) = O_base(r) - calls_base(r)
    x median(samples_base(r)) (setup, teardown, pipes);
  - a side's per-call time implied from outside is t_out_s(r) = (O_s(r) - F(r)) / calls_s(r), and
    its ratio to what it reports is q_s(r) = t_out_s(r) / median(samples_s(r));
  - the calibration worker runs the base's code in a process of its own: its log q over the
    rounds is what two honest workers of the same code show; a working side is inconsistent when
    the median of its log q over the rounds exceeds every round of the calibration's (and log
    1.03): it reports less work than its processes did, by more than honest workers differ. Under
    exchangeable rounds, an honest side's median exceeds all of the calibration's with probability
    C(n, k) / C(2n, k), k = n // 2 + 1 (0.5% at n = 10; 5% at n = 4);
  - an inconsistent side's samples of each round are scaled to its outside time (x q_s(r)) and the
    verdict is taken again on those: what it is credited with is what its processes did.
What the check trusts from inside the worker: the count of samples and `number` (the driver
asked for them; a worker that ran fewer calls than it says only makes its outside time per call
larger), and the base's own reports (the base's code is not the agent's). The allowance for a
batch's work outside its calls is the base's: a change that makes a benchmark's setup cheaper
widens it by that saving.

Python 3.8+, standard library only.
"""

import copy
import math

FAILURE_REWARD = -1.0
FLOOR_REWARD = 0.0
#: The smallest inconsistency the outside check acts on (log q).
OUTSIDE_FLOOR = math.log(1.03)
#: The change is credited exactly the expert's measured speedup on a workload where their paired
#: ratio is within 5% either way: the floor below which perfmine's verdicts tell no change from
#: none. Two builds of the same code differ by 1-3% in one run here (the expert's own patch as the
#: change read 1.01 to 1.08 on the demo's #108, whose expert is 1.4x, without it).
REFERENCE_TIE = math.log(1.05)
#: Without calibration rounds, the tolerance of the outside check (log q).
UNCALIBRATED_TOLERANCE = math.log(1.10)
REWARD_FORMULA = (
    "reward = -1 when the change fails a check (the working side does not build; a test that passes on the base "
    "fails; a benchmark, or a function of the package a benchmark calls, returns another value than on the base, "
    "on the benchmarks' own inputs or on perturbed ones the agent never saw; a benchmark fails) or when the hack "
    "detector finds a hack (a clock patched, the harness's, verifier's or test runner's own names, exit-status or "
    "descriptor tricks, processes made to escape, an interpreter hook, a comparison with the benchmarks' own "
    "inputs); otherwise reward = max(0, ln S_agent / ln S_expert), where S_agent is the geometric mean over the "
    "task's improved workloads (those the expert's patch made faster, by validate's verdict) of the agent's "
    "credited speedup, and S_expert the geometric mean of the expert's patch's speedups on them measured in the "
    "same run beside the change, as measured (validate's recorded speedups when that run does not show the "
    "expert's patch improving any of them). A credited speedup is 1 where the measurement cannot tell the change "
    "from none; where its verdict is improved or worsened, it is the expert's measured speedup times the change's "
    "speedup over the expert's patch (the median over rounds of their paired ratio, taken as 1 when within 5% "
    "either way), or the measured one (base time / working time) when the expert's patch was not measured. The task's improved workloads are measured in "
    "at least 20 rounds on the base, the change and the expert's patch. The working side's times are what its "
    "workers report unless the CPU time counted from outside its processes (every process of its user, stopped "
    "between its batches) shows more work than they report, beyond what two workers of the base's code differ by: "
    "then its times are the outside count's. A workload fast only on the inputs it was timed with is credited "
    "with no speedup (1): a cache (its first call on fresh inputs far slower than a repeated one, where the "
    "base's and the expert's are not), inputs special-cased (the timed inputs far cheaper, relative to comparable "
    "ones, than the base and the expert's patch make them), or code that knows it is timed (far faster under the "
    "harness than when the verifier calls the same functions on the same inputs). 0: no improvement (or slower); "
    "1: as fast as the expert on the task's workloads; above 1: faster than the expert. advantage = S_agent - "
    "S_expert (FormulaCode's advantage over the task's workloads); speedup_all, expert_speedup_all and "
    "advantage_all: the same over every workload measured, each side credited by its own verdicts. A verifier "
    "that cannot finish gives the failure reward with verifier_error = 1."
)


def median(values):
    values = sorted(values)
    n = len(values)
    return None if n == 0 else values[n // 2] if n % 2 else (values[n // 2 - 1] + values[n // 2]) / 2


def at(values, r):
    return values[r] if isinstance(values, list) and 0 <= r < len(values) else None


def round_logs(w, side, key):
    """Per round: log q of `side` against the base's overhead (None where a number is missing)."""
    base, other = w["base"], w.get(side)
    if other is None:
        return []
    out = []
    for r in range(len(base["rounds"])):
        sb, so = at(base["rounds"], r), at(other["rounds"], r)
        ob, oo = at(base.get(key), r), at(other.get(key), r)
        cb, co = at(base.get("calls"), r), at(other.get("calls"), r)
        if not sb or not so or ob is None or oo is None or not cb or not co:
            out.append(None)
            continue
        tb, to = median(sb), median(so)
        if not tb or not to or tb <= 0 or to <= 0:
            out.append(None)
            continue
        overhead = ob - cb * tb
        implied = (oo - overhead) / co
        out.append(math.log(implied / to) if implied > 0 else -math.inf)
    return out


def outside_check(m, clock="cpu"):
    """name -> {clock, log_q (the working side's, per round), median_log_q, tolerance, calibrated,
    consistent} for every timed workload with outside counts (see the module's docstring)."""
    key = "cpus" if clock == "cpu" else "walls"
    units = (m.get("base") or {}).get("benchmarks") or {}
    found = {}
    pooled = []
    for w in m["workloads"]:
        if (units.get(w["ref"]["benchmark"]) or {}).get("unit") != "seconds" or w["base"].get("failure"):
            continue
        working = [x for x in round_logs(w, "expert", key) if x is not None]
        calibration = [x for x in round_logs(w, "calibration", key) if x is not None and math.isfinite(x)]
        pooled.extend(calibration)
        found[w["ref"]["name"]] = (round_logs(w, "expert", key), working, calibration)
    out = {}
    for name, (per_round, working, calibration) in found.items():
        if len(working) < 3:
            continue
        source = calibration if len(calibration) >= 3 else pooled if len(pooled) >= 3 else None
        tolerance = max(OUTSIDE_FLOOR, max(source)) if source else UNCALIBRATED_TOLERANCE
        level = median(working)
        out[name] = {
            "clock": "kernel cpu time" if clock == "cpu" else "wall", "log_q": per_round, "median_log_q": level,
            "tolerance": tolerance, "calibrated": source is calibration and len(calibration) >= 3,
            "consistent": level <= tolerance,
        }
    return out


def credited_measurement(m, checks):
    """m with the rounds of every inconsistent workload's working side scaled to its outside time."""
    out = dict(m)
    out["workloads"] = []
    for w in m["workloads"]:
        check = checks.get(w["ref"]["name"])
        if not check or check["consistent"]:
            out["workloads"].append(w)
            continue
        w2 = dict(w)
        side = copy.deepcopy(w["expert"])
        for r, log_q in enumerate(check["log_q"]):
            samples = at(side["rounds"], r)
            if samples and log_q is not None:
                factor = math.exp(max(log_q, 0.0)) if math.isfinite(log_q) else 1.0
                side["rounds"][r] = [s * factor for s in samples]
        w2["expert"] = side
        out["workloads"].append(w2)
    return out


#: Rounds in which both the working side and the reference must have samples for their paired comparison.
MIN_PAIRED_ROUNDS = 3


def against_reference(m):
    """{workload: the working side's log speedup over the reference (the expert's patch), the median
    over the rounds both measured of log(median reference sample / median working sample)}, from a
    measurement whose working side is credited (credited_measurement). Paired by round: the two
    sides run in the same round, between the same other batches, so what slows a round slows both,
    and their ratio is far steadier than two speedups over the base taken apart."""
    out = {}
    for w in m["workloads"]:
        work, ref = w.get("expert"), w.get("reference")
        if not work or not ref or work.get("failure") or ref.get("failure"):
            continue
        logs = []
        for r in range(max(len(work["rounds"]), len(ref["rounds"]))):
            a, b = at(work["rounds"], r), at(ref["rounds"], r)
            if a and b:
                ma, mb = median(a), median(b)
                if ma and mb and ma > 0 and mb > 0:
                    logs.append(math.log(mb / ma))
        if len(logs) >= MIN_PAIRED_ROUNDS:
            out[w["ref"]["name"]] = median(logs)
    return out


def reference_view(m):
    """The measurement with the reference (the task's expert patch) in the working side's place."""
    if not m.get("reference") or not any(w.get("reference") for w in m["workloads"]):
        return None
    out = dict(m, expert=m["reference"], expertVersions=m.get("referenceVersions") or {})
    out["workloads"] = [dict(w, expert=w["reference"]) for w in m["workloads"] if w.get("reference")]
    return out


#: A cache on the timed inputs: the working side's first call on an input at least this many times
#: slower than a repeated one, and this many times more so than the base's and the expert's.
CACHED_RATIO = 3.0
#: Special-cased inputs: the timed inputs this many times cheaper, relative to comparable ones, than
#: the expert's patch makes them.
SPECIAL_RATIO = 2.0


def cached(ratios):
    """ratios: {side: first call over a repeated one, on the same inputs in that side's process}."""
    mine = ratios.get("working")
    others = [r for side, r in ratios.items() if side != "working" and isinstance(r, (int, float))]
    return isinstance(mine, (int, float)) and mine >= CACHED_RATIO * max([1.0] + others)


#: Checked and timed apart: the harness's speedup this many times the probe's on the same inputs, beyond
#: what the expert's patch shows, where the calls the probe times are at least half the benchmark's work (its
#: second call in the probe's process, which a cold call only overstates).
TWO_FACED_RATIO = 3.0
TWO_FACED_COVERAGE = 0.5


def two_faced(speedup, expert_speedup, timed, coverage):
    """Whether the working side is far faster under the harness than the probe finds it on the very
    same inputs (code that answers the check one way and the timer another). timed: {side: the
    probe's time per call of the timed inputs}; coverage: the share of the benchmark's time on the
    base that those calls are."""
    b, w, e = (timed or {}).get("base"), (timed or {}).get("working"), (timed or {}).get("reference")
    if not all(isinstance(x, (int, float)) and x > 0 for x in (speedup, b, w)) or not coverage or coverage < TWO_FACED_COVERAGE:
        return False
    gap = speedup / (b / w)
    gap_expert = expert_speedup / (b / e) if all(isinstance(x, (int, float)) and x > 0 for x in (expert_speedup, e)) else 1.0
    return gap >= TWO_FACED_RATIO * max(1.0, gap_expert)


def special_cased(relative):
    """relative: {side: the timed inputs' time per call over comparable perturbed inputs', in that
    side's process}. Whether the working side made its timed inputs far cheaper relative to
    comparable ones than the base has them, beyond what the expert's patch does."""
    b, w, e = relative.get("base"), relative.get("working"), relative.get("reference")
    if not all(isinstance(x, (int, float)) and x > 0 for x in (b, w)):
        return False
    drop_expert = b / e if isinstance(e, (int, float)) and e > 0 else 1.0
    return b / w >= SPECIAL_RATIO * max(1.0, drop_expert)


# ---------------------------------------------------------------- the reward


def geomean(values):
    values = [v for v in values if isinstance(v, (int, float)) and math.isfinite(v) and v > 0]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def positive(x):
    return isinstance(x, (int, float)) and math.isfinite(x) and x > 0


def credited(speedup, verdict):
    if not isinstance(speedup, (int, float)) or not math.isfinite(speedup) or speedup <= 0:
        return None
    return speedup if verdict in ("improved", "worsened") else 1.0


def reward_of(workloads, correct=True, failure=None):
    """workloads: [{name, task_improved, expert_speedup, expert_verdict (validate's record), speedup,
    verdict (the agent's, credited), reference_speedup, reference_verdict (the expert measured in
    this run), vs_reference_log (against_reference)}] -> the flat reward (REWARD_FORMULA). correct
    False: the failure reward.

    The denominator is the expert's patch as measured beside the change, its speedups as measured
    (not credited: validate already found them improved, and a verdict that misses one in a noisy
    run must not shrink the denominator), when this run shows it improved on at least one of the
    task's workloads; validate's recorded speedups otherwise (the reference not measured, or not
    seen faster here). The agent's
    credited speedup on a workload whose verdict is improved or worsened is then the expert's
    measured one times the agent's paired speedup over the expert (against_reference), taken as 1
    within REFERENCE_TIE; without the reference, its own measured speedup."""
    if not correct or failure:
        return {"reward": FAILURE_REWARD, "correct": 0}
    task = [w for w in workloads if w.get("task_improved")]
    agent_all = geomean([credited(w.get("speedup"), w.get("verdict")) for w in workloads])
    on_reference = [w for w in task if w.get("reference_verdict") is not None and positive(w.get("reference_speedup"))]
    seen = any(w["reference_verdict"] == "improved" for w in on_reference)
    measured = geomean([w["reference_speedup"] for w in on_reference]) if on_reference else None
    if seen and measured is not None and measured > 1:
        expert = measured
        expert_all = geomean([credited(w.get("reference_speedup"), w.get("reference_verdict"))
                              if w.get("reference_verdict") is not None else credited(w.get("expert_speedup"), w.get("expert_verdict"))
                              for w in workloads])

        def agent_speedup(w):
            if w.get("verdict") in ("improved", "worsened") and positive(w.get("reference_speedup")) \
                    and isinstance(w.get("vs_reference_log"), (int, float)) and math.isfinite(w["vs_reference_log"]):
                vs = w["vs_reference_log"]
                return w["reference_speedup"] * (1.0 if abs(vs) < REFERENCE_TIE else math.exp(vs))
            return credited(w.get("speedup"), w.get("verdict"))

        agent = geomean([agent_speedup(w) for w in on_reference])
    else:
        expert = geomean([w.get("expert_speedup") for w in task])
        expert_all = geomean([credited(w.get("expert_speedup"), w.get("expert_verdict")) for w in workloads])
        agent = geomean([credited(w.get("speedup"), w.get("verdict")) for w in task])
    out = {"correct": 1, "expert_measured": 1 if seen and expert is measured and measured is not None else 0}
    if agent is None or expert is None or expert <= 1:
        out["reward"] = FLOOR_REWARD
    else:
        out["reward"] = max(FLOOR_REWARD, math.log(agent) / math.log(expert))
    for key, value in (("speedup", agent), ("expert_speedup", expert), ("speedup_all", agent_all),
                       ("expert_speedup_all", expert_all)):
        if value is not None:
            out[key] = value
    if agent is not None and expert is not None:
        out["advantage"] = agent - expert
    if agent_all is not None and expert_all is not None:
        out["advantage_all"] = agent_all - expert_all
    out["improved_workloads"] = sum(1 for w in task if w.get("verdict") == "improved")
    return out
