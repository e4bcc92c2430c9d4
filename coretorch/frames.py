"""Which stack frames are the user's: everything outside coretorch and its distributions.

Warnings point at the user's line with `user_stacklevel()`; the profiler and the anomaly detector
record the user's frames the same way, whatever the depth of the dispatcher in between.
"""

from __future__ import annotations

import sys
from types import CodeType, FrameType

__all__ = ["is_internal", "user_stacklevel"]

# code object -> whether it is coretorch's (cached: observers ask once per op)
_internal: dict[CodeType, bool] = {}


def is_internal(frame: FrameType) -> bool:
    """Whether `frame` runs code of coretorch, of one of its distributions (``coretorch_*``:
    backends, the profiler) or of runpy (how ``coretorch-profile`` runs a script)."""
    code = frame.f_code
    r = _internal.get(code)
    if r is None:
        mod = frame.f_globals.get("__name__", "") or ""
        r = _internal[code] = (
            mod == "coretorch"
            or mod.startswith("coretorch.")
            or mod.startswith("coretorch_")
            or mod == "runpy"
        )
    return r


def user_stacklevel() -> int:
    """The `stacklevel` for `warnings.warn` called here that points at the user's line."""
    frame: FrameType | None = sys._getframe(1)
    level = 1
    while frame is not None and is_internal(frame):
        frame, level = frame.f_back, level + 1
    return level
