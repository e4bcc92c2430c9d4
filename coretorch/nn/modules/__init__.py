"""The layers of ``coretorch.nn``."""
from . import activation as _activation, loss as _loss, pooling as _pooling
from .module import Module, RemovableHandle  # noqa: F401
from .activation import *  # noqa: F401,F403
from .attention import MultiheadAttention  # noqa: F401
from .batchnorm import BatchNorm1d, BatchNorm2d  # noqa: F401
from .container import ModuleDict, ModuleList, Sequential  # noqa: F401
from .conv import Conv1d, Conv2d  # noqa: F401
from .dropout import Dropout, Dropout1d, Dropout2d  # noqa: F401
from .flatten import Flatten, Unflatten  # noqa: F401
from .linear import Bilinear, Identity, Linear, NonDynamicallyQuantizableLinear  # noqa: F401
from .loss import *  # noqa: F401,F403
from .normalization import GroupNorm, LayerNorm, RMSNorm  # noqa: F401
from .pooling import *  # noqa: F401,F403
from .sparse import Embedding  # noqa: F401

__all__ = (["Module", "RemovableHandle", "MultiheadAttention", "BatchNorm1d", "BatchNorm2d",
            "ModuleDict", "ModuleList", "Sequential", "Conv1d", "Conv2d", "Dropout", "Dropout1d",
            "Dropout2d", "Flatten", "Unflatten", "Bilinear", "Identity", "Linear",
            "NonDynamicallyQuantizableLinear", "GroupNorm", "LayerNorm", "RMSNorm", "Embedding"]
           + _activation.__all__ + _loss.__all__ + _pooling.__all__)
