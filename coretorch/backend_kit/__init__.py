"""Backend kit: every primitive's kernel written once against the NumPy array API.

A backend whose tensors can be viewed as arrays of a NumPy-compatible module (numpy, CuPy) gets
a kernel for every primitive op in two lines, then overrides the ones it runs faster:

    from coretorch.backend_kit import ArrayKit, KernelTable, all_kernels, quiet_fp, register_kit
    register_kit(ArrayKit(numpy, device_array, "mydev"))   # how to view a tensor as an array
    TABLE = KernelTable("mydev", quiet_fp)
    TABLE.kernel("add")(my_faster_add)                     # your own kernels first (optional)
    TABLE.fill_from(all_kernels())                         # the kit's for everything else
    # in the plugin hook: register_kernels(registry.library("MyDev"), TABLE.kernels, "mydev")

The kernels are plain functions in one module per family (`pointwise`, `reductions`,
`indexing`, `shape`, `linalg`, `conv`, `pooling`, `factories`, `random`, ...), each module's
``KERNELS`` mapping op names to them. A kernel finds the array module and accessor of its output's
device with `kit_of(out)`. The cpu backend (numpy) and the cuda backend (CuPy) are built this way
and override only what they accelerate (numba loops, fused CUDA kernels).

The core never imports a backend: this package only imports numpy, scipy and core modules.
"""

import importlib
import pkgutil
from typing import Callable

from .array_kit import TORCH_DTYPE_NAMES, ArrayKit, kit_of, opmath, register_kit, scalar_as
from .registry import KernelTable, quiet_fp, register_kernels

__all__ = [
    "ArrayKit",
    "KernelTable",
    "quiet_fp",
    "register_kernels",
    "register_kit",
    "kit_of",
    "opmath",
    "scalar_as",
    "all_kernels",
    "TORCH_DTYPE_NAMES",
]


def all_kernels() -> dict[str, Callable]:
    """Every kernel of the kit, by op name (the union of each family module's ``KERNELS``)."""
    kernels: dict[str, Callable] = {}
    for info in pkgutil.iter_modules(__path__):
        mod = importlib.import_module(f"{__name__}.{info.name}")
        family = getattr(mod, "KERNELS", None)
        if family:
            kernels.update(family)
    return kernels
