"""Entry point of the ``nccl`` process-group backend (group ``coretorch.distributed_backends``).

NCCL cannot find the job's processes by itself: `create` receives the world backend that did
(``mpi``) as `bootstrap`, and rank 0's NCCL unique id travels through it."""

from __future__ import annotations

import os
import warnings

device_types = ("cuda",)
establishes_world = False


def available() -> tuple[bool, str]:
    """(True, versions) when CuPy, NCCL and a GPU are usable, else (False, why)."""
    if os.environ.get("CORETORCH_CUDA_EMULATE"):
        return False, "the cuda device is emulated on the cpu (CORETORCH_CUDA_EMULATE is set)"
    try:
        with warnings.catch_warnings():  # CuPy warns at import when it finds no NCCL library
            warnings.simplefilter("ignore")
            import cupy
            from cupy.cuda import nccl
    except Exception as e:  # noqa: BLE001 (any import failure makes the backend unavailable)
        return False, f"cupy.cuda.nccl cannot be imported: {type(e).__name__}: {e}"
    if not getattr(nccl, "available", True):
        return False, "CuPy finds no NCCL library (pip install nvidia-nccl-cu12)"
    try:
        n = cupy.cuda.runtime.getDeviceCount()
    except Exception as e:  # noqa: BLE001
        return False, f"no usable GPU: {type(e).__name__}: {e}"
    if n == 0:
        return False, "no GPU is visible"
    return True, f"NCCL {nccl.get_version()}, {n} GPU(s)"


def create(*, rank: int, world_size: int, timeout: float, bootstrap=None):
    """The world group's backend; `bootstrap` carries the unique id."""
    if bootstrap is None:
        raise RuntimeError(
            "the nccl process-group backend needs the mpi backend to find the "
            "job's processes (install coretorch-mpi)"
        )
    from .backend import NCCLBackend

    return NCCLBackend.create(bootstrap, timeout)
