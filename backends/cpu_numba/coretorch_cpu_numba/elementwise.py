"""Shared plumbing of the elementwise kernels: operands as numpy, compute dtypes, numba loops
(scalar casting, compute dtypes and dtype errors come from `coretorch.backend_kit`).

Kernels compute in the op's *compute dtype* (the promoted dtype of the inputs, float for
float-valued ops) and write into `out`, casting when out's dtype differs (``out=``, in-place).
numpy ufuncs do the work where they are exact and fast (broadcasting, strides, casting and
overlap handled by numpy); numba loops (`loops.py`, imported on first use so that
``import coretorch`` does not import numba) run over contiguous 1-D operands.
"""

from __future__ import annotations

import numpy as np

from coretorch import dtypes as dt
from coretorch.backend_kit import ArrayKit, scalar_as
from coretorch.backend_kit.array_kit import compute_dtype, register_kit
from coretorch.tensor.impl import TensorImpl

from .layout import memory_order
from .numpy_view import as_numpy

__all__ = [
    "as_numpy",
    "operand",
    "scalar_as",
    "compute_dtype",
    "unsupported",
    "jit_apply",
    "loops",
    "check_nonzero_divisor",
    "JIT_FLOAT",
    "write",
    "par_flats",
    "PARALLEL_MIN",
    "KIT",
]

_T = TensorImpl
_F32 = np.dtype(np.float32)
KIT = register_kit(ArrayKit(np, as_numpy, "cpu"))  # the backend kit over numpy and cpu views


def operand(x, npdt: np.dtype):
    """A tensor's numpy view (any dtype: ufunc signatures cast it) or a scalar in `npdt`."""
    if isinstance(x, _T):
        return as_numpy(x)
    return scalar_as(x, npdt)


unsupported = KIT.unsupported
check_nonzero_divisor = KIT.check_nonzero_divisor


def write(out, values: np.ndarray) -> None:
    """Copy `values` (broadcastable, any dtype) into `out`, casting as PyTorch does."""
    np.copyto(as_numpy(out), values, casting="unsafe")


# ---- numba loops ------------------------------------------------------------------------------

_loops = None


def loops():
    """The numba loop module, imported on first use."""
    global _loops
    if _loops is None:
        from . import loops as mod

        _loops = mod
    return _loops


# numba computes in float32/float64 only (it has no float16 or bfloat16 arithmetic): the 16-bit
# floats are converted, computed in float32 and rounded back, as PyTorch computes them
JIT_FLOAT: dict[dt.dtype, np.dtype] = {
    dt.float16: _F32,
    dt.bfloat16: _F32,
    dt.float32: _F32,
    dt.float64: np.dtype(np.float64),
}


def _flat_input(x, out, shape, cdt, order):
    """x broadcast to `shape`, transposed by `order` (out's memory order, or None), cast to
    `cdt` and flattened: a view where that needs no copy."""
    if not isinstance(x, _T):
        return np.ascontiguousarray(np.broadcast_to(np.asarray(x), shape), dtype=cdt).reshape(-1)
    a = as_numpy(x)
    if (
        a.dtype != cdt
        or a.shape != shape
        or order is not None
        or not a.flags.c_contiguous
        or (x._storage is out._storage and (x._offset != out._offset or x._stride != out._stride))
    ):
        # broadcast, cast, reorder, make contiguous, or break a partial overlap with `out`
        a = np.broadcast_to(a, shape)
        if order is not None:
            a = a.transpose(order)
        partial = x._storage is out._storage and (
            x._offset != out._offset or x._stride != out._stride
        )
        if a.dtype != cdt or not a.flags.c_contiguous or partial:
            a = np.array(a, dtype=cdt, order="C")
    return a.reshape(-1)


def jit_apply(name: str, out, inputs: tuple, cdt: np.dtype, params: tuple = ()) -> None:
    """Run numba loop `name` as ``loop(*flat_inputs, *params, flat_out)`` over `out`'s elements,
    in out's memory order (inputs laid out alike are read in place).

    `inputs` are tensors or numpy arrays (broadcast to out's shape here); `params` are scalars
    passed in `cdt`, so each loop compiles once per compute dtype (float32 / float64 / int64).
    """
    o = as_numpy(out)
    if o.size == 0:
        return
    shape = o.shape
    order = memory_order(o)
    if order is not None:
        o = o.transpose(order)
    flat = [_flat_input(x, out, shape, cdt, order) for x in inputs]
    direct = o.dtype == cdt and o.flags.c_contiguous
    target = o.reshape(-1) if direct else np.empty(o.size, cdt)
    fn = getattr(loops(), name)
    fn(*flat, *[scalar_as(p, cdt) for p in params], target)
    if not direct:
        np.copyto(o, target.reshape(o.shape), casting="unsafe")


# multi-threaded loops pay from about this many elements on (measured: benchmarks/ops.py)
PARALLEL_MIN = 1 << 18
_PAR_DTYPES = (dt.float32, dt.float64)


def par_flats(out, *operands):
    """Flat views of `operands` and `out` for a ``*_par`` loop, or None when that does not apply:
    it needs a large dense float `out` (any order of dims) and tensors of out's dtype, shape and
    strides that do not partially overlap it (scalars pass through)."""
    o = as_numpy(out)
    if o.size < PARALLEL_MIN or out._dtype not in _PAR_DTYPES:
        return None
    order = None
    if not o.flags.c_contiguous:  # dense in another order (a transposed result): walk that
        order = memory_order(o)
        if order is None:
            return None
        o = o.transpose(order)
    res = []
    for t in operands:
        if not isinstance(t, _T):
            res.append(scalar_as(t, o.dtype))
            continue
        if t._dtype is not out._dtype or t._shape != out._shape:
            return None
        a = as_numpy(t)
        if order is not None:
            if t._stride != out._stride:
                return None
            a = a.transpose(order)
        if not a.flags.c_contiguous or (t._storage is out._storage and t._offset != out._offset):
            return None
        res.append(a.reshape(-1))
    res.append(o.reshape(-1))
    return res
