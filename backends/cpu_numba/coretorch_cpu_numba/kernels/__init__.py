"""Kernel modules; importing this package registers every kernel in `registry.KERNELS`: the
cpu backend's own kernels first, then the backend kit's for every op not overridden."""
from coretorch.backend_kit import all_kernels

from ..registry import TABLE as _TABLE
from . import elementwise  # noqa: F401
from . import copy  # noqa: F401
from . import nn  # noqa: F401
from . import optim  # noqa: F401
from . import reductions  # noqa: F401
from . import softmax  # noqa: F401

_TABLE.fill_from(all_kernels())
