"""``coretorch.multiprocessing``: Python's ``multiprocessing`` with tensors shared, not copied
(mirrors ``torch.multiprocessing``).

Everything of ``multiprocessing`` is here (``Process``, ``Queue``, ``Pipe``, ``get_context``,
``set_start_method``, ...). A cpu tensor sent to another process (through a queue, a pipe or as
a process argument) is moved to shared memory and the receiver maps the same memory: writes on
either side are seen by both. ``Tensor.share_memory_()`` and ``nn.Module.share_memory()`` move
tensors there ahead of time, which is what Hogwild training needs. ``spawn`` runs a function in
several processes and reports the first failure.

Sharing uses file descriptors of anonymous memory files (the ``file_descriptor`` strategy): each
shared storage keeps one descriptor open in each process that maps it.
"""

from __future__ import annotations

import multiprocessing
from multiprocessing import *  # noqa: F401,F403

from .reductions import init_reductions
from .spawn import (  # noqa: F401
    ProcessContext,
    ProcessException,
    ProcessExitedException,
    ProcessRaisedException,
    SpawnContext,
    spawn,
    start_processes,
)

__all__ = ["set_sharing_strategy", "get_sharing_strategy", "get_all_sharing_strategies"]
__all__ += multiprocessing.__all__

_STRATEGIES = {"file_descriptor"}
_sharing_strategy = "file_descriptor"


def set_sharing_strategy(new_strategy: str) -> None:
    """Choose how cpu tensors are shared; coretorch has ``"file_descriptor"``."""
    global _sharing_strategy
    if new_strategy == "file_system":
        raise RuntimeError(
            "set_sharing_strategy('file_system'): coretorch shares tensors "
            "through file descriptors only ('file_descriptor'); if processes run "
            "out of descriptors, raise the limit (ulimit -n)"
        )
    if new_strategy not in _STRATEGIES:
        raise AssertionError(
            f"invalid sharing strategy {new_strategy!r}, expected one of {_STRATEGIES}"
        )
    _sharing_strategy = new_strategy


def get_sharing_strategy() -> str:
    """The strategy used to share cpu tensors (``"file_descriptor"``)."""
    return _sharing_strategy


def get_all_sharing_strategies() -> set[str]:
    """The sharing strategies this system supports."""
    return set(_STRATEGIES)


init_reductions()
