"""The user's allowlist for ``load(weights_only=True)`` (``torch.serialization``'s API).

Only pickled checkpoints consult it (safetensors checkpoints hold no globals). The list is
process-wide, as PyTorch's is.
"""

from __future__ import annotations

import threading
from typing import Any, Callable, Union

__all__ = [
    "add_safe_globals",
    "get_safe_globals",
    "clear_safe_globals",
    "safe_globals",
    "user_allowed_globals",
]

SafeGlobal = Union[Callable, type, tuple]

_lock = threading.Lock()
_marked: set = set()


def _check(entry: Any) -> None:
    if isinstance(entry, tuple):
        if len(entry) != 2:
            raise ValueError(
                f"Expected tuple of length 2 (global, str of callable full path), "
                f"but got tuple of length: {len(entry)}"
            )
        if type(entry[1]) is not str:
            raise TypeError(
                f"Expected second item in tuple to be str of callable full path, "
                f"but got: {type(entry[1])}"
            )
    elif not hasattr(entry, "__module__") or not hasattr(entry, "__qualname__"):
        raise TypeError(
            f"add_safe_globals(): expected classes or functions (or (object, "
            f"'module.name') tuples), got {entry!r:.60}"
        )


def add_safe_globals(safe_globals: list[SafeGlobal]) -> None:
    """Mark these classes/functions safe for ``load(weights_only=True)``.

    An entry is a class or function (matched by ``module.qualname``), or an ``(object,
    "module.name")`` tuple naming the path the checkpoint uses for it.
    """
    for g in safe_globals:
        _check(g)
    global _marked
    with _lock:
        _marked = _marked | set(safe_globals)


def get_safe_globals() -> list[SafeGlobal]:
    """The user-added safe globals."""
    return list(_marked)


def clear_safe_globals() -> None:
    """Remove every user-added safe global."""
    global _marked
    with _lock:
        _marked = set()


class safe_globals:
    """Context manager adding safe globals for its duration::

    with coretorch.serialization.safe_globals([MyConfig]):
        ckpt = coretorch.load(path)
    """

    def __init__(self, safe_globals: list[SafeGlobal]):
        for g in safe_globals:
            _check(g)
        self.safe_globals = safe_globals

    def __enter__(self) -> None:
        add_safe_globals(self.safe_globals)

    def __exit__(self, *exc) -> None:
        global _marked
        with _lock:
            _marked = _marked - set(self.safe_globals)


def user_allowed_globals() -> dict[str, Any]:
    """{'module.name': object} of the user's safe globals."""
    out: dict[str, Any] = {}
    for g in _marked:
        if isinstance(g, tuple):
            out[g[1]] = g[0]
        else:
            out[f"{g.__module__}.{g.__qualname__}"] = g
    return out
