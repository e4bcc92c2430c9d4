"""Finding the user's frames: the innermost frames outside coretorch and its plugins, below the
launcher that runs the user's program (coretorch-profile, runpy)."""
from __future__ import annotations

import linecache
import os
import sys
from types import CodeType

# code object -> whether it belongs to coretorch or one of its distributions (cached: the
# profiler and the anomaly detector ask once per op)
_internal: dict[CodeType, bool] = {}
# code objects of launchers (coretorch-profile's runner): a stack ends below them
_launchers: set[CodeType] = set()


def _is_internal(frame) -> bool:
    code = frame.f_code
    r = _internal.get(code)
    if r is None:
        mod = frame.f_globals.get("__name__", "") or ""
        # runpy: the frames coretorch-profile runs a script through
        r = _internal[code] = mod == "coretorch" or mod.startswith("coretorch.") or \
            mod.startswith("coretorch_") or mod == "runpy"
    return r


def mark_launcher(code: CodeType) -> None:
    """Frames of `code` and every frame outside them (the launcher's own caller, the console
    script) are not the user's: stacks and anomaly sites end below them."""
    _launchers.add(code)
    _internal[code] = True


def user_frame(depth: int = 1):
    """(code, lineno) of the innermost frame outside coretorch, or None."""
    f = sys._getframe(depth)
    while f is not None:
        if not _is_internal(f):
            return f.f_code, f.f_lineno
        if f.f_code in _launchers:
            return None
        f = f.f_back
    return None


def user_stack(limit: int = 8, depth: int = 1) -> tuple:
    """Up to `limit` (code, lineno) pairs of user frames (coretorch's own skipped), innermost
    first, ending below a launcher."""
    f = sys._getframe(depth)
    out = []
    internal = _internal
    while f is not None and len(out) < limit:
        code = f.f_code
        r = internal.get(code)
        if r is None:
            r = _is_internal(f)
        if not r:
            out.append((code, f.f_lineno))
        elif code in _launchers:
            break
        f = f.f_back
    return tuple(out)


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
