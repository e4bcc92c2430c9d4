"""DataLoader: batches of samples from a dataset, loaded in the calling process or in worker
processes (mirrors ``torch.utils.data.DataLoader``)."""

from __future__ import annotations

import multiprocessing as python_multiprocessing
import os
import warnings
from typing import Any, Callable, Iterator

from ... import dtypes as _dt, multiprocessing as _mp
from ...ops import aten
from ...record_function import record_function, state as _rf_state
from .collate import default_collate, default_convert
from .dataset import IterableDataset
from .fetch import ITERABLE, MAP, create_fetcher
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

__all__ = ["DataLoader"]


class _InfiniteConstantSampler(Sampler[None]):
    """None, forever: the sampler of an IterableDataset (whose samples come from iterating it)."""

    def __iter__(self) -> Iterator[None]:
        while True:
            yield None


def _cpu_count() -> int | None:
    if hasattr(os, "sched_getaffinity"):
        try:
            return len(os.sched_getaffinity(0))
        except OSError:
            pass
    return os.cpu_count()


def _accelerator_available() -> bool:
    from ... import cuda

    return bool(cuda.is_available())


class DataLoader:
    """Iterate over `dataset` in batches (mirrors ``torch.utils.data.DataLoader``).

    `shuffle` draws a new permutation every epoch from `generator` (or from a generator seeded
    by the default one); `drop_last` drops the final short batch; `collate_fn` (default:
    `default_collate`) turns a list of samples into a batch.

    With ``num_workers > 0`` batches are loaded by that many worker processes (started with
    `multiprocessing_context`, default: the platform's start method), `prefetch_factor` batches
    ahead per worker, and come back through shared memory. Worker ``i`` seeds ``random`` and
    coretorch with ``base_seed + i`` (``base_seed`` drawn from `generator` each epoch) and numpy
    from the two, then calls ``worker_init_fn(i)``; ``get_worker_info()`` describes the worker.
    `persistent_workers` keeps them across epochs; `timeout` bounds the wait for a batch.
    `pin_memory` is accepted; no backend here pins memory, so batches come back as they are.

    Raises:
        ValueError: for a negative `num_workers`, or options that contradict each other (as
            PyTorch: a `sampler` with `shuffle`, a `batch_sampler` with `batch_size`, ...).

    Examples:
        >>> import coretorch
        >>> from coretorch.utils.data import DataLoader, TensorDataset
        >>> ds = TensorDataset(coretorch.arange(10.).reshape(5, 2))
        >>> loader = DataLoader(ds, batch_size=2, shuffle=True, drop_last=True,
        ...                     generator=coretorch.Generator().manual_seed(0))
        >>> len(loader)
        2
        >>> [batch.shape for (batch,) in loader]
        [coretorch.Size([2, 2]), coretorch.Size([2, 2])]
    """

    _initialized = False

    def __init__(
        self,
        dataset,
        batch_size: int | None = 1,
        shuffle: bool | None = None,
        sampler: Sampler | None = None,
        batch_sampler=None,
        num_workers: int = 0,
        collate_fn: Callable | None = None,
        pin_memory: bool = False,
        drop_last: bool = False,
        timeout: float = 0,
        worker_init_fn=None,
        multiprocessing_context=None,
        generator=None,
        *,
        prefetch_factor: int | None = None,
        persistent_workers: bool = False,
        pin_memory_device: str = "",
        in_order: bool = True,
    ) -> None:
        if not isinstance(num_workers, int) or num_workers < 0:
            raise ValueError(
                "num_workers option should be non-negative; use num_workers=0 to "
                "disable multiprocessing."
            )
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError(
                "prefetch_factor option could only be specified in multiprocessing."
                "let num_workers > 0 to enable multiprocessing, otherwise set "
                "prefetch_factor to None."
            )
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order
        if isinstance(dataset, IterableDataset):
            self._dataset_kind = ITERABLE
            # an iterable dataset orders its own samples (shuffle=False counts as unspecified)
            for option, value in (
                ("shuffle", shuffle or None),
                ("sampler", sampler),
                ("batch_sampler", batch_sampler),
            ):
                if value is not None:
                    raise ValueError(
                        f"DataLoader with IterableDataset: expected unspecified "
                        f"{option} option, but got {option}={value}"
                    )
        else:
            shuffle = bool(shuffle)
            self._dataset_kind = MAP
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError(
                    "batch_sampler option is mutually exclusive with batch_size, "
                    "shuffle, sampler, and drop_last"
                )
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError(
                "batch_size=None option disables auto-batching and is mutually "
                "exclusive with drop_last"
            )
        if sampler is None:
            if self._dataset_kind == ITERABLE:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self._IterableDataset_len_called: int | None = None
        self._iterator: _BaseDataLoaderIter | None = None
        self._initialized = True
        self.check_worker_number_rationality()

    @property
    def multiprocessing_context(self):
        """The multiprocessing context worker processes start in (None: the default)."""
        return self._multiprocessing_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, context) -> None:
        if context is not None:
            if self.num_workers <= 0:
                raise ValueError(
                    f"multiprocessing_context can only be used with multi-process "
                    f"loading (num_workers > 0), but got "
                    f"num_workers={self.num_workers}"
                )
            if isinstance(context, str):
                methods = _mp.get_all_start_methods()
                if context not in methods:
                    raise ValueError(
                        f"multiprocessing_context option should specify a valid "
                        f"start method in {methods!r}, but got "
                        f"multiprocessing_context={context!r}"
                    )
                context = _mp.get_context(context)
            if not isinstance(context, python_multiprocessing.context.BaseContext):
                raise TypeError(
                    f"multiprocessing_context option should be a valid context "
                    f"object or a string specifying the start method, but got "
                    f"multiprocessing_context={context}"
                )
        self._multiprocessing_context = context

    def __setattr__(self, attr: str, val) -> None:
        if self._initialized and attr in (
            "batch_size",
            "batch_sampler",
            "sampler",
            "drop_last",
            "dataset",
            "persistent_workers",
        ):
            raise ValueError(
                f"{attr} attribute should not be set after {self.__class__.__name__} is initialized"
            )
        super().__setattr__(attr, val)

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def _get_iterator(self) -> "_BaseDataLoaderIter":
        if self.num_workers == 0:
            return _SingleProcessDataLoaderIter(self)
        self.check_worker_number_rationality()
        from .multiprocess_iter import MultiProcessingDataLoaderIter

        return MultiProcessingDataLoaderIter(self)

    def __iter__(self) -> "_BaseDataLoaderIter":
        if self.persistent_workers and self.num_workers > 0:
            if self._iterator is None:
                self._iterator = self._get_iterator()
            else:
                self._iterator._reset(self)
            return self._iterator
        return self._get_iterator()

    def __len__(self) -> int:
        if self._dataset_kind == ITERABLE:
            length = self._IterableDataset_len_called = len(self.dataset)
            if self.batch_size is not None:
                length = (
                    length // self.batch_size if self.drop_last else -(-length // self.batch_size)
                )
            return length
        return len(self._index_sampler)

    def check_worker_number_rationality(self) -> None:
        """Warn when more workers are asked for than this process has cpus."""
        if not self.num_workers:
            return
        suggested = _cpu_count()
        if suggested is None or self.num_workers > suggested:
            about = (
                f"Our suggested max number of worker in current system is {suggested}, "
                f"which is smaller than what this DataLoader is going to create."
                if suggested is not None
                else "DataLoader is not able to compute a suggested max number of worker in "
                "current system."
            )
            warnings.warn(
                f"This DataLoader will create {self.num_workers} worker processes in "
                f"total. {about} Please be aware that excessive worker creation might "
                f"get DataLoader running slow or even freeze, lower the worker number "
                f"to avoid potential slowness/freeze if necessary.",
                stacklevel=2,
            )


class _BaseDataLoaderIter:
    """One pass over a DataLoader; `_next_data` is what a subclass provides."""

    def __init__(self, loader: DataLoader) -> None:
        self._dataset = loader.dataset
        self._dataset_kind = loader._dataset_kind
        self._IterableDataset_len_called = loader._IterableDataset_len_called
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._num_workers = loader.num_workers
        if loader.pin_memory and not _accelerator_available():
            warnings.warn(
                "'pin_memory' argument is set as true but no accelerator is found, "
                "then device pinned memory won't be used.",
                stacklevel=3,
            )
        self._timeout = loader.timeout
        self._collate_fn = loader.collate_fn
        self._sampler_iter = iter(self._index_sampler)
        self._base_seed = int(
            aten.empty((), dtype=_dt.int64).random_(0, 2**63, generator=loader.generator).item()
        )
        self._persistent_workers = loader.persistent_workers
        self._num_yielded = 0

    def __iter__(self) -> "_BaseDataLoaderIter":
        return self

    def _reset(self, loader: DataLoader, first_iter: bool = False) -> None:
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0
        self._IterableDataset_len_called = loader._IterableDataset_len_called

    def _next_index(self):
        return next(self._sampler_iter)  # may raise StopIteration

    def _next_data(self):
        raise NotImplementedError

    def __next__(self) -> Any:
        if _rf_state.active:  # while an observer records, each batch is a region, named as
            with record_function(f"enumerate(DataLoader)#{type(self).__name__}.__next__"):
                data = self._next_data()  # PyTorch names it
        else:
            data = self._next_data()
        self._num_yielded += 1
        self._check_iterable_length()
        return data

    def _check_iterable_length(self) -> None:
        n = self._IterableDataset_len_called
        if self._dataset_kind == ITERABLE and n is not None and self._num_yielded > n:
            msg = (
                f"Length of IterableDataset {self._dataset} was reported to be {n} (when "
                f"accessing len(dataloader)), but {self._num_yielded} samples have been "
                f"fetched. "
            )
            if self._num_workers > 0:
                msg += (
                    "For multiprocessing data-loading, this could be caused by not properly "
                    "configuring the IterableDataset replica at each worker."
                )
            warnings.warn(msg, stacklevel=3)

    def __len__(self) -> int:
        return len(self._index_sampler)

    def __getstate__(self):
        raise NotImplementedError(f"{type(self).__name__} cannot be pickled")


class _SingleProcessDataLoaderIter(_BaseDataLoaderIter):
    """Loads every batch in the calling process."""

    def __init__(self, loader: DataLoader) -> None:
        super().__init__(loader)
        self._fetcher = create_fetcher(
            self._dataset_kind,
            self._dataset,
            self._auto_collation,
            self._collate_fn,
            self._drop_last,
        )

    def _next_data(self):
        index = self._next_index()  # may raise StopIteration
        return self._fetcher.fetch(index)  # may raise StopIteration
