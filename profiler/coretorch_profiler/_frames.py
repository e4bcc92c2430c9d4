"""Finding the user's frames: the innermost frames outside coretorch and its plugins."""
from __future__ import annotations

import linecache
import sys
from types import CodeType

# code object -> whether it belongs to coretorch or one of its distributions (cached: the
# profiler and the anomaly detector ask once per op)
_internal: dict[CodeType, bool] = {}


def _is_internal(frame) -> bool:
    code = frame.f_code
    r = _internal.get(code)
    if r is None:
        mod = frame.f_globals.get("__name__", "") or ""
        # runpy: the frames coretorch-profile runs a script through
        r = _internal[code] = mod == "coretorch" or mod.startswith("coretorch.") or \
            mod.startswith("coretorch_") or mod == "runpy"
    return r


def user_frame(depth: int = 1):
    """(code, lineno) of the innermost frame outside coretorch, or None."""
    f = sys._getframe(depth)
    while f is not None:
        if not _is_internal(f):
            return f.f_code, f.f_lineno
        f = f.f_back
    return None


def user_stack(limit: int = 8, depth: int = 1) -> tuple:
    """Up to `limit` (code, lineno) pairs of user frames (coretorch's own skipped), innermost
    first."""
    f = sys._getframe(depth)
    out = []
    while f is not None and len(out) < limit:
        if not _is_internal(f):
            out.append((f.f_code, f.f_lineno))
        f = f.f_back
    return tuple(out)


def describe(site) -> tuple[str, int, str, str]:
    """(filename, lineno, function name, source line) of a (code, lineno) site."""
    code, lineno = site
    return code.co_filename, lineno, code.co_name, linecache.getline(code.co_filename,
                                                                       lineno).strip()


def format_site(site) -> str:
    """'file.py(12): fn' -- PyTorch's stack entry format."""
    code, lineno = site
    return f"{code.co_filename}({lineno}): {code.co_name}"
