"""Which stack frames are the user's: everything outside coretorch and its distributions.

Warnings point at the user's line with `user_stacklevel()`; the profiler and the anomaly detector
record the user's frames the same way, whatever the depth of the dispatcher in between.
"""

from __future__ import annotations

import sys
from types import CodeType, FrameType

__all__ = ["first_user_frame", "is_internal", "user_stacklevel"]

# id(code object) -> (the code object, whether it is coretorch's): observers ask once per frame
# of every stack walk. Keyed by id: hashing a code object hashes its constants (nested functions'
# code included) at every call, ~0.5 µs for a large function. Each entry holds its code object,
# so an id cannot be reused by another one while it is cached.
_internal: dict[int, tuple[CodeType, bool]] = {}


def is_internal(frame: FrameType) -> bool:
    """Whether `frame` runs code of coretorch, of one of its distributions (``coretorch_*``:
    backends, the profiler) or of runpy (how ``coretorch-profile`` runs a script)."""
    code = frame.f_code
    hit = _internal.get(id(code))
    if hit is not None:
        return hit[1]
    mod = frame.f_globals.get("__name__", "") or ""
    r = mod == "coretorch" or mod.startswith(("coretorch.", "coretorch_")) or mod == "runpy"
    _internal[id(code)] = (code, r)
    return r


def first_user_frame(frame: FrameType | None) -> FrameType | None:
    """`frame`, or the nearest frame outside it, that is not coretorch's (None when none is).
    The cache is read here without a call per frame: a capture walks ~15 frames per kernel."""
    known = _internal.get
    while frame is not None:
        hit = known(id(frame.f_code))
        if not (is_internal(frame) if hit is None else hit[1]):
            return frame
        frame = frame.f_back
    return None


def user_stacklevel() -> int:
    """The `stacklevel` for `warnings.warn` called here that points at the user's line."""
    frame: FrameType | None = sys._getframe(1)
    level = 1
    while frame is not None and is_internal(frame):
        frame, level = frame.f_back, level + 1
    return level
