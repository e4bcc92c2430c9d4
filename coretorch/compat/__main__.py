"""``python -m coretorch.compat [-m module | script.py] [args...]``: run a PyTorch program with
``import torch`` mapped to coretorch (see `coretorch.compat`)."""

from __future__ import annotations

import os
import runpy
import sys

from . import install

USAGE = (
    "usage: python -m coretorch.compat script.py [args...] | python -m coretorch.compat -m "
    "module [args...]"
)


def main(argv: list[str]) -> int:
    """Run the program named in `argv` as ``__main__``; returns the exit code for errors of
    ours (the program's own exit status propagates through SystemExit)."""
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.strip() + "\n\n" + USAGE, file=sys.stderr if not argv else sys.stdout)
        return 2 if not argv else 0
    if argv[0] == "-m":
        if len(argv) < 2:
            print(f"{USAGE}\nerror: -m needs a module name", file=sys.stderr)
            return 2
        install()
        sys.argv = argv[1:]
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)  # from the cwd, as -m
        return 0
    script = argv[0]
    if not os.path.isfile(script):
        print(
            f"python -m coretorch.compat: can't open file '{script}': No such file or directory",
            file=sys.stderr,
        )
        return 2
    install()
    sys.argv = list(argv)
    sys.path[0] = os.path.dirname(os.path.abspath(script))  # as `python script.py` sets it
    runpy.run_path(script, run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
