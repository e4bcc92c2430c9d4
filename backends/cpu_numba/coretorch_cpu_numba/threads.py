"""The cpu backend's compute threads: numba's pool and the BLAS pool (numpy's OpenBLAS or MKL,
through threadpoolctl), set together by ``coretorch.set_num_threads``."""

from __future__ import annotations

import os


def get_num_threads() -> int:
    """The threads numba's parallel kernels use."""
    import numba

    return int(numba.get_num_threads())


def set_num_threads(n: int) -> None:
    """Use `n` threads in numba's kernels (at most the pool numba started with,
    NUMBA_NUM_THREADS) and in BLAS calls."""
    import numba
    from threadpoolctl import threadpool_limits

    # numba.config's attributes are set at import from the environment
    numba.set_num_threads(min(n, numba.config.NUMBA_NUM_THREADS))  # type: ignore[attr-defined]
    threadpool_limits(limits=n, user_api="blas")  # stays in force: the object is not entered


# GNU OpenMP's idle threads spin 300,000 times before they sleep: numba's pool then keeps the
# cores the BLAS threads of the next GEMM need (a LeNet step took 44-61 ms on 2 cores, 28 ms
# with 1,000 spins; OMP_WAIT_POLICY=PASSIVE also gives 28 ms, but waking a sleeping thread costs
# a mid-size kernel ~80 µs, where 1,000 spins cost it a few µs)
SPIN_COUNT = "1000"


def start_pool() -> None:
    """Start numba's thread pool now, its OpenMP threads spinning SPIN_COUNT times when idle
    (unless the user set GOMP_SPINCOUNT or OMP_WAIT_POLICY). libgomp reads the setting once, when
    it loads; the environment is restored after, so that libraries loaded later (PyTorch's own
    libgomp) and child processes keep their defaults."""
    from numba.np.ufunc import parallel

    if getattr(parallel, "_is_initialized", False):
        return
    ours = "GOMP_SPINCOUNT" not in os.environ and "OMP_WAIT_POLICY" not in os.environ
    if ours:
        os.environ["GOMP_SPINCOUNT"] = SPIN_COUNT
    try:
        parallel._launch_threads()
    finally:
        if ours:
            del os.environ["GOMP_SPINCOUNT"]
