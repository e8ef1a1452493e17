"""Rebuilds the shape of a real asv suite from the benchmarks.json real asv wrote for it.

usage: python3 rebuild_suite.py BENCHMARKS_JSON OUT_DIR

Writes OUT_DIR/asv.conf.json and OUT_DIR/benchmarks/... with the same modules, classes, benchmark
kinds, parameters (as objects whose repr is what asv recorded) and parameter names, each benchmark
doing nothing. A class is the name component before the benchmark when it starts with an
uppercase letter (as the suites in ../shared/reference/asv-real/ name them).
"""
import ast
import json
import os
import sys

SHOWN = '''class Shown:
    """A parameter whose repr is exactly the text real asv recorded."""

    def __init__(self, text):
        self.text = text

    def __repr__(self):
        return self.text

'''


def value_src(text):
    try:
        return repr(ast.literal_eval(text))
    except (ValueError, SyntaxError):
        return "Shown({!r})".format(text)


def params_list(info):
    groups = ["[" + ", ".join(value_src(p) for p in g) + "]" for g in info.get("params") or []]
    if not groups:
        return None
    return "[" + ", ".join(groups) + "]" if len(groups) > 1 else groups[0]


def main(benchmarks_json, out):
    bench = json.load(open(benchmarks_json))
    modules = {}
    for name, info in bench.items():
        if name == "version":
            continue
        parts = name.split(".")
        cls = parts[-2] if len(parts) >= 2 and parts[-2][:1].isupper() else None
        mod = ".".join(parts[:-2] if cls else parts[:-1])
        modules.setdefault(mod, {}).setdefault(cls, []).append((parts[-1], info))
    root = os.path.join(out, "benchmarks")
    for mod, classes in modules.items():
        path = os.path.join(root, *mod.split(".")) + ".py"
        os.makedirs(os.path.dirname(path), exist_ok=True)
        d = os.path.dirname(path)
        while d != root:
            open(os.path.join(d, "__init__.py"), "a").close()
            d = os.path.dirname(d)
        src = [SHOWN]
        for cls, funcs in classes.items():
            if cls is None:
                for func, info in funcs:
                    src.append("def {}(*args):\n    pass\n".format(func))
                    if info.get("params"):
                        src.append("{}.params = {}\n{}.param_names = {!r}\n".format(func, params_list(info), func, info["param_names"]))
                continue
            # the benchmarks of one class share its params in these suites
            ps = params_list(funcs[0][1])
            head = "class {}:\n".format(cls)
            head += "    params = {}\n    param_names = {!r}\n".format(ps, funcs[0][1]["param_names"]) if ps else ""
            src.append(head)
            for func, info in funcs:
                body = "        return 1\n" if info["type"] == "track" else "        pass\n"
                src.append("    def {}(self, *args):\n{}".format(func, body))
        with open(path, "w") as f:
            f.write("\n".join(src))
    open(os.path.join(root, "__init__.py"), "a").close()
    with open(os.path.join(out, "asv.conf.json"), "w") as f:
        f.write('{"version": 1, "benchmark_dir": "benchmarks"}\n')


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
