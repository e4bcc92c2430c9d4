"""Plugin object for the ``coretorch.backends`` entry point ``cpu``."""
from __future__ import annotations

from coretorch.ops import REGISTRY
from coretorch.plugins import hookimpl

from . import kernels  # noqa: F401  (imports every kernel module, filling KERNELS)
from .allocator import allocator
from .numpy_view import read_numpy, wrap_numpy, write_numpy
from .registry import KERNELS


@hookimpl
def coretorch_register_backend(registry) -> None:
    registry.device_type("cpu", "CPU", allocator, read_numpy=read_numpy, write_numpy=write_numpy,
                         wrap_numpy=wrap_numpy)
    lib = registry.library("CPU")
    for name, fn in KERNELS.items():
        decl = REGISTRY.get(name)
        if decl is None:
            raise RuntimeError(f"cpu backend has a kernel for {name!r}, which no op declares")
        lib.impl(decl.op, fn)
        if decl.inplace_op is not None:
            lib.impl(decl.inplace_op, fn)
