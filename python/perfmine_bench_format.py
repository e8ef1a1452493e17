"""perfmine-bench's text output: asv's human-readable values (a port of
pipeline/concepts/asv/human-value.ts, itself asv's human_float / human_time / human_file_size /
human_value) and the tables `run` and `compare` print.

Python 3.8+, standard library only. Pure.
"""

import itertools
import math

TIME_UNITS = [
    ("ns", 0.000000001), ("μs", 0.000001), ("ms", 0.001), ("s", 1), ("m", 60), ("h", 60 * 60),
    ("d", 60 * 60 * 24), ("w", 60 * 60 * 24 * 7), ("y", 60 * 60 * 24 * 7 * 52), ("C", 60 * 60 * 24 * 7 * 52 * 100),
]


def human_float(value, significant=3, truncate_small=None, significant_zeros=False):
    """A float with `significant` digits; `truncate_small` counts leading zeros of values < 1 as significant."""
    if value == 0:
        return "0"
    if not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    sign = "-" if value < 0 else ""
    v = abs(value)
    magnitude = int(math.floor(math.log10(v))) + 1
    if truncate_small is not None:
        magnitude = max(magnitude, -truncate_small + 1)
    num_digits = significant - magnitude
    fixed = False
    if magnitude <= -5 or magnitude >= 9:
        body = "%.*e" % (significant, v)
    elif v == math.trunc(v) or num_digits <= 0:
        body = str(int(round(v, num_digits)))
    else:
        body = "%.*f" % (num_digits, v)
        fixed = True
    formatted = sign + body
    if not significant_zeros and "." in formatted and fixed:
        formatted = formatted.rstrip("0")
        if formatted.endswith("."):
            formatted = formatted[:-1]
    if significant_zeros and "." not in formatted and len(formatted) < significant:
        formatted += "." + "0" * (significant - len(formatted))
    return formatted


def human_time(seconds, err=None):
    """A duration in seconds in the largest unit below it, e.g. 1.46±0.3ms."""
    units = TIME_UNITS
    scale = seconds
    if scale == 0 and err is not None:
        scale = err
    if scale == 0:
        units = [("s", 1), ("m", 60)]
    if math.isnan(scale):
        return "n/a"
    for i in range(len(units) - 1):
        name, size = units[i]
        if scale < units[i + 1][1]:
            text = human_float(seconds / size, 3, None, True)
            if err is None:
                return text + name
            return "{}±{}{}".format(text, human_float(err / size, 1, 2), name)
    return "~0"


def human_file_size(size, err=None):
    """A size in bytes with a k/M/G/... suffix, e.g. 64k."""
    s = 0 if size < 1 else size
    suffixes = " kMGTPEH"
    num_scale = 0 if s == 0 else int(math.floor(math.log(s) / math.log(1000)))
    suffix = "?" if num_scale > 7 else suffixes[num_scale].strip()
    scale = int(1000 ** num_scale)
    text = human_float(s / scale, 3)
    if err is None:
        return text + suffix
    return "{}±{}{}".format(text, human_float(err / scale, 1, 2), suffix)


def json_number(x):
    """Python's json.dumps of a number read from JSON (integral values as integers)."""
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    if float(x).is_integer() and abs(x) < 2 ** 53:
        return str(int(x))
    return repr(float(x))


def human_value(value, unit, err=None):
    """A benchmark value in its unit as asv prints it; None (a failure) is `failed`, NaN `n/a`."""
    if value is None:
        return "failed"
    if isinstance(value, float) and math.isnan(value):
        return "n/a"
    if unit == "seconds":
        return human_time(value, err)
    if unit == "bytes":
        return human_file_size(value, err)
    display = json_number(value)
    return display if err is None else "{}±{}".format(display, "{:.2g}".format(err))


def ratio(x):
    """A speedup or ratio factor, e.g. 0.952x, 1.05x, 12.3x, 521x."""
    if x is None:
        return "-"
    if x >= 100:
        return "{:.0f}x".format(x)
    if x >= 10:
        return "{:.1f}x".format(x)
    return "{:.2f}x".format(x) if x >= 1 else "{:.3f}x".format(x)


def seconds(s):
    return "{:.1f} s".format(s) if s < 100 else "{:.0f} s ({:.1f} min)".format(s, s / 60)


def text_table(rows, indent=""):
    """An asv-style text table: === borders, the first row a header under a --- rule."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    border = indent + " ".join("=" * (w + 2) for w in widths)
    rule = indent + " ".join("-" * (w + 2) for w in widths)

    def line(row):
        return indent + " ".join(" " + cell.ljust(w) + " " for cell, w in zip(row, widths))

    return "\n".join([border, line(rows[0]).rstrip(), rule] + [line(r).rstrip() for r in rows[1:]] + [border])


def plain_table(rows):
    """Columns separated by two spaces, the last one unpadded."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    return "\n".join("  ".join([c.ljust(w) for c, w in zip(row, widths)] + [row[-1]]).rstrip() for row in rows)


def benchmark_lines(entry, values, errs):
    """One benchmark's result as `asv run` shows it: `name  value` for a plain benchmark, the name
    and a table of its parameter combinations (one row each) for a parameterized one."""
    name, unit = entry["name"], entry.get("unit")
    cells = [human_value(v, unit, e) for v, e in zip(values, errs)]
    if not entry.get("params"):
        return [(name, cells[0] if cells else "failed")]
    failed = sum(1 for v in values if v is None)
    status = "ok" if failed == 0 else ("failed" if failed == len(values) else "{}/{} failed".format(failed, len(values)))
    rows = [list(entry.get("param_names") or ["param{}".format(i + 1) for i in range(len(entry["params"]))]) + [""]]
    for combo, cell in zip(itertools.product(*entry["params"]), cells):
        rows.append(list(combo) + [cell])
    return [(name, status), (None, text_table(rows, "    "))]
