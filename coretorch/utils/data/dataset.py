"""Datasets: Dataset, IterableDataset, TensorDataset, StackDataset, Subset, ConcatDataset,
ChainDataset, random_split."""

from __future__ import annotations

import bisect
import math
import warnings
from itertools import accumulate
from typing import Generic, Iterable, Sequence, TypeVar

from ...ops import aten
from ...random import default_generator
from ...tensor.tensor import Tensor

__all__ = [
    "Dataset",
    "IterableDataset",
    "TensorDataset",
    "StackDataset",
    "Subset",
    "ConcatDataset",
    "ChainDataset",
    "random_split",
]

T_co = TypeVar("T_co", covariant=True)


class Dataset(Generic[T_co]):
    """A map-style dataset: subclasses implement ``__getitem__`` (and usually ``__len__``)."""

    def __getitem__(self, index) -> T_co:
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other: "Dataset") -> "ConcatDataset":
        return ConcatDataset([self, other])


class IterableDataset(Dataset[T_co]):
    """A dataset that is an iterable of samples (subclasses implement ``__iter__``)."""

    def __iter__(self):
        raise NotImplementedError("Subclasses of IterableDataset should implement __iter__.")

    # the ignore: chaining (not concatenating) is what adding iterable datasets means
    def __add__(self, other: "IterableDataset") -> "ChainDataset":  # type: ignore[override]
        return ChainDataset([self, other])


class TensorDataset(Dataset):
    """Samples are ``tuple(t[i] for t in tensors)``; every tensor has the same first dim.

    Raises:
        ValueError: when no tensor is given.
        AssertionError: when the tensors' first dimensions differ (as PyTorch).

    Examples:
        >>> import coretorch
        >>> from coretorch.utils.data import DataLoader, TensorDataset
        >>> ds = TensorDataset(coretorch.arange(5.), coretorch.tensor([0, 1, 0, 1, 0]))
        >>> len(ds), ds[1]
        (5, (tensor(1.), tensor(1)))
        >>> for x, y in DataLoader(ds, batch_size=2):
        ...     print(x, y)
        tensor([0., 1.]) tensor([0, 1])
        tensor([2., 3.]) tensor([0, 1])
        tensor([4.]) tensor([0])
    """

    def __init__(self, *tensors: Tensor) -> None:
        if not tensors:
            raise ValueError("TensorDataset(): expected at least one tensor")
        if any(tensors[0].size(0) != t.size(0) for t in tensors):
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].size(0)


class StackDataset(Dataset):
    """Several datasets of one length side by side: ``StackDataset(a, b)[i] == (a[i], b[i])``,
    ``StackDataset(x=a, y=b)[i] == {"x": a[i], "y": b[i]}``."""

    def __init__(self, *args: Dataset, **kwargs: Dataset) -> None:
        if args and kwargs:
            raise ValueError(
                "Supported either ``tuple``- (via ``args``) or``dict``- (via "
                "``kwargs``) like input/output, but both types are given."
            )
        if not args and not kwargs:
            raise ValueError("At least one dataset should be passed")
        parts = list(args or kwargs.values())
        self._length = len(parts[0])  # type: ignore[arg-type]  # sized
        if any(self._length != len(d) for d in parts):  # type: ignore[arg-type]  # sized
            raise ValueError("Size mismatch between datasets")
        self.datasets: tuple | dict = args or kwargs

    def __getitem__(self, index):
        if isinstance(self.datasets, dict):
            return {k: d[index] for k, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __getitems__(self, indices: list) -> list:
        named = isinstance(self.datasets, dict)
        columns = {}
        datasets = self.datasets
        for k, d in datasets.items() if isinstance(datasets, dict) else enumerate(datasets):
            if callable(getattr(d, "__getitems__", None)):
                items = d.__getitems__(indices)
                if len(items) != len(indices):
                    raise ValueError(
                        f"Nested dataset's output size mismatch. Expected "
                        f"{len(indices)}, got {len(items)}"
                    )
            else:
                items = [d[i] for i in indices]
            columns[k] = items
        if named:
            return [{k: col[j] for k, col in columns.items()} for j in range(len(indices))]
        return [tuple(col[j] for col in columns.values()) for j in range(len(indices))]

    def __len__(self) -> int:
        return self._length


class Subset(Dataset):
    """The samples of `dataset` at `indices`."""

    def __init__(self, dataset: Dataset, indices: Sequence[int]) -> None:
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices: list[int]) -> list:
        if callable(getattr(self.dataset, "__getitems__", None)):
            return self.dataset.__getitems__(  # type: ignore[attr-defined]  # checked above
                [self.indices[i] for i in indices]
            )
        return [self.dataset[self.indices[i]] for i in indices]

    def __len__(self) -> int:
        return len(self.indices)


class ConcatDataset(Dataset):
    """The concatenation of several map-style datasets."""

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        self.datasets = list(datasets)
        if not self.datasets:
            raise AssertionError("datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise AssertionError("ConcatDataset does not support IterableDataset")
        # sized
        self.cumulative_sizes = list(accumulate(len(d) for d in self.datasets))  # type: ignore[arg-type]

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx = len(self) + idx
        i = bisect.bisect_right(self.cumulative_sizes, idx)
        sample_idx = idx if i == 0 else idx - self.cumulative_sizes[i - 1]
        return self.datasets[i][sample_idx]


class ChainDataset(IterableDataset):
    """Several IterableDatasets one after another, chained as they are iterated."""

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        super().__init__()
        self.datasets = datasets

    def __iter__(self):
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            yield from d

    def __len__(self) -> int:
        total = 0
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            total += len(d)  # type: ignore[arg-type]  # sized
        return total


def random_split(dataset: Dataset, lengths: Sequence[int | float], generator=None) -> list:
    """Split `dataset` into non-overlapping random Subsets of the given lengths (or fractions
    summing to 1; leftover items go round-robin to the first splits, as PyTorch).

    Args:
        dataset: any map-style dataset (anything with ``len`` and indexing).
        lengths: the sizes of the splits, or fractions of the dataset summing to 1.
        generator: the random generator drawing the permutation (default: the global one).

    Raises:
        ValueError: when a fraction is outside [0, 1] or the lengths do not add up to the
            dataset's length.

    Examples:
        >>> import coretorch
        >>> from coretorch.utils.data import random_split
        >>> train, val = random_split(range(10), [0.7, 0.3],
        ...                           generator=coretorch.Generator().manual_seed(0))
        >>> len(train), len(val), sorted(list(train) + list(val)) == list(range(10))
        (7, 3, True)
        >>> random_split(range(10), [3, 3])
        Traceback (most recent call last):
            ...
        ValueError: Sum of input lengths does not equal the length of the input dataset!
    """
    generator = default_generator if generator is None else generator
    n = len(dataset)  # type: ignore[arg-type]  # sized
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        sizes = []
        for i, frac in enumerate(lengths):
            if frac < 0 or frac > 1:
                raise ValueError(f"Fraction at index {i} is not between 0 and 1")
            sizes.append(int(math.floor(n * frac)))
        for i in range(n - sum(sizes)):
            sizes[i % len(sizes)] += 1
        for i, length in enumerate(sizes):
            if length == 0:
                warnings.warn(
                    f"Length of split at index {i} is 0. This might result in an empty dataset.",
                    stacklevel=2,
                )
        lengths = sizes
    if sum(lengths) != n:
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    indices = aten.randperm(sum(lengths), generator=generator).tolist()
    return [
        Subset(dataset, indices[offset - length : offset])
        for offset, length in zip(accumulate(lengths), lengths)
    ]
