"""Fetchers: turn what the sampler yields into a batch, in the main process or a worker."""

from __future__ import annotations

from ...multiprocessing.tensor_sharing import empty_shared
from ...ops import aten
from ...ops.factories_public import tensor
from .collate import default_collate
from .dataset import TensorDataset
from .worker_info import get_worker_info

__all__ = ["MapDatasetFetcher", "IterableDatasetFetcher", "create_fetcher", "MAP", "ITERABLE"]

MAP, ITERABLE = 0, 1  # dataset kinds


class MapDatasetFetcher:
    """Batches of ``dataset[i]`` (through ``__getitems__`` when the dataset has it)."""

    def __init__(self, dataset, auto_collation: bool, collate_fn, drop_last: bool) -> None:
        self.dataset, self.auto_collation = dataset, auto_collation
        self.collate_fn, self.drop_last = collate_fn, drop_last
        self._gather = (
            auto_collation and collate_fn is default_collate and type(dataset) is TensorDataset
        )

    def fetch(self, index):
        """The collated sample(s) at `index` (a batch of indices when auto-collating)."""
        ds = self.dataset
        if not self.auto_collation:
            return self.collate_fn(ds[index])
        if self._gather:
            return _gather_rows(ds.tensors, index)
        getitems = getattr(ds, "__getitems__", None)
        data = getitems(index) if getitems else [ds[i] for i in index]
        return self.collate_fn(data)


def _gather_rows(tensors, indices: list) -> list:
    """What default_collate makes of these TensorDataset samples, in one gather per tensor
    (written straight into shared memory in a worker process)."""
    idx = tensor(list(indices), device=tensors[0].device)
    in_worker = get_worker_info() is not None
    out = []
    for t in tensors:
        i = idx if idx.device == t.device else idx.to(t.device)
        if in_worker and t.device.type == "cpu" and not t.requires_grad:
            dst = empty_shared((len(indices),) + tuple(t.shape[1:]), t.dtype)
            out.append(aten.index_select(t, 0, i, out=dst))
        else:
            out.append(t.index_select(0, i))
    return out


class IterableDatasetFetcher:
    """Batches of the next samples of ``iter(dataset)``."""

    def __init__(self, dataset, auto_collation: bool, collate_fn, drop_last: bool) -> None:
        self.dataset, self.auto_collation = dataset, auto_collation
        self.collate_fn, self.drop_last = collate_fn, drop_last
        self.dataset_iter = iter(dataset)
        self.ended = False

    def fetch(self, possibly_batched_index):
        """The next sample, or the next batch of up to len(index) samples when auto-collating.

        Raises:
            StopIteration: when the dataset is exhausted (or the last batch is short and drop_last).
        """
        if self.ended:
            raise StopIteration
        if not self.auto_collation:
            return self.collate_fn(next(self.dataset_iter))
        data = []
        for _ in possibly_batched_index:
            try:
                data.append(next(self.dataset_iter))
            except StopIteration:
                self.ended = True
                break
        if not data or (self.drop_last and len(data) < len(possibly_batched_index)):
            raise StopIteration
        return self.collate_fn(data)


def create_fetcher(kind: int, dataset, auto_collation: bool, collate_fn, drop_last: bool):
    """The fetcher for a map-style (`kind` MAP) or iterable dataset."""
    cls = MapDatasetFetcher if kind == MAP else IterableDatasetFetcher
    return cls(dataset, auto_collation, collate_fn, drop_last)
