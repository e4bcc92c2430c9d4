"""Kernel modules; importing this package registers every kernel in `registry.KERNELS`."""
from . import pointwise  # noqa: F401
