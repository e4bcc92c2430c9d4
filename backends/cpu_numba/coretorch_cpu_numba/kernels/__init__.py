"""Kernel modules; importing this package registers every kernel in `registry.KERNELS`: the
cpu backend's own kernels first, then the backend kit's for every op not overridden."""
from coretorch.backend_kit import factories as _factories
from coretorch.backend_kit import indexing as _indexing
from coretorch.backend_kit import linalg as _linalg
from coretorch.backend_kit import pointwise as _pointwise
from coretorch.backend_kit import random as _random
from coretorch.backend_kit import shape as _shape

from ..registry import TABLE as _TABLE
from . import elementwise  # noqa: F401
from . import copy  # noqa: F401
from . import random  # noqa: F401  (the draws of the kit's random kernels)
from . import nn  # noqa: F401
from . import reductions  # noqa: F401

for _family in (_pointwise, _factories, _indexing, _linalg, _random, _shape):
    _TABLE.fill_from(_family.KERNELS)
