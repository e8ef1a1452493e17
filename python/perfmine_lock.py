#!/usr/bin/env python3
"""perfmine's environment lock, read and checked with the image's own Python (3.8+ standard
library only). It lives in every environment at /perfmine/perfmine_lock.py.

    python3 perfmine_lock.py read [--out FILE]
        Writes the distributions this interpreter sees (importlib.metadata, first on sys.path wins,
        as imports resolve): {"python": "3.11.2", "distributions": [{"name", "version", "location",
        "installer", "editable", "direct_url"}]}, sorted by normalized name.

    python3 perfmine_lock.py check LOCK.json
        Compares the distributions installed now with a lock perfmine wrote (its "distributions":
        name, version, source): every locked distribution installed at its version and nothing
        else. Prints each difference and exits 3 when there is one; 0 when the sets are equal.
        A distribution locked as "editable" (the package under test, built from the checkout) must
        be installed from the checkout, at whatever version the checkout gives: a version from the
        repository's history (setuptools-scm, hatch-vcs, versioneer) changes with a change to the
        tree (`.d20261127` on a dirty tree), and the change is what is being built.
"""
import argparse
import json
import os
import re
import sys

try:
    import importlib.metadata as metadata
except ImportError:  # Python < 3.8 has no importlib.metadata
    metadata = None


def normalized(name):
    return re.sub(r"[-_.]+", "-", name).lower()


# PEP 440's version scheme (its appendix), for comparing versions by what they mean: `1.0` is
# `1.0.0`, `1.0-post0` is `1.0.post0`, `1.0RC1` is `1.0rc1` (`packaging` may be absent here).
_VERSION = re.compile(
    r"^\s*v?(?:(\d+)!)?(\d+(?:\.\d+)*)"
    r"(?:[-_.]?(alpha|beta|preview|pre|a|b|c|rc)[-_.]?(\d*))?"
    r"(?:-(\d+)|[-_.]?(post|rev|r)[-_.]?(\d*))?"
    r"(?:[-_.]?(dev)[-_.]?(\d*))?"
    r"(?:\+([a-z0-9]+(?:[-_.][a-z0-9]+)*))?\s*$",
    re.IGNORECASE,
)
_PRE = {"alpha": "a", "beta": "b", "c": "rc", "pre": "rc", "preview": "rc"}


def version_key(text):
    """What PEP 440 compares for equality (trailing zeros of the release dropped); the text itself when it is no PEP 440 version."""
    m = _VERSION.match(text)
    if not m:
        return text
    epoch, release, pre, pre_n, post_n1, post, post_n2, dev, dev_n, local = m.groups()
    release = [int(x) for x in release.split(".")]
    while len(release) > 1 and release[-1] == 0:
        release.pop()
    return (
        int(epoch or 0),
        tuple(release),
        (_PRE.get(pre.lower(), pre.lower()), int(pre_n or 0)) if pre else None,
        int(post_n1) if post_n1 is not None else (int(post_n2 or 0) if post else None),
        int(dev_n or 0) if dev else None,
        tuple(int(p) if p.isdigit() else p.lower() for p in re.split(r"[-_.]", local)) if local else None,
    )


def installed():
    if metadata is None:
        raise SystemExit("perfmine_lock: this Python has no importlib.metadata (Python 3.8 or newer is needed)")
    seen = {}
    for dist in metadata.distributions():
        name = dist.metadata.get("Name")
        if not name:
            continue
        key = normalized(name)
        if key in seen:
            continue
        direct = None
        try:
            text = dist.read_text("direct_url.json")
            direct = json.loads(text) if text else None
        except (ValueError, OSError):
            direct = None
        installer = (dist.read_text("INSTALLER") or "").strip() or None
        location = str(dist.locate_file(""))
        editable = bool(direct and isinstance(direct.get("dir_info"), dict) and direct["dir_info"].get("editable"))
        seen[key] = {
            "name": name,
            "version": dist.version,
            "location": os.path.normpath(location),
            "installer": installer,
            "editable": editable,
            "direct_url": direct,
        }
    return [seen[k] for k in sorted(seen)]


def read(out):
    data = {"python": "%d.%d.%d" % sys.version_info[:3], "distributions": installed()}
    text = json.dumps(data, indent=1, sort_keys=True) + "\n"
    if out:
        with open(out, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0


def check(path):
    with open(path, encoding="utf-8") as f:
        lock = json.load(f)
    want = {normalized(d["name"]): d for d in lock.get("distributions", [])}
    have = {normalized(d["name"]): d for d in installed()}
    problems = []
    for key in sorted(set(want) | set(have)):
        w, h = want.get(key), have.get(key)
        if w and not h:
            problems.append("missing: %s==%s (%s)" % (w["name"], w["version"], w.get("source", "?")))
        elif h and not w:
            problems.append("not in the lock: %s==%s" % (h["name"], h["version"]))
        elif w.get("source") == "editable":
            if not h["editable"]:
                problems.append("%s: the lock has it built from the checkout (editable), %s is installed otherwise" % (w["name"], h["version"]))
            elif w["version"] != h["version"]:
                print("perfmine-lock: %s is built from the checkout: %s (the lock's build was %s)" % (w["name"], h["version"], w["version"]))
        elif version_key(w["version"]) != version_key(h["version"]):
            problems.append("%s: the lock has %s, %s is installed" % (w["name"], w["version"], h["version"]))
    for p in problems:
        print("perfmine-lock: " + p)
    if problems:
        print("perfmine-lock: the environment differs from %s in %d distribution(s)" % (path, len(problems)), file=sys.stderr)
        return 3
    print("perfmine-lock: the environment is the lock (%d distributions)" % len(want))
    return 0


def main(argv):
    parser = argparse.ArgumentParser(prog="perfmine_lock.py")
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("read")
    r.add_argument("--out")
    c = sub.add_parser("check")
    c.add_argument("lock")
    args = parser.parse_args(argv)
    return read(args.out) if args.command == "read" else check(args.lock)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
