#!/usr/bin/env python3
"""The in-image modules loaded by an image's Python (test/python/in-image-python.docker.test.ts):
every file compiled with warnings as errors (an invalid escape sequence is a SyntaxWarning since
3.12), then every module imported with warnings as errors (a deprecated standard library use at
import time). Prints {"python": "X.Y.Z", "compiled": [files], "imported": [modules]}.

    python3 in_image.py PYTHON_DIR

Python 3.8+, standard library only.
"""

import json
import os
import sys
import warnings


def main(python_dir):
    files = sorted(f for f in os.listdir(python_dir) if f.endswith(".py"))
    warnings.simplefilter("error")
    for name in files:
        path = os.path.join(python_dir, name)
        with open(path, encoding="utf-8") as f:
            compile(f.read(), path, "exec")
    sys.path.insert(0, python_dir)
    modules = [name[:-3] for name in files]
    for module in modules:
        __import__(module)
    print(json.dumps({"python": "{}.{}.{}".format(*sys.version_info[:3]), "compiled": files, "imported": modules}))


if __name__ == "__main__":
    main(sys.argv[1])
