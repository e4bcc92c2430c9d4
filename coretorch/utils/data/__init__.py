"""``coretorch.utils.data``: datasets, samplers, DataLoader (with worker processes) and collation
(mirrors ``torch.utils.data``)."""

from .collate import default_collate, default_convert  # noqa: F401
from .dataloader import DataLoader  # noqa: F401
from .dataset import (  # noqa: F401
    ChainDataset,
    ConcatDataset,
    Dataset,
    IterableDataset,
    StackDataset,
    Subset,
    TensorDataset,
    random_split,
)
from .distributed import DistributedSampler  # noqa: F401
from .sampler import (  # noqa: F401
    BatchSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)
from .worker_info import WorkerInfo, get_worker_info  # noqa: F401

__all__ = [
    "DataLoader",
    "Dataset",
    "IterableDataset",
    "TensorDataset",
    "StackDataset",
    "Subset",
    "ConcatDataset",
    "ChainDataset",
    "random_split",
    "Sampler",
    "SequentialSampler",
    "RandomSampler",
    "SubsetRandomSampler",
    "WeightedRandomSampler",
    "BatchSampler",
    "DistributedSampler",
    "default_collate",
    "default_convert",
    "get_worker_info",
]
