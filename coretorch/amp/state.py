"""Thread-local autocast state: which device types autocast, to which dtype, and the cast cache.

Autocast is on in a thread while the `Autocast` dispatch key is in the thread's included key
set; `sync_key` keeps that key in step with the per-device flags, so a thread with no autocast
region open pays nothing at dispatch.
"""

from __future__ import annotations

import threading

from .. import dtypes as dt
from ..dispatch.keys import DispatchKey
from ..dispatch.tls import local_keys

__all__ = [
    "STATE",
    "AUTOCAST_BIT",
    "DEFAULT_DTYPES",
    "sync_key",
    "is_autocast_enabled",
    "get_autocast_dtype",
    "set_autocast_enabled",
    "set_autocast_dtype",
    "is_autocast_cache_enabled",
    "set_autocast_cache_enabled",
    "clear_autocast_cache",
    "is_autocast_available",
    "is_autocast_cpu_enabled",
    "get_autocast_cpu_dtype",
    "get_autocast_gpu_dtype",
]

AUTOCAST_BIT = 1 << DispatchKey.Autocast.bit  # type: ignore[operator]  # a functionality key
# PyTorch's defaults: bfloat16 on cpu, float16 on cuda
DEFAULT_DTYPES = {"cpu": dt.bfloat16, "cuda": dt.float16}


class _State(threading.local):
    def __init__(self):
        self.enabled: dict[str, bool] = {}
        self.dtype: dict[str, dt.dtype] = dict(DEFAULT_DTYPES)
        self.cache_enabled = True
        self.nesting = 0
        # lower-precision casts of float32 leaf parameters, kept for the outermost region
        self.cache: dict[int, tuple] = {}


STATE = _State()


def _check_device_type(device_type) -> str:
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if not is_autocast_available(device_type):
        raise RuntimeError(
            f"User specified an unsupported autocast device_type "
            f"'{device_type}': coretorch autocasts "
            f"{' and '.join(DEFAULT_DTYPES)} tensors"
        )
    return device_type


def sync_key() -> None:
    """Include the Autocast key in this thread's dispatch exactly while a device type autocasts."""
    if any(STATE.enabled.values()):
        local_keys.include |= AUTOCAST_BIT
    else:
        local_keys.include &= ~AUTOCAST_BIT


def is_autocast_available(device_type: str) -> bool:
    """Whether autocast supports `device_type` (``"cpu"`` and ``"cuda"``)."""
    return device_type in DEFAULT_DTYPES


def is_autocast_enabled(device_type: str = "cuda") -> bool:
    """Whether autocast is on in this thread for `device_type` (``"cuda"`` when not given, as
    PyTorch's legacy form)."""
    return STATE.enabled.get(_check_device_type(device_type), False)


def set_autocast_enabled(device_type: str, enabled: bool) -> None:
    """Turn autocast on or off for `device_type` in this thread (what `autocast` does)."""
    STATE.enabled[_check_device_type(device_type)] = bool(enabled)
    sync_key()


def get_autocast_dtype(device_type: str) -> dt.dtype:
    """The dtype autocast casts lower-precision ops to on `device_type` in this thread."""
    return STATE.dtype[_check_device_type(device_type)]


def set_autocast_dtype(device_type: str, dtype: dt.dtype) -> None:
    """Set the dtype autocast casts lower-precision ops to on `device_type` in this thread."""
    STATE.dtype[_check_device_type(device_type)] = dtype


def is_autocast_cache_enabled() -> bool:
    """Whether autocast keeps the low-precision copy of each float32 parameter per region."""
    return STATE.cache_enabled


def set_autocast_cache_enabled(enabled: bool) -> None:
    """Turn the parameter-cast cache on or off in this thread."""
    STATE.cache_enabled = bool(enabled)


def clear_autocast_cache() -> None:
    """Drop the cached lower-precision copies of parameters."""
    STATE.cache.clear()


def is_autocast_cpu_enabled() -> bool:
    """``is_autocast_enabled("cpu")`` (PyTorch's older spelling)."""
    return is_autocast_enabled("cpu")


def get_autocast_cpu_dtype() -> dt.dtype:
    """``get_autocast_dtype("cpu")`` (PyTorch's older spelling)."""
    return get_autocast_dtype("cpu")


def get_autocast_gpu_dtype() -> dt.dtype:
    """``get_autocast_dtype("cuda")`` (PyTorch's older spelling)."""
    return get_autocast_dtype("cuda")
