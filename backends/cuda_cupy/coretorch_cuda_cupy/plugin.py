"""Plugin object for the ``coretorch.backends`` entry point ``cuda``.

Registers the cuda device type, its allocator, the `coretorch.cuda` module and a kernel for
every primitive op, whether or not a GPU is usable: without one the backend reports
``unavailable: <CuPy's reason>`` and creating a cuda tensor raises that reason.
"""

from __future__ import annotations

from coretorch.backend_kit import register_kernels
from coretorch.plugins import hookimpl

from . import (
    array_module as am,
    device_module,
    kernels,  # noqa: F401  (imports every kernel module, filling KERNELS)
)
from .allocator import allocator
from .fused import compile_program
from .op_timer import CudaOpTimer
from .registry import KERNELS
from .tensor_view import all_finite, read_numpy, write_numpy


@hookimpl
def coretorch_register_backend(registry) -> None:
    """Plugin hook: register the cuda device type, its module and allocator, the fuser of
    elementwise chains, and the CUDA kernels."""
    extras = {"emulated": am.EMULATED, "all_finite": all_finite, "fuse": compile_program}
    if am.availability()[0]:
        extras["op_timer"] = CudaOpTimer
    registry.device_type(
        "cuda",
        "CUDA",
        allocator,
        module=device_module,
        is_available=device_module.is_available,
        device_count=device_module.device_count,
        read_numpy=read_numpy,
        write_numpy=write_numpy,
        extras=extras,
    )
    register_kernels(registry.library("CUDA"), KERNELS, "cuda")


@hookimpl
def coretorch_backend_available() -> tuple[bool, str]:
    """(True, "emulated: ...") in emulation, (False, CuPy's reason) without a usable GPU."""
    return am.availability()
