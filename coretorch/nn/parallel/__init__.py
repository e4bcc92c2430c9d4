"""``coretorch.nn.parallel``: `DistributedDataParallel` (mirrors ``torch.nn.parallel``)."""
from .distributed import DistributedDataParallel  # noqa: F401

__all__ = ["DistributedDataParallel"]
