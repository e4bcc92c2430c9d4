"""`ArrayKit`: what array-API kernels need from a backend — the array module `xp` and the
tensor -> array accessor — registered per device type, so the kit's kernels are plain
module-level functions that find it from their output: ``kit = kit_of(out)``.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from coretorch import dtypes as _dt
from coretorch.tensor.impl import TensorImpl
from coretorch.tensor.tensor import Tensor

__all__ = [
    "ArrayKit",
    "register_kit",
    "kit_of",
    "scalar_as",
    "opmath",
    "acc_float",
    "compute_dtype",
    "TORCH_DTYPE_NAMES",
    "unsupported",
]

_T = Tensor
_F32 = np.dtype(np.float32)
_HALF = frozenset({np.dtype(np.float16), _dt.bfloat16.numpy})

TORCH_DTYPE_NAMES = {
    "bool": "Bool",
    "uint8": "Byte",
    "int8": "Char",
    "int16": "Short",
    "int32": "Int",
    "int64": "Long",
    "float16": "Half",
    "float32": "Float",
    "float64": "Double",
    "bfloat16": "BFloat16",
}


def scalar_as(v, npdt: np.dtype):
    """Python/numpy scalar `v` as a numpy scalar of `npdt`, wrapping integers as PyTorch does
    (``uint8_tensor + -1`` computes with 255)."""
    try:
        return npdt.type(v)
    except (OverflowError, ValueError):
        return np.array(int(v), dtype=np.int64).astype(npdt)[()]


def opmath(d) -> np.dtype:
    """The numpy dtype arithmetic on dtype `d` (coretorch or numpy) runs in: half precision
    computes in float32, as PyTorch's kernels do; other dtypes as they are."""
    n = d.numpy if hasattr(d, "numpy") else np.dtype(d)
    return _F32 if n in _HALF else n


acc_float = opmath  # reductions accumulate in the same type


def is_float(npdt: np.dtype) -> bool:
    """Whether numpy dtype `npdt` is a float (ml_dtypes' bfloat16 is not of numpy kind "f")."""
    return npdt.kind == "f" or npdt in _HALF


def compute_dtype(*xs, floating: bool = False):
    """The promoted dtype of `xs` (made float for float-valued ops)."""
    from coretorch.ops.meta_rules import float_result, promote

    d = promote(*xs)
    return float_result(d) if floating else d


def unsupported(op: str, d, device_type: str, supported: str = "") -> NotImplementedError:
    """PyTorch's error for a dtype an op has no kernel for on a device."""
    extra = f"; supported: {supported}" if supported else ""
    return NotImplementedError(
        f"\"{op}_{device_type}\" not implemented for '{TORCH_DTYPE_NAMES[d.name]}' "
        f"({op}() on {device_type} got dtype {d.name}{extra})"
    )


class ArrayKit:
    """The array module and tensor accessor of one array-holding backend.

    `xp` is numpy or a NumPy-compatible module (CuPy); `as_array(t)` is the strided `xp` view of
    a tensor of this backend's `device_type` (shared memory); `from_host(np_array)` makes an `xp`
    array from host data (used for a cpu scalar tensor mixed into an op; default `xp.asarray`);
    `special` is the module of special functions over `xp` arrays, or a function returning it
    (default: scipy.special, imported when first used); `scipy_linalg` likewise for the
    factorizations numpy lacks (lu_factor, solve_triangular; default scipy.linalg, CuPy's
    backend gives cupyx.scipy.linalg).
    """

    def __init__(
        self,
        xp: Any,
        as_array: Callable,
        device_type: str,
        from_host: Optional[Callable] = None,
        special: Any = None,
        scipy_linalg: Any = None,
    ):
        self.xp = xp
        self.as_array = as_array
        self.device_type = device_type
        self.from_host = from_host if from_host is not None else xp.asarray
        self._special = special
        self._scipy_linalg = scipy_linalg

    @property
    def special(self) -> Any:
        """The special-function module for this kit's arrays (scipy.special or cupyx's), imported on
        first use."""
        sp = self._special
        if sp is None:
            import scipy.special

            sp = self._special = scipy.special
        elif callable(sp):
            sp = self._special = sp()
        return sp

    @property
    def scipy_linalg(self) -> Any:
        """The dense linear-algebra module for this kit's arrays (scipy.linalg or cupyx's), imported
        on first use."""
        sl = self._scipy_linalg
        if sl is None:
            import scipy.linalg

            sl = self._scipy_linalg = scipy.linalg
        elif callable(sl) and not hasattr(sl, "lu_factor"):
            sl = self._scipy_linalg = sl()
        return sl

    def arr(self, x):
        """The array of a tensor (a tensor of another device, such as a cpu scalar, is copied
        over); other values (Python scalars, None) pass through."""
        if not isinstance(x, _T):
            return x
        if x._device.type == self.device_type:
            return self.as_array(x)
        from coretorch.device import get_device_type

        return self.from_host(np.asarray(get_device_type(x._device).read_numpy(x)))

    @staticmethod
    def scalar(x):
        """A Python scalar from a scalar or a one-element tensor."""
        return x.item() if isinstance(x, _T) else x

    def write(self, out, values) -> None:
        """Copy `values` (array or scalar, broadcastable) into tensor `out`, casting as
        PyTorch's out= does."""
        self.xp.copyto(self.as_array(out), values, casting="unsafe")

    def operand(self, x, npdt: np.dtype):
        """A tensor's array cast to `npdt`, or a scalar as a numpy scalar of `npdt`."""
        if isinstance(x, _T):
            a = self.arr(x)
            return a if a.dtype == npdt else a.astype(npdt)
        return scalar_as(x, npdt)

    def into(self, uf, out, result_dtype: np.dtype, *operands) -> None:
        """``out = uf(*operands)``: written in place when out has the ufunc's `result_dtype`,
        else computed and cast into out."""
        o = self.as_array(out)
        if o.dtype == result_dtype:
            uf(*operands, out=o)
        else:
            self.xp.copyto(o, uf(*operands), casting="unsafe")

    def unsupported(self, op: str, d, supported: str = "") -> NotImplementedError:
        """The NotImplementedError (to raise) for op `op` on dtype `d` on this kit's device type;
        `supported` lists what is."""
        return unsupported(op, d, self.device_type, supported)

    def check_nonzero_divisor(self, op: str, b) -> None:
        """Integer division, remainder and fmod by zero raise in PyTorch (numpy would give 0,
        a GPU garbage): an error in the data, which only a backend that holds data can see."""
        if isinstance(b, _T):
            if bool((self.arr(b) == 0).any()):
                raise RuntimeError(f"ZeroDivisionError: {b._dtype.name} division by zero ({op})")
        elif b == 0:
            raise RuntimeError(f"ZeroDivisionError: integer division by zero ({op})")


_KITS: dict[str, ArrayKit] = {}


def register_kit(kit: ArrayKit) -> ArrayKit:
    """Make `kit` the one the kit's kernels use for tensors of its device type (a backend calls
    this when it registers, before its kernels can run)."""
    _KITS[kit.device_type] = kit
    return kit


def kit_of(t: TensorImpl) -> ArrayKit:
    """The ArrayKit of `t`'s device type."""
    try:
        return _KITS[t._device.type]
    except KeyError:
        raise RuntimeError(
            f"no ArrayKit is registered for device type {t._device.type!r}: a "
            f"backend that uses coretorch.backend_kit kernels must call "
            f"backend_kit.register_kit(ArrayKit(xp, as_array, "
            f"{t._device.type!r}))"
        ) from None
