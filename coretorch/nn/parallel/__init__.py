"""``coretorch.nn.parallel``: `DistributedDataParallel` (mirrors ``torch.nn.parallel``)."""

from ..modules.data_parallel import DataParallel, data_parallel  # noqa: F401
from .distributed import DistributedDataParallel  # noqa: F401

__all__ = ["DistributedDataParallel", "DataParallel", "data_parallel"]
