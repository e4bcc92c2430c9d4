"""Samplers: the order in which a DataLoader visits indices."""

from __future__ import annotations

from typing import Generic, Iterable, Iterator, Sequence, TypeVar

import numpy as np

from ... import dtypes as _dt
from ...ops import aten
from ...ops.factories_public import as_tensor
from ...random import Generator, default_generator

__all__ = [
    "Sampler",
    "SequentialSampler",
    "RandomSampler",
    "SubsetRandomSampler",
    "WeightedRandomSampler",
    "BatchSampler",
]


def _positive_int(name: str, value) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise ValueError(f"{name} should be a positive integer value, but got {name}={value}")


def _boolean(name: str, value, error: type = ValueError) -> None:
    if not isinstance(value, bool):
        raise error(f"{name} should be a boolean value, but got {name}={value}")


_T_co = TypeVar("_T_co", covariant=True)


class Sampler(Generic[_T_co]):
    """Base class: an iterable of dataset indices."""

    def __iter__(self) -> Iterator[_T_co]:
        raise NotImplementedError

    def __init__(self, data_source=None) -> None:
        pass


class SequentialSampler(Sampler[int]):
    """0, 1, ..., len(data_source) - 1."""

    def __init__(self, data_source) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


def _generator_or_fresh(generator):
    """`generator`, or a fresh one seeded from the default generator (as PyTorch)."""
    if generator is not None:
        return generator
    seed = int(default_generator.numpy.integers(0, 2**63 - 1))
    return Generator().manual_seed(seed)


class RandomSampler(Sampler[int]):
    """A random permutation (or, with `replacement`, `num_samples` uniform draws) drawn from
    `generator`; a new one each epoch."""

    def __init__(
        self, data_source, replacement: bool = False, num_samples: int | None = None, generator=None
    ) -> None:
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        _boolean("replacement", replacement, TypeError)
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(
                f"num_samples should be a positive integer value, but got "
                f"num_samples={self.num_samples}"
            )

    @property
    def num_samples(self) -> int:
        """How many indices one pass yields (the dataset's length unless given)."""
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self) -> Iterator[int]:
        n = len(self.data_source)
        generator = _generator_or_fresh(self.generator)
        if self.replacement:
            for _ in range(self.num_samples // 32):
                yield from aten.randint(0, n, (32,), generator=generator).tolist()
            yield from aten.randint(0, n, (self.num_samples % 32,), generator=generator).tolist()
        else:
            for _ in range(self.num_samples // n):
                yield from aten.randperm(n, generator=generator).tolist()
            yield from aten.randperm(n, generator=generator).tolist()[: self.num_samples % n]

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler[int]):
    """The given indices in a random order."""

    def __init__(self, indices: Sequence[int], generator=None) -> None:
        self.indices = indices
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        for i in aten.randperm(len(self.indices), generator=self.generator).tolist():
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


def multinomial_indices(
    weights: np.ndarray, num_samples: int, replacement: bool, generator: Generator | None
) -> list[int]:
    """`num_samples` category indices drawn with probabilities proportional to `weights` (1-D,
    float64), with or without replacement, from `generator` (default: the global one): what
    ``torch.multinomial`` returns, with its errors. Without replacement it is the exponential
    race PyTorch uses (each category's weight over an exponential draw; the largest win)."""
    gen = default_generator if generator is None else generator
    if not np.all(np.isfinite(weights)) or np.any(weights < 0):
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if weights.sum() <= 0:
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    n = weights.shape[0]
    if replacement:
        cdf = np.cumsum(weights)
        picks = np.searchsorted(cdf, gen.numpy.random(num_samples) * cdf[-1], side="right")
        return np.minimum(picks, n - 1).tolist()
    if num_samples > n:
        raise RuntimeError(
            "cannot sample n_sample > prob_dist.size(-1) samples without replacement"
        )
    keys = weights / gen.numpy.exponential(size=n)
    return np.argsort(-keys, kind="stable")[:num_samples].tolist()


class WeightedRandomSampler(Sampler[int]):
    """`num_samples` indices in ``[0, len(weights))`` drawn with probabilities proportional to
    `weights` (not necessarily summing to one), with or without replacement, from
    `generator`."""

    def __init__(
        self, weights: Sequence[float], num_samples: int, replacement: bool = True, generator=None
    ) -> None:
        _positive_int("num_samples", num_samples)
        _boolean("replacement", replacement)
        weights_tensor = as_tensor(weights, dtype=_dt.float64)
        if len(weights_tensor.shape) != 1:
            raise ValueError(
                f"weights should be a 1d sequence but given weights have shape "
                f"{tuple(weights_tensor.shape)}"
            )
        self.weights = weights_tensor
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        w = np.asarray(self.weights.tolist(), dtype=np.float64)
        yield from multinomial_indices(w, self.num_samples, self.replacement, self.generator)

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler[list[int]]):
    """Groups the indices of `sampler` into lists of `batch_size` (the last may be short unless
    `drop_last`)."""

    def __init__(self, sampler, batch_size: int, drop_last: bool) -> None:
        _positive_int("batch_size", batch_size)
        _boolean("drop_last", drop_last)
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self) -> Iterator[list[int]]:
        return batched(self.sampler, self.batch_size, self.drop_last)

    def __len__(self) -> int:
        return num_batches(len(self.sampler), self.batch_size, self.drop_last)


def batched(items: Iterable, batch_size: int, drop_last: bool) -> Iterator[list]:
    """Lists of `batch_size` consecutive `items`; the last may be short unless `drop_last`."""
    batch: list = []
    for item in items:
        batch.append(item)
        if len(batch) == batch_size:
            yield batch
            batch = []
    if batch and not drop_last:
        yield batch


def num_batches(n: int, batch_size: int, drop_last: bool) -> int:
    """How many batches `batched` makes of `n` items."""
    return n // batch_size if drop_last else -(-n // batch_size)
