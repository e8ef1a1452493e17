#!/usr/bin/env python3
"""The hack detector (python/perfmine_detect.py) on a repository's own
performance changes: the false positives it would raise on expert patches.

    scripts/detector-corpus.py GIT_DIR [--rev HEAD] [--benchmarks benchmarks] [--limit N] [--json]

Takes the first-parent commits of --rev whose subject reads as a speed-up (perf, speed, fast,
faster, optimi[sz]e, slow, cache, vectori[sz]e, or a pull request merged with such a title), and
for each one scans the change as the verifier would: the diff against its first parent without
the tests, the benchmarks, the asv config and pytest's config files (the verifier drops those),
the changed files' new texts, and the numbers the base's benchmark suite passes (its params and
literal arguments). Prints one line per commit with findings (hacks first), then the counts:
commits scanned, commits with a hack finding, commits with a suspect finding, by rule.

Works on a bare or mirrored git directory; needs only git and Python 3.8+.
"""

import argparse
import collections
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
import perfmine_detect as detect  # noqa: E402

SPEED = re.compile(r"\b(perf(ormance)?|speed(s|up|-up)?|fast(er)?|optimi[sz](e|es|ed|ation)|slow(ness|er)?|cach(e|es|ing)|vectori[sz]e)\b", re.I)
DROPPED = [":(exclude,glob)**/test_*.py", ":(exclude,glob)**/*_test.py", ":(exclude,glob)**/conftest.py",
           ":(exclude,glob)**/tests/**", ":(exclude,glob)**/test/**", ":(exclude)pytest.ini", ":(exclude)tox.ini",
           ":(exclude)asv.conf.json", ":(exclude,glob)**/asv.conf.json"]


def git(git_dir, *args, check=True):
    out = subprocess.run(["git", "--git-dir", git_dir] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if check and out.returncode != 0:
        raise SystemExit("git {}: {}".format(" ".join(args), out.stderr.decode(errors="replace").strip()))
    return out.stdout.decode("utf-8", errors="replace") if out.returncode == 0 else None


def literals_at(git_dir, rev, benchmarks):
    with tempfile.TemporaryDirectory() as tmp:
        archive = subprocess.run(["git", "--git-dir", git_dir, "archive", rev, benchmarks], stdout=subprocess.PIPE,
                                 stderr=subprocess.DEVNULL)
        if archive.returncode != 0:
            return []
        subprocess.run(["tar", "-x", "-C", tmp], input=archive.stdout, check=True)
        return detect.suite_literals(os.path.join(tmp, benchmarks))


def scan_commit(git_dir, sha, benchmarks):
    parent = sha + "^"
    patch = git(git_dir, "diff", "--binary", parent, sha, "--", ".", ":(exclude){}/**".format(benchmarks), *DROPPED,
                check=False)
    if not patch:
        return None
    files = {}
    for path in git(git_dir, "diff", "--name-only", "--diff-filter=AM", parent, sha, "--", ".", *DROPPED).split():
        text = git(git_dir, "show", "{}:{}".format(sha, path), check=False)
        if text is not None:
            files[path] = text
    return detect.scan_change(patch, files, literals_at(git_dir, parent, benchmarks), ())


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("git_dir")
    p.add_argument("--rev", default="HEAD")
    p.add_argument("--benchmarks", default="benchmarks", help="the asv benchmark_dir (default benchmarks)")
    p.add_argument("--limit", type=int, default=0, help="at most this many commits (newest first; 0: all)")
    p.add_argument("--json", action="store_true", help="one JSON object per commit, then the counts")
    a = p.parse_args()
    log = git(a.git_dir, "log", "--first-parent", "--format=%H%x09%s", a.rev)
    commits = [line.split("\t", 1) for line in log.splitlines() if "\t" in line]
    commits = [(sha, subject) for sha, subject in commits if SPEED.search(subject)]
    if a.limit:
        commits = commits[: a.limit]
    scanned, hacks, suspects, rules = 0, 0, 0, collections.Counter()
    for sha, subject in commits:
        findings = scan_commit(a.git_dir, sha, a.benchmarks)
        if findings is None:
            continue
        scanned += 1
        hack = [f for f in findings if f["severity"] == detect.HACK]
        hacks += bool(hack)
        suspects += bool(findings) and not hack
        for f in findings:
            rules["{} {}".format(f["severity"], f["rule"])] += 1
        if a.json:
            print(json.dumps({"commit": sha, "subject": subject, "findings": findings}))
        elif findings:
            print("{} {}".format(sha[:10], subject[:90]))
            for f in sorted(findings, key=lambda f: f["severity"] != detect.HACK):
                print("    {:7} {:16} {}:{} {}".format(f["severity"], f["rule"], f["path"], f["line"] or "",
                                                       f["message"][:110]))
    counts = {"commits": scanned, "with_hack": hacks, "with_suspect_only": suspects, "by_rule": dict(rules.most_common())}
    print(json.dumps(counts) if a.json else "scanned {commits}, with a hack finding {with_hack}, with suspects only "
          "{with_suspect_only}; by rule: {by_rule}".format(**counts))


if __name__ == "__main__":
    main()
