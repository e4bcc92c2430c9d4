"""Debug level of the distributed package (mirrors ``torch.distributed.DebugLevel``).

``TORCH_DISTRIBUTED_DEBUG`` (or ``CORETORCH_DISTRIBUTED_DEBUG``, which wins) set to ``DETAIL``
makes every collective first compare a small record of its arguments (operation, dtype, shape,
root, reduction) across the group, so mismatched calls fail with an error naming each rank's
arguments instead of producing wrong values or hanging. ``OFF`` (the default) and ``INFO`` skip
the check."""

from __future__ import annotations

import enum
import os

__all__ = ["DebugLevel", "get_debug_level", "set_debug_level", "set_debug_level_from_env"]


class DebugLevel(enum.IntEnum):
    """How much coretorch.distributed checks and logs: OFF, INFO or DETAIL."""

    OFF = 0
    INFO = 1
    DETAIL = 2


_level = DebugLevel.OFF


def get_debug_level() -> DebugLevel:
    """The current debug level."""
    return _level


def set_debug_level(level: DebugLevel) -> None:
    """Set the debug level (`DebugLevel.DETAIL` turns the cross-rank argument check on)."""
    global _level
    if not isinstance(level, DebugLevel):
        raise TypeError(f"set_debug_level(): expected a DebugLevel, got {type(level).__name__}")
    _level = level


def set_debug_level_from_env() -> None:
    """Read ``CORETORCH_DISTRIBUTED_DEBUG`` or ``TORCH_DISTRIBUTED_DEBUG`` (OFF, INFO, DETAIL)."""
    raw = (
        (
            os.environ.get("CORETORCH_DISTRIBUTED_DEBUG")
            or os.environ.get("TORCH_DISTRIBUTED_DEBUG")
            or "OFF"
        )
        .strip()
        .upper()
    )
    if raw not in DebugLevel.__members__:
        raise ValueError(f"TORCH_DISTRIBUTED_DEBUG: expected one of OFF, INFO, DETAIL, got {raw!r}")
    set_debug_level(DebugLevel[raw])
