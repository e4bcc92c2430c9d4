"""Finding the user's frames: the innermost frames outside coretorch and its plugins, below the
launcher that runs the user's program (coretorch-profile, runpy)."""

from __future__ import annotations

import linecache
import os
import sys
from types import CodeType, FrameType

from coretorch.frames import is_internal

# id(code object) -> what its frames are: USER, INTERNAL (coretorch or one of its distributions)
# or LAUNCHER (coretorch-profile's runner: a stack ends below it), asked once per frame of every
# stack walk. Keyed by id: hashing a code object hashes its constants, nested functions' code
# included (a module's code: all of them), at every call. The code objects are kept in `_seen`,
# so an id cannot be reused by another one.
USER, INTERNAL, LAUNCHER = 0, 1, 2
_kind: dict[int, int] = {}
_seen: list[CodeType] = []


def _classify(frame) -> int:
    code = frame.f_code
    _seen.append(code)
    # the core's rule (runpy included: the frames coretorch-profile runs a script through)
    k = _kind[id(code)] = INTERNAL if is_internal(frame) else USER
    return k


def _kind_of(frame) -> int:
    k = _kind.get(id(frame.f_code))
    return k if k is not None else _classify(frame)


def mark_launcher(code: CodeType) -> None:
    """Frames of `code` and every frame outside them (the launcher's own caller, the console
    script) are not the user's: stacks and anomaly sites end below them."""
    _seen.append(code)
    _kind[id(code)] = LAUNCHER


def user_stack(limit: int = 8, depth: int = 1) -> tuple:
    """Up to `limit` (code, lineno) pairs of user frames (coretorch's own skipped), innermost
    first, ending below a launcher."""
    return _walk(sys._getframe(depth), limit)


class StackRecorder:
    """Interned user stacks (tuples of (code, lineno), innermost first), recorded cheaply inside
    a window: the frames outside the one that opened the window (the anchor) do not change
    while it runs, so they are walked once, at `start`, and each op walks only up to the
    anchor. Stacks are interned by code identity and bytecode offset (every code object of a
    key stays referenced by the stack it interns, so ids cannot be reused while the key lives)."""

    def __init__(self, limit: int):
        self.limit = limit
        self.stacks: list[tuple] = []
        self._ids: dict[tuple, int] = {}
        self._anchor: FrameType | None = None
        self._outer: tuple = ()

    def start(self, depth: int = 1) -> None:
        """Anchor at the innermost user frame calling this (if it is still running later)."""
        f: FrameType | None = sys._getframe(depth)
        while f is not None and (k := _kind_of(f)) != USER:
            if k == LAUNCHER:
                return
            f = f.f_back
        if f is not None and f.f_back is not None:
            self._anchor = f
            self._outer = _walk(f.f_back, self.limit)

    def stop(self) -> None:
        self._anchor, self._outer = None, ()

    def capture(self, depth: int = 1) -> int:
        """The index in `stacks` of the calling thread's user stack now."""
        codes, offsets, outer = _user_frames(sys._getframe(depth + 1), self.limit, self._anchor)
        key = (*map(id, codes), *offsets, outer)
        i = self._ids.get(key, -1)
        if i < 0:
            stack = tuple(zip(codes, map(_line, codes, offsets)))
            if outer:
                # the frames outside the anchor are the same for every op of the window: kept
                # whole (not cut to `limit` with the op's own), so stacks of ops at different
                # depths still share their outermost frames, which regions are matched by
                stack = stack + self._outer
            i = self._ids[key] = len(self.stacks)
            self.stacks.append(stack)
        return i


def _user_frames(f, limit: int, anchor=None) -> tuple[list, list, bool]:
    """(code objects, bytecode offsets) of up to `limit` user frames from `f` outwards, and
    whether the walk reached `anchor` (where it stops). The offset, not f_lineno: a line is
    computed once per distinct site."""
    kinds = _kind
    codes: list = []
    offsets: list = []
    while f is not None and len(codes) < limit:
        code = f.f_code
        k = kinds.get(id(code))  # `_kind_of` inlined: this runs for every frame of every walk
        if k is None:
            k = _classify(f)
        if k == USER:
            codes.append(code)
            offsets.append(f.f_lasti)
            if f is anchor:
                return codes, offsets, True
        elif k == LAUNCHER:
            break
        f = f.f_back
    return codes, offsets, False


_lines: dict[tuple[int, int], int] = {}


def _line(code: CodeType, lasti: int) -> int:
    """The source line of bytecode offset `lasti` in `code` (what f_lineno computes)."""
    key = (id(code), lasti)  # code objects stay alive in _seen: ids are not reused
    line = _lines.get(key)
    if line is None:
        line = code.co_firstlineno
        for start, end, ln in code.co_lines():
            if start <= lasti < end and ln is not None:
                line = ln
                break
        _lines[key] = line
    return line


def _walk(f, limit: int) -> tuple:
    codes, offsets, _ = _user_frames(f, limit)
    return tuple(zip(codes, map(_line, codes, offsets)))


def site_parts(site) -> tuple[str, int, str]:
    """(filename, lineno, function name) of a recorded (code, lineno) site or of one read back
    from a trace ('file(line): function')."""
    if isinstance(site, str):
        head, _, fn = site.partition("): ")
        file, _, line = head.rpartition("(")
        return file, int(line) if line.isdigit() else 0, fn
    code, lineno = site
    return code.co_filename, lineno, code.co_name


def describe(site) -> tuple[str, int, str, str]:
    """(filename, lineno, function name, source line) of a site."""
    filename, lineno, name = site_parts(site)
    return filename, lineno, name, linecache.getline(filename, lineno).strip()


def format_site(site) -> str:
    """'file.py(12): fn' -- PyTorch's stack entry format."""
    if isinstance(site, str):
        return site
    code, lineno = site
    return f"{code.co_filename}({lineno}): {code.co_name}"


def short_path(filename: str) -> str:
    """`filename` relative to the working directory when it lies below it."""
    try:
        rel = os.path.relpath(filename)
    except ValueError:
        return filename
    return filename if rel.startswith("..") else rel


def function_name(code: CodeType) -> str:
    """A Python function region's name, as PyTorch's traces name them: 'file.py(12): fn' with
    the line of its definition."""
    return f"{short_path(code.co_filename)}({code.co_firstlineno}): {code.co_name}"
