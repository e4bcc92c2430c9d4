"""coretorch.set_num_threads / get_num_threads drive the cpu backend's numba and BLAS pools."""

from __future__ import annotations

import pytest

import coretorch as ct

numba = pytest.importorskip("numba")
threadpoolctl = pytest.importorskip("threadpoolctl")


def _blas_threads() -> set[int]:
    return {p["num_threads"] for p in threadpoolctl.threadpool_info() if p["user_api"] == "blas"}


def test_set_num_threads_sets_both_pools():
    saved, saved_blas = ct.get_num_threads(), threadpoolctl.threadpool_info()
    try:
        ct.set_num_threads(1)
        assert ct.get_num_threads() == 1 == numba.get_num_threads()
        assert _blas_threads() <= {1}
        x = ct.randn(64, 64)
        assert (x @ x).shape == (64, 64)  # kernels run with the limit in force
    finally:
        numba.set_num_threads(saved)
        for p in saved_blas:
            if p["user_api"] == "blas":
                threadpoolctl.threadpool_limits(p["num_threads"], user_api="blas")
    assert ct.get_num_threads() == saved


def test_more_threads_than_numbas_pool_are_capped():
    saved = ct.get_num_threads()
    try:
        ct.set_num_threads(numba.config.NUMBA_NUM_THREADS + 5)
        assert ct.get_num_threads() == numba.config.NUMBA_NUM_THREADS
    finally:
        numba.set_num_threads(saved)


def test_bad_thread_counts_are_refused():
    with pytest.raises(RuntimeError, match="positive number of threads, got 0"):
        ct.set_num_threads(0)
    with pytest.raises(TypeError, match="expected an int, got float"):
        ct.set_num_threads(2.0)
