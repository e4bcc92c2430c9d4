"""Keeping numba's parallel kernels usable in forked processes (DataLoader workers, Hogwild).

GNU OpenMP cannot run a thread team in a process forked from one that already started its
threads (the team's threads do not exist in the child); numba's OpenMP layer therefore kills
such a child with SIGTERM on its first parallel kernel. A forked child runs its parallel kernels
on one thread instead, which OpenMP allows (PyTorch's forked workers do the same): numba's
OpenMP layer is re-registered with this process as its owner and its thread count set to 1.
Processes started with ``spawn``/``forkserver`` and the other threading layers are not touched.
"""

from __future__ import annotations

import ctypes
import os

__all__ = ["install_fork_handler"]

_installed = False


def _gnu_openmp_started() -> bool:
    import sys

    parallel = sys.modules.get("numba.np.ufunc.parallel")
    if parallel is None or not getattr(parallel, "_is_initialized", False):
        return False
    import numba

    if numba.threading_layer() != "omp":
        return False
    from numba.np.ufunc import omppool  # type: ignore[attr-defined]  # built with OpenMP

    return getattr(omppool, "openmp_vendor", "") == "GNU"


def _single_threaded_openmp_in_child() -> None:
    if not _gnu_openmp_started():
        return
    import numba
    from numba.np.ufunc import omppool  # type: ignore[attr-defined]  # built with OpenMP

    # launch_threads records the calling process as the layer's owner (the check that stops
    # forked children) and sets OpenMP's default team size
    ctypes.CFUNCTYPE(None, ctypes.c_int)(omppool.launch_threads)(1)
    numba.set_num_threads(1)


def install_fork_handler() -> None:
    """Make every child forked from now on run numba's OpenMP kernels on one thread."""
    global _installed
    if not _installed:
        os.register_at_fork(after_in_child=_single_threaded_openmp_in_child)
        _installed = True
