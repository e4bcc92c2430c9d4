"""Program passes: where a captured program's steps are rewritten before it is replayed (after
them the memory plan places the buffers the steps still touch: `memory_plan`).

A pass is ``fn(program: Program) -> Program`` (it may return the same object, changed). Passes
run in the order of `PASSES`, each only when its option is on (``coretorch.compile(fn,
fuse=True)`` turns on the passes registered under ``"fuse"``); each appends a line saying what it
did to ``program.notes`` (`explain` prints them).
"""

from __future__ import annotations

from collections.abc import Callable

from .ir import Program

__all__ = ["PASSES", "register_pass", "run_passes"]

PASSES: list[tuple[str, str, Callable[[Program], Program]]] = []  # (name, option, fn)


def register_pass(name: str, option: str, fn: Callable[[Program], Program]) -> None:
    """Add pass `fn` (called `name`), run when compile option `option` is true."""
    if any(n == name for n, _, _ in PASSES):
        raise ValueError(f"a program pass named {name!r} is already registered")
    PASSES.append((name, option, fn))


def run_passes(program: Program, options: dict[str, bool]) -> Program:
    """Run every registered pass whose option is on in `options`."""
    for _name, option, fn in PASSES:
        if options.get(option, False):
            program = fn(program)
    return program
