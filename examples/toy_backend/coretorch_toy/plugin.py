"""The plugin object of the ``coretorch.backends`` entry point ``toy`` (see pyproject.toml).

coretorch calls these hooks on ``import coretorch``. A hook that raises leaves the backend
"failed" (shown by ``python -m coretorch``) and everything it registered is rolled back.
"""

from __future__ import annotations

from coretorch.plugins import hookimpl

from . import device_module, kernels
from .memory import allocator, read_numpy, write_numpy

DEVICE = "toy"  # tensors live on coretorch.device("toy")
KEY = "Toy"  # the dispatch key of this backend, allocated when it registers


@hookimpl
def coretorch_register_backend(registry) -> None:
    # the device type: its dispatch key, allocator, host copies and `coretorch.toy` module
    registry.device_type(
        DEVICE,
        KEY,
        allocator,
        read_numpy=read_numpy,
        write_numpy=write_numpy,
        module=device_module,
        is_available=device_module.is_available,
        device_count=device_module.device_count,
    )
    # native kernels, each for the functional/out= op and its in-place variant
    lib = registry.library(KEY)
    lib.impl("fill_", kernels.fill_)
    lib.impl("add", kernels.add)
    lib.impl("add_", kernels.add)
    lib.impl("mul", kernels.mul)
    lib.impl("mul_", kernels.mul)
    lib.impl("sum", kernels.sum_)
    # every other op: copy to cpu, run there, copy back
    registry.use_cpu_fallback(KEY)


@hookimpl
def coretorch_backend_available() -> tuple[bool, str]:
    return True, ""
