"""Kernel modules; importing this package registers every kernel in `registry.KERNELS`."""
from . import binary  # noqa: F401
from . import factories  # noqa: F401
from . import indexing  # noqa: F401
from . import linalg  # noqa: F401
from . import nn  # noqa: F401
from . import random  # noqa: F401
from . import reductions  # noqa: F401
from . import shape  # noqa: F401
from . import ternary  # noqa: F401
from . import unary  # noqa: F401
