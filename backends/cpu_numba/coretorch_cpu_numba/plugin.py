"""Plugin object for the ``coretorch.backends`` entry point ``cpu``."""

from __future__ import annotations

from coretorch.backend_kit import register_kernels
from coretorch.plugins import hookimpl

from . import kernels  # noqa: F401  (imports every kernel module, filling KERNELS)
from .allocator import allocator
from .finite import all_finite
from .fork_safety import install_fork_handler
from .fused import compile_program
from .numpy_view import read_numpy, wrap_numpy, write_numpy
from .registry import KERNELS
from .threads import get_num_threads, set_num_threads, start_pool


@hookimpl
def coretorch_register_backend(registry) -> None:
    """Plugin hook: register the cpu device type, its allocator and numpy I/O, the fuser of
    elementwise chains, and the CPU kernels."""
    registry.device_type(
        "cpu",
        "CPU",
        allocator,
        read_numpy=read_numpy,
        write_numpy=write_numpy,
        wrap_numpy=wrap_numpy,
        extras={
            "all_finite": all_finite,
            "fuse": compile_program,
            "get_num_threads": get_num_threads,
            "set_num_threads": set_num_threads,
        },
    )
    register_kernels(registry.library("CPU"), KERNELS, "cpu")
    start_pool()
    install_fork_handler()
