"""Kernel modules; importing this package registers every kernel in `registry.KERNELS`."""
from . import elementwise  # noqa: F401
from . import copy  # noqa: F401
from . import factories  # noqa: F401
from . import random  # noqa: F401
from . import nn  # noqa: F401
from . import reductions  # noqa: F401
from . import softmax  # noqa: F401
from . import linalg  # noqa: F401
from . import shape  # noqa: F401
from . import indexing  # noqa: F401

from coretorch.backend_kit import conv as _conv  # noqa: E402
from coretorch.backend_kit import pointwise as _pointwise  # noqa: E402
from coretorch.backend_kit import pooling as _pooling  # noqa: E402
from coretorch.backend_kit import reductions as _reductions  # noqa: E402
from coretorch.backend_kit import sorting as _sorting  # noqa: E402
from coretorch.backend_kit import special as _special  # noqa: E402
from ..registry import TABLE as _TABLE  # noqa: E402

# the kit's kernels for every op not overridden above
for _family in (_pointwise, _reductions, _conv, _pooling, _sorting, _special):
    _TABLE.fill_from(_family.KERNELS)
