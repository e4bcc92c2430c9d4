"""``coretorch.get_num_threads`` / ``set_num_threads``: the intra-op threads of the cpu backend
(PyTorch's names). The backend owns its pools and offers the two functions as device-type
extras; without them there is one thread."""

from __future__ import annotations

from .device import device_types

__all__ = ["get_num_threads", "set_num_threads"]


def _cpu_extra(name: str):
    entry = device_types().get("cpu")
    return None if entry is None else entry.extras.get(name)


def get_num_threads() -> int:
    """The number of threads cpu kernels use."""
    get = _cpu_extra("get_num_threads")
    return 1 if get is None else get()


def set_num_threads(n: int) -> None:
    """Run cpu kernels on `n` threads (the cpu backend's kernel pool and the BLAS pool).

    Raises:
        TypeError: `n` is not an int.
        RuntimeError: `n` < 1, or no cpu backend that can change its threads is loaded.
    """
    if not isinstance(n, int) or isinstance(n, bool):
        raise TypeError(f"set_num_threads(): expected an int, got {type(n).__name__}")
    if n < 1:
        raise RuntimeError(f"set_num_threads(): expected a positive number of threads, got {n}")
    set_ = _cpu_extra("set_num_threads")
    if set_ is None:
        raise RuntimeError(
            "set_num_threads(): the loaded cpu backend does not offer thread control"
        )
    set_(n)
