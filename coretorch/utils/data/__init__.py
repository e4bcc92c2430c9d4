"""``coretorch.utils.data``: datasets, samplers, DataLoader and collation (mirrors
``torch.utils.data``)."""
from .collate import default_collate, default_convert  # noqa: F401
from .dataloader import DataLoader  # noqa: F401
from .dataset import (ConcatDataset, Dataset, IterableDataset, Subset, TensorDataset,  # noqa: F401
                      random_split)
from .sampler import (BatchSampler, RandomSampler, Sampler, SequentialSampler,  # noqa: F401
                      SubsetRandomSampler)

__all__ = ["DataLoader", "Dataset", "IterableDataset", "TensorDataset", "Subset",
           "ConcatDataset", "random_split", "Sampler", "SequentialSampler", "RandomSampler",
           "SubsetRandomSampler", "BatchSampler", "default_collate", "default_convert"]
