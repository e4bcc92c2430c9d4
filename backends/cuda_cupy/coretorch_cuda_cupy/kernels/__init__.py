"""Kernel modules; importing this package registers every kernel in `registry.KERNELS`."""
from coretorch.backend_kit import conv as _conv
from coretorch.backend_kit import pointwise as _pointwise
from coretorch.backend_kit import pooling as _pooling
from coretorch.backend_kit import reductions as _reductions
from coretorch.backend_kit import sorting as _sorting
from coretorch.backend_kit import special as _special

from . import elementwise  # noqa: F401
from . import factories  # noqa: F401
from . import indexing  # noqa: F401
from . import linalg  # noqa: F401
from . import random  # noqa: F401
from . import reductions  # noqa: F401
from . import shape  # noqa: F401
from ..registry import TABLE as _TABLE

# the kit's kernels for every op not overridden above
for _family in (_pointwise, _reductions, _conv, _pooling, _sorting, _special):
    _TABLE.fill_from(_family.KERNELS)
