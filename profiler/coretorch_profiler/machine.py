"""What the machine offered the profiled program: cores, thread pools, load, measured FLOP rate.

Read cheaply when a window starts (`snapshot`) and completed when an analysis needs it
(`complete`: the BLAS pools through threadpoolctl, about 1 ms, and the FLOP rate, a few ms once
per process), so that starting a profiler stays cheap.
"""

from __future__ import annotations

import os
import platform
import socket
import sys
import time
from typing import Any

__all__ = ["snapshot", "complete", "peak_gflops"]

_peak: dict[tuple[int, int], float] = {}


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def snapshot() -> dict[str, Any]:
    """Cores the process may run on, load average, numba's thread count (if numba is loaded),
    host and versions."""
    import coretorch

    info: dict[str, Any] = {
        "cores": _cores(),
        "cpu_count": os.cpu_count() or 1,
        "host_name": socket.gethostname(),
        "python": platform.python_version(),
        "platform": platform.platform(terse=True),
        "coretorch": coretorch.__version__,
    }
    try:
        info["load_average"] = round(os.getloadavg()[0], 2)
    except (AttributeError, OSError):
        pass
    numba = sys.modules.get("numba")
    if numba is not None:
        try:
            info["numba_threads"] = int(numba.get_num_threads())
        except Exception:  # noqa: BLE001  (numba's threading layer may refuse to start)
            pass
    return info


def complete(info: dict[str, Any]) -> dict[str, Any]:
    """Add the BLAS thread pools and the measured FLOP rate to a snapshot (in place)."""
    if "blas" not in info:
        info["blas"] = blas_pools()
    if "peak_gflops" not in info:
        info["peak_gflops"] = round(peak_gflops(), 1)
    return info


def blas_pools() -> list[dict[str, Any]]:
    """[{library, api, threads}] of the loaded BLAS/OpenMP pools (threadpoolctl), [] without it."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return []
    return [
        {
            "library": p.get("internal_api"),
            "api": p.get("user_api"),
            "threads": p.get("num_threads"),
        }
        for p in threadpool_info()
    ]


def peak_gflops(n: int = 512) -> float:
    """The GFLOP/s of a float32 n x n matmul through numpy's BLAS on this machine, best of five
    (measured once per process and BLAS thread count, since a temporary thread limit changes
    it): the rate an op's achieved FLOPs are compared with."""
    key = (n, max((p["threads"] or 0 for p in blas_pools()), default=0))
    if key not in _peak:
        import numpy as np

        a = np.ones((n, n), np.float32)
        a @ a
        best = float("inf")
        for _ in range(5):
            t = time.perf_counter()
            a @ a
            best = min(best, time.perf_counter() - t)
        _peak[key] = 2 * n**3 / best / 1e9
    return _peak[key]
