"""`get_worker_info`: which DataLoader worker process this is (None in the main process)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["WorkerInfo", "get_worker_info"]


@dataclass(frozen=True)
class WorkerInfo:
    """About the current DataLoader worker: `id` (0 to num_workers - 1), `num_workers`, the
    `seed` it was seeded with and its own copy of the `dataset`."""

    id: int
    num_workers: int
    seed: int
    dataset: Any


_worker_info: WorkerInfo | None = None


def get_worker_info() -> WorkerInfo | None:
    """The `WorkerInfo` of this DataLoader worker process, or None in the main process.

    In a dataset or a ``worker_init_fn``, this tells each worker which part of the data is its
    own (e.g. to shard an IterableDataset) and which seed it has.
    """
    return _worker_info


def set_worker_info(info: WorkerInfo) -> None:
    """Set what ``get_worker_info()`` returns in this worker process."""
    global _worker_info
    _worker_info = info
