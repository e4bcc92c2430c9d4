"""The array module the kernels are written against (`xp`): CuPy, or numpy in emulation mode.

Every kernel of this backend uses only the part of CuPy's API that is NumPy-compatible, through
the `xp` object exported here. ``CORETORCH_CUDA_EMULATE=1`` (tests only, never the default)
makes `xp` numpy, so the backend's own kernel code runs on a machine without a GPU; the backend
status, `python -m coretorch` and `coretorch.cuda` then say "emulated" wherever they show.

The few places where CuPy and numpy differ (array views over raw memory, host transfers, the
out-of-memory exception, fused CUDA kernels, special functions) are wrapped here, once.
"""

from __future__ import annotations

import contextlib
import os
from typing import Any, Callable

import numpy as np

__all__ = [
    "xp",
    "EMULATED",
    "EMULATE_ENV",
    "EMULATION_LABEL",
    "availability",
    "view",
    "to_host",
    "from_host",
    "address",
    "OOM_ERRORS",
    "special",
    "scipy_linalg",
    "elementwise_kernel",
    "device_guard",
    "empty_bytes",
]

EMULATE_ENV = "CORETORCH_CUDA_EMULATE"
EMULATION_LABEL = "emulated: numpy stands in for CuPy"
EMULATED: bool = os.environ.get(EMULATE_ENV, "").strip().lower() in ("1", "true", "yes")

_import_error: BaseException | None = None
if EMULATED:
    xp: Any = np
else:
    try:
        import cupy as xp  # type: ignore[no-redef]  # noqa: F811
    except Exception as e:  # noqa: BLE001 - any import failure makes the backend unavailable
        xp, _import_error = np, e

# out-of-memory exceptions of the array module (caught by the allocator, which retries once)
if EMULATED or _import_error is not None:
    OOM_ERRORS: tuple = (MemoryError,)
else:
    OOM_ERRORS = (xp.cuda.memory.OutOfMemoryError, MemoryError)

_availability: tuple[bool, str] | None = None


def availability() -> tuple[bool, str]:
    """(usable, why not): CuPy imports and sees at least one device (or emulation is on)."""
    global _availability
    if _availability is None:
        _availability = _probe()
    return _availability


def _probe() -> tuple[bool, str]:
    if EMULATED:
        return True, EMULATION_LABEL
    if _import_error is not None:
        return False, (
            f"CuPy cannot be imported ({type(_import_error).__name__}: "
            f"{_import_error}); install cupy-cuda12x"
        )
    try:
        n = xp.cuda.runtime.getDeviceCount()
    except Exception as e:  # noqa: BLE001 - no driver, no device, wrong runtime...
        return False, f"{type(e).__name__}: {e}"
    if n == 0:
        return False, "CuPy found no CUDA device (cudaGetDeviceCount() == 0)"
    return True, ""


def empty_bytes(nbytes: int):
    """A fresh uint8 buffer of `nbytes` on the current device (CuPy: from its memory pool)."""
    return xp.empty((nbytes,), dtype=np.uint8)


def address(buf) -> int:
    """The device address of a buffer from `empty_bytes`."""
    if EMULATED:
        return buf.__array_interface__["data"][0]
    return buf.data.ptr


def view(buf, shape: tuple, dtype: np.dtype, offset: int, strides: tuple):
    """A strided array of `dtype` over `buf` starting `offset` bytes in (`strides` in bytes)."""
    if 0 in shape:
        offset = 0  # a zero-size view may sit past the end of its (empty) buffer
    if EMULATED:
        return np.ndarray(shape, dtype, buf, offset, strides)
    return xp.ndarray(shape, dtype, memptr=buf.data + offset, strides=strides)


def to_host(a) -> np.ndarray:
    """A host (numpy) copy of device array `a`."""
    if EMULATED:
        return np.array(a, copy=True)
    return xp.asnumpy(a)


def from_host(a: np.ndarray):
    """A device copy of host array `a`."""
    if EMULATED:
        return np.array(a, copy=True)
    return xp.asarray(a)


_scipy_modules: dict = {}


def _scipy_counterpart(sub: str, what: str):
    """``cupyx.scipy.<sub>`` (``scipy.<sub>`` in emulation), imported on first use."""
    mod = _scipy_modules.get(sub)
    if mod is None:
        import importlib

        if EMULATED:
            try:
                mod = importlib.import_module(f"scipy.{sub}")
            except ImportError as e:
                raise NotImplementedError(
                    f"{what} on the emulated cuda device need scipy (the emulation runs "
                    f"scipy.{sub} where CuPy runs cupyx.scipy.{sub}); pip install scipy"
                ) from e
        else:
            mod = importlib.import_module(f"cupyx.scipy.{sub}")
        _scipy_modules[sub] = mod
    return mod


def special():
    """scipy.special's counterpart of the array module (erf, erfc, erfinv)."""
    return _scipy_counterpart("special", "erf/erfc/erfinv")


def scipy_linalg():
    """scipy.linalg's counterpart of the array module (lu_factor, solve_triangular)."""
    return _scipy_counterpart("linalg", "lu_factor/solve_triangular")


def elementwise_kernel(in_params: str, out_params: str, body: str, name: str) -> Callable | None:
    """A fused CUDA elementwise kernel (`cupy.ElementwiseKernel`, compiled on first call), or
    None in emulation: callers then compose the same formula from `xp` ufuncs."""
    if EMULATED or _import_error is not None:
        return None
    return xp.ElementwiseKernel(in_params, out_params, body, name)


def device_guard(index: int | None):
    """Context making CUDA device `index` current (None or 0 with one device: nothing to do)."""
    if not index or EMULATED:
        return contextlib.nullcontext()
    return xp.cuda.Device(index)
