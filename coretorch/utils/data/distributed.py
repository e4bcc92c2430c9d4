"""`DistributedSampler`: each rank's share of a dataset (mirrors
``torch.utils.data.distributed.DistributedSampler``)."""

from __future__ import annotations

import math
from typing import Iterator

from ...ops import aten
from ...random import Generator
from .sampler import Sampler

__all__ = ["DistributedSampler"]


class DistributedSampler(Sampler):
    """Indices ``rank, rank + num_replicas, ...`` of a (shuffled) index list, so the ranks'
    shares partition the dataset. Without `drop_last` the list is padded with its own first
    indices to a multiple of `num_replicas` (every rank gets ``ceil(N / num_replicas)``); with
    it the tail is dropped. With `shuffle`, the permutation is drawn from a generator seeded
    with ``seed + epoch``: identical on every rank, new each epoch (call `set_epoch`)."""

    def __init__(
        self,
        dataset,
        num_replicas: int | None = None,
        rank: int | None = None,
        shuffle: bool = True,
        seed: int = 0,
        drop_last: bool = False,
    ) -> None:
        if num_replicas is None or rank is None:
            from ... import distributed as dist

            if not dist.is_initialized():
                raise RuntimeError(
                    "DistributedSampler(): pass num_replicas and rank, or call "
                    "coretorch.distributed.init_process_group() first"
                )
            num_replicas = dist.get_world_size() if num_replicas is None else num_replicas
            rank = dist.get_rank() if rank is None else rank
        if not isinstance(num_replicas, int) or num_replicas < 1:
            raise ValueError(
                f"DistributedSampler(): num_replicas must be a positive int, got {num_replicas!r}"
            )
        if not isinstance(rank, int) or rank >= num_replicas or rank < 0:
            raise ValueError(
                f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]"
            )
        self.dataset, self.num_replicas, self.rank = dataset, num_replicas, rank
        self.epoch, self.shuffle, self.seed, self.drop_last = 0, shuffle, seed, drop_last
        n = len(dataset)
        if drop_last and n % num_replicas != 0:
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas

    def __iter__(self) -> Iterator[int]:
        n = len(self.dataset)
        if self.shuffle:
            g = Generator().manual_seed(self.seed + self.epoch)
            indices = aten.randperm(n, generator=g).tolist()
        else:
            indices = list(range(n))
        if not self.drop_last:
            pad = self.total_size - len(indices)
            if pad <= len(indices):
                indices += indices[:pad]
            else:
                indices += (indices * math.ceil(pad / len(indices)))[:pad]
        else:
            indices = indices[: self.total_size]
        return iter(indices[self.rank : self.total_size : self.num_replicas])

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """Set the epoch, which (with `seed`) seeds this epoch's shuffle on every rank."""
        self.epoch = epoch
