"""DataLoader: batches of samples from a dataset (single process)."""
from __future__ import annotations

from typing import Any, Callable, Iterator

from ...ops.factories_public import tensor
from ...record_function import record_function, state as _rf_state
from .collate import default_collate, default_convert
from .dataset import IterableDataset, TensorDataset
from .sampler import (BatchSampler, RandomSampler, Sampler, SequentialSampler, batched,
                      num_batches)

__all__ = ["DataLoader"]


class DataLoader:
    """Iterate over `dataset` in batches (mirrors ``torch.utils.data.DataLoader``).

    `shuffle` draws a new permutation every epoch from `generator` (or from a generator seeded by
    the default one); `drop_last` drops the final short batch; `collate_fn` (default:
    `default_collate`) turns a list of samples into a batch. Loading happens in the calling
    process: ``num_workers > 0`` is not supported.
    """

    def __init__(self, dataset, batch_size: int | None = 1, shuffle: bool | None = None,
                 sampler: Sampler | None = None, batch_sampler=None, num_workers: int = 0,
                 collate_fn: Callable | None = None, pin_memory: bool = False,
                 drop_last: bool = False, timeout: float = 0, worker_init_fn=None,
                 multiprocessing_context=None, generator=None, *, prefetch_factor=None,
                 persistent_workers: bool = False, pin_memory_device: str = "",
                 in_order: bool = True) -> None:
        if not isinstance(num_workers, int) or num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to "
                             "disable multiprocessing.")
        if num_workers > 0:
            raise NotImplementedError("DataLoader(num_workers > 0): worker processes are not "
                                      "supported by coretorch yet; use num_workers=0")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        self.dataset = dataset
        self.num_workers = num_workers
        self.pin_memory = pin_memory
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.generator = generator
        self._is_iterable = isinstance(dataset, IterableDataset)
        if self._is_iterable:
            if shuffle not in (None, False):
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified shuffle "
                                 f"option, but got shuffle={shuffle}")
            if sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified sampler "
                                 f"option, but got sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified "
                                 f"batch_sampler option, but got batch_sampler={batch_sampler}")
        else:
            shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                                 "shuffle, sampler, and drop_last")
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually "
                             "exclusive with drop_last")
        if sampler is None and not self._is_iterable:
            sampler = (RandomSampler(dataset, generator=generator) if shuffle
                       else SequentialSampler(dataset))
        if batch_size is not None and batch_sampler is None and not self._is_iterable:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None or (self._is_iterable and
                                                  self.batch_size is not None)

    def __len__(self) -> int:
        if self._is_iterable:
            n = len(self.dataset)
            if self.batch_size is None:
                return n
            return num_batches(n, self.batch_size, self.drop_last)
        return len(self.batch_sampler if self.batch_sampler is not None else self.sampler)

    def __iter__(self) -> Iterator[Any]:
        if self._is_iterable:
            return _BatchRegions(self._iter_iterable())
        if self.batch_sampler is None:
            return _BatchRegions(self.collate_fn(self.dataset[i]) for i in self.sampler)
        return _BatchRegions(self._iter_batches())

    def _fetch(self, indices: list[int]):
        ds = self.dataset
        if self.collate_fn is default_collate and type(ds) is TensorDataset:
            # what default_collate makes of TensorDataset samples, in one gather per tensor
            idx = tensor(indices, device=ds.tensors[0].device)
            return [t.index_select(0, idx.to(t.device)) for t in ds.tensors]
        getitems = getattr(ds, "__getitems__", None)
        data = getitems(indices) if getitems is not None else [ds[i] for i in indices]
        return self.collate_fn(data)

    def _iter_batches(self):
        for indices in self.batch_sampler:
            yield self._fetch(list(indices))

    def _iter_iterable(self):
        items = (self.dataset if self.batch_size is None
                 else batched(self.dataset, self.batch_size, self.drop_last))
        for item in items:
            yield self.collate_fn(item)


class _BatchRegions:
    """The iterator ``iter(DataLoader)`` returns: while an observer (a profiler) records, each
    batch is a region named as PyTorch names it; otherwise the cost is one flag check."""

    __slots__ = ("_batches",)
    _REGION = "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"

    def __init__(self, batches: Iterator[Any]) -> None:
        self._batches = batches

    def __iter__(self) -> "_BatchRegions":
        return self

    def __next__(self) -> Any:
        if not _rf_state.active:
            return next(self._batches)
        with record_function(self._REGION):
            return next(self._batches)
