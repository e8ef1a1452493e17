#!/usr/bin/env python3
"""Checks that Python files can run on the oldest Python perfmine's in-image code supports
(python/README.md), with a newer interpreter: no interpreter that old is at hand here (the base
images have 3.11 and 3.13).

    python3 oldest_python.py 3.8 FILE...

prints one JSON object: {"checked": [files], "problems": ["file:line: what"]}. Each file must parse
with the target's grammar (ast.parse's feature_version: assignment expressions before 3.8,
parenthesized context managers, match statements, `except*`, ...), and must not use, outside a
guard, what the target's interpreter or standard library lacks: names and keyword arguments added
after it (a table of the ones code of this kind could reach for, each with the version that brought
it), builtins subscripted at run time (`list[int]`, 3.9), `X | Y` of types at run time (3.10), and
atomic groups or possessive quantifiers in a regular expression (3.11). A use is guarded when it is
inside a `try` block, or under an `if` whose test names `hasattr`, `getattr`, `sys.version_info` or
the name itself. What the tables cannot see (a dict's `|`, a changed default, a name missing from
them) is not checked: the images' Pythons run the modules themselves
(test/python/in-image-python.docker.test.ts).
"""

import ast
import json
import re
import sys

#: name -> the version that brought it (attributes, imported modules and names, builtins).
NEWER_NAMES = {
    # 3.9
    "removeprefix": (3, 9), "removesuffix": (3, 9), "is_relative_to": (3, 9), "with_stem": (3, 9),
    "randbytes": (3, 9), "waitstatus_to_exitcode": (3, 9), "pidfd_open": (3, 9), "pidfd_send_signal": (3, 9),
    "unparse": (3, 9), "nextafter": (3, 9), "ulp": (3, 9), "lcm": (3, 9), "zoneinfo": (3, 9), "graphlib": (3, 9),
    "to_thread": (3, 9), "platlibdir": (3, 9), "BooleanOptionalAction": (3, 9),
    # 3.10
    "bit_count": (3, 10), "pairwise": (3, 10), "aiter": (3, 10), "anext": (3, 10), "orig_argv": (3, 10),
    "stdlib_module_names": (3, 10), "packages_distributions": (3, 10), "EncodingWarning": (3, 10),
    "get_annotations": (3, 10), "eventfd": (3, 10), "splice": (3, 10), "hardlink_to": (3, 10),
    "aclosing": (3, 10), "correlation": (3, 10), "covariance": (3, 10), "linear_regression": (3, 10),
    "TypeAlias": (3, 10), "ParamSpec": (3, 10), "TypeGuard": (3, 10),
    # 3.11
    "tomllib": (3, 11), "StrEnum": (3, 11), "file_digest": (3, 11), "ExceptionGroup": (3, 11),
    "BaseExceptionGroup": (3, 11), "add_note": (3, 11), "Self": (3, 11), "TaskGroup": (3, 11), "cbrt": (3, 11),
    "exp2": (3, 11), "set_int_max_str_digits": (3, 11), "get_int_max_str_digits": (3, 11),
    "LiteralString": (3, 11), "Never": (3, 11), "assert_never": (3, 11), "reveal_type": (3, 11),
    # 3.12
    "monitoring": (3, 12), "batched": (3, 12), "sumprod": (3, 12), "isjunction": (3, 12), "override": (3, 12),
    "activate_stack_trampoline": (3, 12), "is_stack_trampoline_active": (3, 12), "walk_up": (3, 12),
    # 3.13
    "process_cpu_count": (3, 13), "PythonFinalizationError": (3, 13), "_is_gil_enabled": (3, 13), "fma": (3, 13),
    "from_uri": (3, 13), "full_match": (3, 13),
}
#: (module, attribute) pairs whose attribute name alone is too common to look for.
NEWER_ATTRIBUTES = {
    ("functools", "cache"): (3, 9), ("resources", "files"): (3, 9), ("contextlib", "chdir"): (3, 11),
    ("sys", "exception"): (3, 11), ("datetime", "UTC"): (3, 11), ("os", "unshare"): (3, 12),
    ("copy", "replace"): (3, 13),
}
_SUBPROCESS = {"user": (3, 9), "group": (3, 9), "extra_groups": (3, 9), "umask": (3, 9), "pipesize": (3, 10),
               "process_group": (3, 11)}
_BISECT = {"key": (3, 10)}
_GLOB = {"root_dir": (3, 10), "dir_fd": (3, 10), "include_hidden": (3, 11)}
_HASH = {"usedforsecurity": (3, 9)}
#: function name -> {keyword argument: the version that brought it}.
NEWER_KEYWORDS = {
    "Popen": _SUBPROCESS, "run": _SUBPROCESS, "check_output": _SUBPROCESS, "check_call": _SUBPROCESS,
    "call": _SUBPROCESS, "zip": {"strict": (3, 10)},
    "dataclass": {"slots": (3, 10), "kw_only": (3, 10), "match_args": (3, 10), "weakref_slot": (3, 11)},
    "bisect": _BISECT, "bisect_left": _BISECT, "bisect_right": _BISECT, "insort": _BISECT, "insort_left": _BISECT,
    "insort_right": _BISECT, "realpath": {"strict": (3, 10)}, "glob": _GLOB, "iglob": _GLOB,
    "rmtree": {"onexc": (3, 12)}, "TemporaryDirectory": {"ignore_cleanup_errors": (3, 10), "delete": (3, 12)},
    "NamedTemporaryFile": {"delete_on_close": (3, 12)}, "md5": _HASH, "sha1": _HASH, "sha256": _HASH,
    "new": _HASH, "shutdown": {"cancel_futures": (3, 9)},
}
SUBSCRIPTED_BUILTINS = {"list": (3, 9), "dict": (3, 9), "tuple": (3, 9), "set": (3, 9), "frozenset": (3, 9),
                        "type": (3, 9)}
NEWER_REGEX = re.compile(r"\(\?>|[^\\][*+?}]\+")


def version_text(v):
    return "{}.{}".format(*v)


class Scan(ast.NodeVisitor):
    def __init__(self, path, source, target):
        self.path, self.lines, self.target = path, source.splitlines(), target
        self.problems = []
        self.stack = []
        self.future_annotations = False
        self.in_annotation = 0

    def newer(self, node, what, version):
        if version is None or version <= self.target or self.guarded(node, what):
            return
        self.problems.append("{}:{}: {} (Python {}; this code supports {})".format(
            self.path, node.lineno, what, version_text(version), version_text(self.target)))

    def guarded(self, node, what):
        name = what.split(" ")[0].split(".")[-1].strip("`(")
        for parent, field in reversed(self.stack):
            if isinstance(parent, ast.Try) and field == "body":
                return True
            if isinstance(parent, (ast.If, ast.IfExp)) and field in ("body", "orelse"):
                test = ast.dump(parent.test)
                if any(k in test for k in ("'hasattr'", "'getattr'", "'version_info'", repr(name))):
                    return True
        return False

    def generic_visit(self, node):
        for field, value in ast.iter_fields(node):
            items = value if isinstance(value, list) else [value]
            for item in items:
                if isinstance(item, ast.AST):
                    self.stack.append((node, field))
                    annotation = field in ("annotation", "returns") and not self.future_annotations
                    self.in_annotation += annotation
                    self.visit(item)
                    self.in_annotation -= annotation
                    self.stack.pop()

    def visit_ImportFrom(self, node):
        if node.module == "__future__" and any(a.name == "annotations" for a in node.names):
            self.future_annotations = True
        for part in (node.module or "").split("."):
            self.newer(node, "module {}".format(node.module), NEWER_NAMES.get(part))
        for alias in node.names:
            self.newer(node, "from {} import {}".format(node.module, alias.name), NEWER_NAMES.get(alias.name))
            self.newer(node, "from {} import {}".format(node.module, alias.name),
                       NEWER_ATTRIBUTES.get(((node.module or "").split(".")[-1], alias.name)))
        self.generic_visit(node)

    def visit_Import(self, node):
        for alias in node.names:
            for part in alias.name.split("."):
                self.newer(node, "module {}".format(alias.name), NEWER_NAMES.get(part))
        self.generic_visit(node)

    def visit_Attribute(self, node):
        self.newer(node, ".{}".format(node.attr), NEWER_NAMES.get(node.attr))
        if isinstance(node.value, ast.Name):
            self.newer(node, "{}.{}".format(node.value.id, node.attr), NEWER_ATTRIBUTES.get((node.value.id, node.attr)))
        self.generic_visit(node)

    def visit_Name(self, node):
        if isinstance(node.ctx, ast.Load) and node.id in ("aiter", "anext", "ExceptionGroup", "BaseExceptionGroup",
                                                          "EncodingWarning", "PythonFinalizationError"):
            self.newer(node, node.id, NEWER_NAMES[node.id])
        self.generic_visit(node)

    def visit_Call(self, node):
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
        for keyword in node.keywords:
            if keyword.arg is not None:
                self.newer(node, "{}({}=...)".format(name, keyword.arg), NEWER_KEYWORDS.get(name, {}).get(keyword.arg))
        if name in ("isinstance", "issubclass") and len(node.args) == 2 and isinstance(node.args[1], ast.BinOp) \
                and isinstance(node.args[1].op, ast.BitOr):
            self.newer(node, "{}(x, A | B)".format(name), (3, 10))
        if name in ("compile", "match", "search", "fullmatch", "sub", "subn", "split", "findall", "finditer") \
                and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str) \
                and NEWER_REGEX.search(node.args[0].value):
            self.newer(node, "regular expression {!r} (atomic group or possessive quantifier)".format(node.args[0].value),
                       (3, 11))
        self.generic_visit(node)

    def visit_Subscript(self, node):
        if isinstance(node.value, ast.Name) and node.value.id in SUBSCRIPTED_BUILTINS:
            self.newer(node, "{}[...] (a subscripted builtin at run time)".format(node.value.id),
                       SUBSCRIPTED_BUILTINS[node.value.id])
        self.generic_visit(node)

    def visit_BinOp(self, node):
        if self.in_annotation and isinstance(node.op, ast.BitOr):
            self.newer(node, "X | Y in an annotation evaluated at run time", (3, 10))
        self.generic_visit(node)


def check(path, target):
    with open(path, encoding="utf-8") as f:
        source = f.read()
    try:
        tree = ast.parse(source, path, feature_version=target)
    except SyntaxError as exc:
        return ["{}:{}: not Python {} syntax: {}".format(path, exc.lineno, version_text(target), exc.msg)]
    scan = Scan(path, source, target)
    scan.visit(tree)
    return scan.problems


def main(argv):
    target = tuple(int(x) for x in argv[1].split("."))
    problems = [p for path in argv[2:] for p in check(path, target)]
    print(json.dumps({"checked": argv[2:], "problems": problems}))


if __name__ == "__main__":
    main(sys.argv)
