"""The cpu backend's compute threads: numba's pool and the BLAS pool (numpy's OpenBLAS or MKL,
through threadpoolctl), set together by ``coretorch.set_num_threads``."""

from __future__ import annotations


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
