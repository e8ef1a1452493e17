"""perfmine-bench's verdict: perfmine's paired keep verdict, ported from the TypeScript of
stages/validate/paired/ (options.ts, stats.ts, student-t.ts, noise.ts, holm.ts, rule.ts,
calibration.ts, verdict.ts, sequential.ts) and the harness's pair tables of
stages/validate/harness/tables.ts, so that `perfmine-bench compare` decides exactly as validate does.

Same options (camelCase keys as in validate.paired), same decisions, same numbers: the test
test/bench-tool/verdict-parity.test.ts runs both on seeded cases and requires identical changes and
reasons and numbers equal within 1e-9 relative. A change to one side must be made to the other.

Data shapes mirror the TypeScript objects (dicts with the same camelCase keys): a measurement is
{"rounds", "roundsPerProcess", "baseVersions", "expertVersions", "workloads": [record]}, a record
{"ref": {"name", "benchmark", "param"}, "base": side, "expert": side, "calibration": side or None,
"calibrationBase": None, "settled": None}, a side {"number", "rounds": [[samples] or None],
"failure": {"status", "message", "round"} or None}.

Python 3.8+, standard library only. Pure: no IO.
"""

import math

DEFAULT_PAIRED = {
    "minPairs": 3,
    "consistency": 0.75,
    "alpha": 0.01,
    "thresholdFloor": 1.05,
    "safetyFactor": 1.5,
    "maxPriorDf": 30,
    "minCalibrationPairs": 2,
    "minNormalizationWorkloads": 5,
}
DEFAULT_ADAPTIVE = {"looks": [6, 10, 15], "earlyAlphaShare": 0.15, "futility": 0.001}

CHANGES = ("improved", "worsened", "unchanged", "incomparable")


# ---------------------------------------------------------------- order statistics (stats.ts)


def total(values):
    """Left-to-right sum from 0, as JavaScript's reduce (Python 3.12's sum() compensates)."""
    out = 0
    for v in values:
        out += v
    return out


def median(values):
    if not values:
        return None
    s = sorted(values)
    mid = len(s) >> 1
    return s[mid] if len(s) % 2 == 1 else (s[mid - 1] + s[mid]) / 2


def quantile(values, q):
    """Linear interpolation between order statistics (numpy's default, asv_runner's quantile)."""
    if not values:
        return None
    y = sorted(values)
    n = len(y)
    z = (n - 1) * q
    j = int(math.floor(z))
    z -= j
    return y[n - 1] if j == n - 1 else (1 - z) * y[j] + z * y[j + 1]


def log_of(x):
    """log(x) for a usable timing (a positive finite number), else None."""
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return None
    return math.log(x) if math.isfinite(x) and x > 0 else None


def present(values):
    return [v for v in values if v is not None]


# ---------------------------------------------------------------- Student's t (student-t.ts)

LANCZOS = [
    0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059,
    12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7,
]


def log_gamma(x):
    if x < 0.5:
        return math.log(math.pi / abs(math.sin(math.pi * x))) - log_gamma(1 - x)
    z = x - 1
    s = LANCZOS[0]
    for i in range(1, 9):
        s += LANCZOS[i] / (z + i)
    t = z + 7.5
    return 0.5 * math.log(2 * math.pi) + (z + 0.5) * math.log(t) - t + math.log(s)


def beta_fraction(x, a, b):
    tiny = 1e-300
    c = 1.0
    d = 1 - ((a + b) * x) / (a + 1)
    if abs(d) < tiny:
        d = tiny
    d = 1 / d
    h = d
    for m in range(1, 1001):
        m2 = 2 * m
        aa = (m * (b - m) * x) / ((a + m2 - 1) * (a + m2))
        d = 1 + aa * d
        if abs(d) < tiny:
            d = tiny
        c = 1 + aa / c
        if abs(c) < tiny:
            c = tiny
        d = 1 / d
        h *= d * c
        aa = (-(a + m) * (a + b + m) * x) / ((a + m2) * (a + m2 + 1))
        d = 1 + aa * d
        if abs(d) < tiny:
            d = tiny
        c = 1 + aa / c
        if abs(c) < tiny:
            c = tiny
        d = 1 / d
        delta = d * c
        h *= delta
        if abs(delta - 1) < 1e-15:
            break
    return h


def incomplete_beta(x, a, b):
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    front = math.exp(log_gamma(a + b) - log_gamma(a) - log_gamma(b) + a * math.log(x) + b * math.log(1 - x))
    if x < (a + 1) / (a + b + 2):
        return (front * beta_fraction(x, a, b)) / a
    return 1 - (front * beta_fraction(1 - x, b, a)) / b


def student_t_upper(t, df):
    """P(T > t) for Student's t with df degrees of freedom."""
    if t < 0:
        return 1 - student_t_upper(-t, df)
    if not math.isfinite(df):
        return 0.5 * math.erfc(t / math.sqrt(2))
    return 0.5 * incomplete_beta(df / (df + t * t), df / 2, 0.5)


def student_t_upper_quantile(upper, df):
    """The t with P(T > t) = upper (bisection to 1e-12 relative)."""
    if not 0 < upper < 1:
        raise ValueError("tail probability must be in (0, 1), got {}".format(upper))
    if upper == 0.5:
        return 0.0
    if upper > 0.5:
        return -student_t_upper_quantile(1 - upper, df)
    lo, hi = 0.0, 1.0
    while student_t_upper(hi, df) > upper:
        lo = hi
        hi *= 2
        if hi > 1e12:
            return hi
    i = 0
    while i < 200 and hi - lo > 1e-12 * hi:
        mid = (lo + hi) / 2
        if student_t_upper(mid, df) > upper:
            lo = mid
        else:
            hi = mid
        i += 1
    return (lo + hi) / 2


# ---------------------------------------------------------------- noise (noise.ts)

CLIP = 3
CLIP_MIN_DF = 10
MIN_PRIOR_WORKLOADS = 8
MEDIAN_VARIANCE_FACTOR = [
    1.0, 1.0, 1.346, 1.1928, 1.4342, 1.2885, 1.4731, 1.3454, 1.4949, 1.3833, 1.5088, 1.4102, 1.5184, 1.4303,
    1.5254, 1.446, 1.5308, 1.4585, 1.535, 1.4687, 1.5385, 1.4773, 1.5413, 1.4845, 1.5437, 1.4906, 1.5457,
    1.496, 1.5474, 1.5007, 1.5489, 1.5048, 1.5503, 1.5085, 1.5514, 1.5117, 1.5525, 1.5147, 1.5534, 1.5174,
]


def pooled_variance(groups):
    """(variance or None, df): squared deviations from each group's median, winsorized."""
    residuals = []
    df = 0
    for g in groups:
        if len(g) < 2:
            continue
        m = median(g)
        residuals.extend(x - m for x in g)
        df += len(g) - 1
    if df == 0:
        return None, 0
    robust = 1.4826 * median([abs(r) for r in residuals])
    limit = CLIP * robust if robust > 0 and df >= CLIP_MIN_DF else math.inf
    ss = 0
    for r in residuals:
        ss += min(abs(r), limit) ** 2
    return ss / df, df


def digamma(x):
    r = 0
    while x < 10:
        r -= 1 / x
        x += 1
    f = 1 / (x * x)
    return r + math.log(x) - 0.5 / x - f * (1 / 12 - f * (1 / 120 - f * (1 / 252 - f * (1 / 240 - f / 132))))


def trigamma(x):
    r = 0
    while x < 10:
        r += 1 / (x * x)
        x += 1
    f = 1 / (x * x)
    return r + 1 / x + f / 2 + (f / x) * (1 / 6 - f * (1 / 30 - f * (1 / 42 - f / 30)))


def tetragamma(x):
    r = 0
    while x < 10:
        r -= 2 / (x * x * x)
        x += 1
    f = 1 / (x * x)
    return r - f * (1 + 1 / x + f * (0.5 - f * (1 / 6 - f * (1 / 6 - f * (3 / 10 - (5 / 6) * f)))))


def trigamma_inverse(y):
    if y > 1e7:
        return 1 / math.sqrt(y)
    if y < 1e-6:
        return 1 / y
    x = 0.5 + 1 / y
    for _ in range(50):
        t = trigamma(x)
        step = (t * (1 - t / y)) / tetragamma(x)
        x += step
        if -step / x < 1e-8:
            break
    return x


def noise_prior(variances, max_df):
    """(s0² or None, d0): limma's fit of the workloads' variances."""
    usable = [(v, df) for v, df in variances if v is not None and v > 0 and df > 0]
    if len(usable) < MIN_PRIOR_WORKLOADS or max_df <= 0:
        return None, 0
    e = [math.log(v) - digamma(df / 2) + math.log(df / 2) for v, df in usable]
    mean = total(e) / len(e)
    spread = total([(x - mean) ** 2 for x in e]) / (len(e) - 1) - total([trigamma(df / 2) for _, df in usable]) / len(usable)
    if not spread > 0:
        return math.exp(mean), max_df
    d0 = min(max_df, 2 * trigamma_inverse(spread))
    return math.exp(mean + digamma(d0 / 2) - math.log(d0 / 2)), d0


def moderated_variance(own, prior):
    own_var, own_df = own
    prior_var, prior_df = prior
    d0 = 0 if prior_var is None else prior_df
    df = own_df + d0
    if df == 0:
        return None, 0
    own_part = 0 if own_var is None else own_df * own_var
    return (own_part + d0 * (prior_var if prior_var is not None else 0)) / df, df


def median_standard_error(variance, n):
    factor = MEDIAN_VARIANCE_FACTOR[n - 1] if 1 <= n <= len(MEDIAN_VARIANCE_FACTOR) else math.pi / 2
    return math.sqrt((factor * variance) / n)


# ---------------------------------------------------------------- Holm (holm.ts)


def holm_rejections(p_values, alpha):
    tested = sorted(
        ((p, i) for i, p in enumerate(p_values) if p is not None and not math.isnan(p)), key=lambda pi: (pi[0], pi[1])
    )
    out = [False] * len(p_values)
    m = len(tested)
    for k in range(m):
        if tested[k][0] > alpha / (m - k):
            break
        out[tested[k][1]] = True
    return out


# ---------------------------------------------------------------- the rule (rule.ts)


def apply_rule(evidence, options):
    """evidence: [{"logs", "nullLogs", "biasLog"}] -> [rule result] (rule.ts's RuleResult keys)."""
    floor_log = math.log(options["thresholdFloor"])
    raw = []
    for e in evidence:
        usable = present(e["logs"])
        raw.append((usable, pooled_variance([usable, present(e["nullLogs"])])))
    prior = noise_prior([own for _, own in raw], options["maxPriorDf"])
    tested = []
    for usable, own in raw:
        variance, df = moderated_variance(own, prior)
        tested.append((usable, median(usable), variance, df))
    testable = [len(u) >= options["minPairs"] and v is not None and df > 0 for u, _, v, df in tested]
    m = sum(1 for t in testable if t)

    stats = []
    for i, (usable, med, variance, df) in enumerate(tested):
        if not testable[i]:
            stats.append((None, None, None, None))
            continue
        b = evidence[i]["biasLog"]
        se = median_standard_error(variance, len(usable))
        if se == 0:
            beyond = abs(med) > b
            stats.append((se, math.inf if beyond else 0.0, 0.0 if beyond else 1.0, max(floor_log, b)))
            continue
        t_stat = max(0, abs(med) - b) / se
        critical = student_t_upper_quantile(options["alpha"] / (2 * m), df)
        stats.append((se, t_stat, min(1, 2 * student_t_upper(t_stat, df)), max(floor_log, b + critical * se)))
    significant = holm_rejections([s[2] for s in stats], options["alpha"])

    results = []
    for i, (usable, med, variance, df) in enumerate(tested):
        se, t_stat, p, mds_log = stats[i]
        faster = sum(1 for x in usable if x < 0)
        slower = sum(1 for x in usable if x > 0)
        r = {
            "pairs": len(usable), "fasterPairs": faster, "slowerPairs": slower, "medianLog": med,
            "noiseLog": None if variance is None else math.sqrt(variance), "df": df, "standardError": se,
            "t": t_stat, "pValue": p, "significant": significant[i], "mdsLog": mds_log,
        }
        if not testable[i]:
            change, reason = "too-few-pairs", None
        else:
            needed = math.ceil(options["consistency"] * len(usable))
            improving = med < 0
            if not significant[i]:
                change, reason = "unchanged", "not-significant"
            elif abs(med) <= floor_log:
                change, reason = "unchanged", "below-floor"
            elif (faster if improving else slower) < needed:
                change, reason = "unchanged", "directions-disagree"
            else:
                change, reason = ("improved" if improving else "worsened"), None
        r["change"], r["reason"] = change, reason
        results.append(r)
    return results


# ---------------------------------------------------------------- pair tables (pairs.ts, harness/tables.ts)


def workload_logs(table, index):
    return [p["normalizedLogs"][index] for p in table["pairs"]]


def batch_value(samples):
    m = median(samples) if samples else None
    return None if log_of(m) is None else m


def group_value(reference, w, start, stop):
    values = [v for v in (batch_value(reference(w, r)) for r in range(start, stop)) if v is not None]
    return median(values) if values else None


def round_of(rounds, r):
    return rounds[r] if rounds is not None and 0 <= r < len(rounds) else None


def harness_table(m, first, second, label, include, rounds=None):
    base_versions = m.get("baseVersions") or {}
    expert_versions = m.get("expertVersions") or {}
    workloads = sorted((w for w in m["workloads"] if include(w)), key=lambda w: w["ref"]["name"])
    changed = []
    for w in workloads:
        v1 = base_versions.get(w["ref"]["benchmark"])
        v2 = expert_versions.get(w["ref"]["benchmark"]) if label[1] == "expert" else v1
        changed.append(v1 is not None and v2 is not None and v1 != v2)
    k = max(1, m["roundsPerProcess"])
    rounds = m["rounds"] if rounds is None else rounds
    pairs = []
    for g in range(int(math.ceil(rounds / k))):
        start, stop = g * k, min(rounds, (g + 1) * k)
        first_values = [group_value(first, w, start, stop) for w in workloads]
        second_values = [group_value(second, w, start, stop) for w in workloads]
        logs = []
        for i in range(len(workloads)):
            a, b = log_of(first_values[i]), log_of(second_values[i])
            logs.append(None if a is None or b is None or changed[i] else b - a)
        span = "round {}".format(g + 1) if k == 1 else "rounds {}-{}".format(start + 1, stop)
        pairs.append({
            "first": "{} {}".format(label[0], span), "second": "{} {}".format(label[1], span),
            "firstValues": first_values, "secondValues": second_values, "versionChanged": changed,
            "logRatios": logs, "logFactor": 0, "normalized": False, "factorWorkloads": 0, "normalizedLogs": logs,
        })
    return {"names": [w["ref"]["name"] for w in workloads], "pairs": pairs, "unpaired": 0}


def harness_pair_table(m):
    return harness_table(
        m, lambda w, r: round_of(w["base"]["rounds"], r), lambda w, r: round_of(w["expert"]["rounds"], r),
        ("base", "expert"), lambda w: True,
    )


def harness_calibration_table(m):
    if not any(w.get("calibration") is not None for w in m["workloads"]):
        return None

    def first(w, r):
        return round_of(w["calibrationBase"], r) if w.get("calibrationBase") is not None else round_of(w["base"]["rounds"], r)

    def second(w, r):
        return round_of(w["calibration"]["rounds"], r) if w.get("calibration") else None

    # one pair per round the calibration worker took part in (validate.harness.calibrationRounds)
    bound = m.get("calibrationRounds")
    rounds = m["rounds"] if bound is None else min(m["rounds"], bound)
    return harness_table(m, first, second, ("base", "calibration"), lambda w: w.get("calibration") is not None, rounds)


# ---------------------------------------------------------------- calibration (calibration.ts)


def excess_of(table, options):
    evidence = [{"logs": workload_logs(table, i), "nullLogs": [], "biasLog": 0} for i in range(len(table["names"]))]
    out = []
    for r in apply_rule(evidence, dict(options, minPairs=options["minCalibrationPairs"])):
        if r["medianLog"] is None or r["standardError"] is None:
            out.append(None)
        else:
            out.append(max(0, abs(r["medianLog"]) - 2 * r["standardError"]))
    return out


def allowance_of(excess, options, except_index=-1):
    values = [e for i, e in enumerate(excess) if i != except_index and e is not None]
    if not values:
        return 0
    spread = quantile(values, 0.9) if len(values) >= 5 else max(values)
    return options["safetyFactor"] * spread


def uncalibrated():
    return {
        "pairs": 0, "unpaired": 0, "machineFactors": [], "values": 0, "biasLog": 0, "calibrated": False,
        "falsePositives": {"compared": 0, "flagged": 0, "rate": None, "workloads": []},
    }


def calibrate(table, options):
    values = sum(len(present(workload_logs(table, i))) for i in range(len(table["names"])))
    calibrated = len(table["pairs"]) >= options["minCalibrationPairs"] and values > 0
    common = {
        "pairs": len(table["pairs"]), "unpaired": table["unpaired"],
        "machineFactors": [math.exp(p["logFactor"]) for p in table["pairs"]], "values": values,
    }
    if not calibrated:
        return dict(common, biasLog=0, calibrated=False, falsePositives={"compared": 0, "flagged": 0, "rate": None, "workloads": []})
    excess = excess_of(table, options)
    evidence = [
        {"logs": workload_logs(table, i), "nullLogs": [], "biasLog": allowance_of(excess, options, i)}
        for i in range(len(table["names"]))
    ]
    flagged = []
    compared = 0
    for i, r in enumerate(apply_rule(evidence, dict(options, minPairs=options["minCalibrationPairs"]))):
        if r["change"] == "too-few-pairs":
            continue
        compared += 1
        if r["change"] in ("improved", "worsened"):
            flagged.append({"name": table["names"][i], "change": r["change"], "normalizedMedian": math.exp(r["medianLog"])})
    return dict(
        common, biasLog=allowance_of(excess, options), calibrated=True,
        falsePositives={
            "compared": compared, "flagged": len(flagged), "rate": len(flagged) / compared if compared > 0 else None,
            "workloads": flagged,
        },
    )


# ---------------------------------------------------------------- the verdict (verdict.ts)


def incomparable_reason(table, i):
    pairs = table["pairs"]
    if any(p["versionChanged"][i] for p in pairs):
        return "benchmark-changed"
    base_ok = sum(1 for p in pairs if p["firstValues"][i] is not None)
    expert_ok = sum(1 for p in pairs if p["secondValues"][i] is not None)
    if base_ok == 0 and pairs:
        return "failed-on-base"
    if expert_ok < base_ok:
        return "failed-on-expert"
    return "too-few-pairs"


def table_evidence(table, calibration_table, options):
    calibration = calibrate(calibration_table, options) if calibration_table else uncalibrated()
    cal_index = {n: i for i, n in enumerate(calibration_table["names"])} if calibration_table else {}
    evidence = []
    for i, name in enumerate(table["names"]):
        c = cal_index.get(name)
        evidence.append({
            "logs": workload_logs(table, i),
            "nullLogs": workload_logs(calibration_table, c) if calibration["calibrated"] and c is not None else [],
            "biasLog": calibration["biasLog"],
        })
    return evidence, calibration


def exp_or_none(x):
    return None if x is None else math.exp(x)


def verdict_of_tables(table, calibration_table, options):
    evidence, calibration = table_evidence(table, calibration_table, options)
    results = apply_rule(evidence, options)
    workloads = []
    for i, name in enumerate(table["names"]):
        rule = results[i]
        logs = workload_logs(table, i)
        few = rule["change"] == "too-few-pairs"
        workloads.append({
            "name": name,
            "change": "incomparable" if few else rule["change"],
            "reason": incomparable_reason(table, i) if few else rule["reason"],
            "pairRatios": [exp_or_none(p["logRatios"][i]) for p in table["pairs"]],
            "normalizedRatios": [exp_or_none(x) for x in logs],
            "usablePairs": rule["pairs"],
            "fasterPairs": rule["fasterPairs"],
            "slowerPairs": rule["slowerPairs"],
            "normalizedMedian": exp_or_none(rule["medianLog"]),
            "baseMedian": median(present([p["firstValues"][i] for p in table["pairs"]])),
            "expertMedian": median(present([p["secondValues"][i] for p in table["pairs"]])),
            "noise": rule["noiseLog"],
            "pValue": rule["pValue"],
            "significant": rule["significant"],
            "mds": exp_or_none(rule["mdsLog"]),
            # not in verdict.ts's object: what perfmine-bench's interval needs
            "medianLog": rule["medianLog"],
            "standardError": rule["standardError"],
            "df": rule["df"],
        })
    counts = {c: 0 for c in CHANGES}
    for w in workloads:
        counts[w["change"]] += 1
    return {
        "pairs": len(table["pairs"]),
        "unpaired": table["unpaired"],
        "machineFactors": [math.exp(p["logFactor"]) for p in table["pairs"]],
        "normalized": [p["normalized"] for p in table["pairs"]],
        "calibration": calibration,
        "threshold": math.exp(max(math.log(options["thresholdFloor"]), calibration["biasLog"])),
        "options": options,
        "workloads": workloads,
        "counts": counts,
    }


def with_failure_reasons(report, measurement):
    """measure-harness.ts: a workload that failed in its warm-up has no round at all, so the pair
    table alone cannot tell which side failed; the harness's own record can."""
    by_name = {w["ref"]["name"]: w for w in measurement["workloads"]}
    for v in report["workloads"]:
        w = by_name.get(v["name"])
        if v["change"] != "incomparable" or w is None:
            continue
        if w["base"]["failure"]:
            v["reason"] = "failed-on-base"
        elif w["expert"]["failure"]:
            v["reason"] = "failed-on-expert"
    return report


# ---------------------------------------------------------------- adaptive sampling (sequential.ts)


def final_alpha(alpha, seq):
    return alpha if not seq["looks"] else alpha * (1 - seq["earlyAlphaShare"])


def look_alpha(alpha, seq):
    return 0 if not seq["looks"] else (alpha * seq["earlyAlphaShare"]) / len(seq["looks"])


def settle_at_look(evidence, active, options, seq):
    results = apply_rule(evidence, dict(options, alpha=look_alpha(options["alpha"], seq)))
    floor_log = math.log(options["thresholdFloor"])
    out = []
    for i, r in enumerate(results):
        if not active[i]:
            out.append(None)
        elif r["change"] in ("improved", "worsened"):
            out.append("changed")
        elif r["change"] == "too-few-pairs" or r["medianLog"] is None or r["standardError"] is None:
            out.append(None)
        else:
            reach = abs(r["medianLog"]) + student_t_upper_quantile(seq["futility"], r["df"]) * r["standardError"]
            out.append("unchanged" if reach < max(floor_log, evidence[i]["biasLog"]) else None)
    return out


def settlements(m, options, seq):
    """At an interim look: {workload name: "changed" | "unchanged"} (measure-harness.ts's settle)."""
    table = harness_pair_table(m)
    evidence, _ = table_evidence(table, harness_calibration_table(m), options)
    settled = settle_at_look(evidence, [True] * len(evidence), options, seq)
    return {table["names"][i]: s for i, s in enumerate(settled) if s}


def measurement_verdict(m, options, seq):
    """The final analysis of a measurement: validate's verdict at the alpha the looks left it."""
    final = dict(options, alpha=final_alpha(options["alpha"], seq))
    report = verdict_of_tables(harness_pair_table(m), harness_calibration_table(m), final)
    return with_failure_reasons(report, m)


# ---------------------------------------------------------------- the speedup's interval


def speedup_interval(verdict, level=0.95):
    """The speedup's two-sided interval at `level` from Student's t around the median log ratio:
    exp(-(median ± t*·se)), with the rule's moderated noise and degrees of freedom. None when the
    workload was not tested."""
    se, med, df = verdict.get("standardError"), verdict.get("medianLog"), verdict.get("df")
    if se is None or med is None or not df:
        return None
    half = student_t_upper_quantile((1 - level) / 2, df) * se
    return [safe_exp(-(med + half)), safe_exp(-(med - half))]


def safe_exp(x):
    return math.exp(x) if x < 709 else math.inf


# ---------------------------------------------------------------- mulberry32 (pipeline/random.ts)


def imul(a, b):
    return (a * b) & 0xFFFFFFFF


def mulberry32(seed):
    """The pipeline's seeded PRNG, bit for bit: uniform in [0, 1)."""
    state = [seed & 0xFFFFFFFF]

    def draw():
        state[0] = (state[0] + 0x6D2B79F5) & 0xFFFFFFFF
        t = state[0]
        t = imul(t ^ (t >> 15), t | 1)
        t ^= (t + imul(t ^ (t >> 7), t | 61)) & 0xFFFFFFFF
        return ((t ^ (t >> 14)) & 0xFFFFFFFF) / 4294967296

    return draw


def shuffled(items, random):
    """Fisher-Yates from the end, as pipeline/random.ts's shuffled."""
    out = list(items)
    for i in range(len(out) - 1, 0, -1):
        j = int(math.floor(random() * (i + 1)))
        out[i], out[j] = out[j], out[i]
    return out
