"""Binary elementwise kernels: arithmetic, division modes, pow, comparisons, logical, bitwise.

Either operand may be a Python scalar (``div(2, t)``). The common case (two tensors of out's
dtype) goes straight to a numpy ufunc; large contiguous float add/sub/mul/div use numba's
multi-threaded loops; everything else computes in the promoted dtype and casts into `out`.
"""
from __future__ import annotations

import numpy as np

from coretorch import dtypes as dt
from coretorch.backend_kit.shifts import shift_kernels
from coretorch.tensor.impl import TensorImpl

from ..elementwise import (KIT, as_numpy, check_nonzero_divisor, compute_dtype, jit_apply, loops,
                           operand, par_flats, PARALLEL_MIN, scalar_as, unsupported, write)
from ..registry import TABLE, kernel

_T = TensorImpl
_BOOL = np.dtype(np.bool_)


def _operands(a, b, floating: bool = False):
    """(A, B, compute dtype) with A, B as numpy arrays/scalars; scalars converted to compute."""
    if isinstance(a, _T) and isinstance(b, _T) and a._dtype is b._dtype:
        c = a._dtype
        if floating and not c.is_floating_point:
            c = dt.get_default_dtype()
        return as_numpy(a), as_numpy(b), c
    c = compute_dtype(a, b, floating=floating)
    return operand(a, c.numpy), operand(b, c.numpy), c


def _same(out, a, b) -> bool:
    """Both operands are tensors of out's dtype (no promotion, no cast)."""
    d = out._dtype
    return isinstance(a, _T) and isinstance(b, _T) and a._dtype is d and b._dtype is d


# ---- add / sub / mul / div --------------------------------------------------------------------

def _add(out, a, b, alpha, op: str) -> None:
    if alpha == 1 and isinstance(a, _T) and a._dtype is out._dtype:
        if isinstance(b, _T):
            if b._dtype is out._dtype:
                flats = par_flats(out, a, b)
                if flats is None:
                    (np.add if op == "add" else np.subtract)(as_numpy(a), as_numpy(b),
                                                             out=as_numpy(out))
                else:
                    one = flats[0].dtype.type(1 if op == "add" else -1)
                    loops().add_par(flats[0], flats[1], one, flats[2])
                return
        elif out._dtype.is_floating_point:
            flats = par_flats(out, a, b if op == "add" else -b)
            if flats is not None:
                loops().add_scalar_par(*flats)
                return
    A, B, c = _operands(a, b)
    cn = c.numpy
    if alpha != 1:
        B = np.multiply(B, scalar_as(alpha, cn), dtype=cn)
    (np.add if op == "add" else np.subtract)(A, B, out=as_numpy(out), signature=(cn, cn, cn),
                                              casting="unsafe")


@kernel("add")
def add(out, self, other, *, alpha=1):
    """out = self + alpha * other"""
    if alpha == 1 and isinstance(self, _T) and isinstance(other, _T):
        d = out._dtype
        if self._dtype is d and other._dtype is d:
            o = as_numpy(out)
            if o.size < PARALLEL_MIN:  # the per-op-overhead path, kept short
                np.add(as_numpy(self), as_numpy(other), out=o)
                return
    _add(out, self, other, alpha, "add")


@kernel("sub")
def sub(out, self, other, *, alpha=1):
    """out = self - alpha * other (bool operands were refused by the meta rule)"""
    _add(out, self, other, alpha, "sub")


@kernel("mul")
def mul(out, self, other):
    """out = self * other"""
    if _same(out, self, other):
        flats = par_flats(out, self, other)
        if flats is None:
            np.multiply(as_numpy(self), as_numpy(other), out=as_numpy(out))
        else:
            loops().mul_par(*flats)
        return
    if isinstance(self, _T) and not isinstance(other, _T) and self._dtype is out._dtype \
            and out._dtype.is_floating_point:
        flats = par_flats(out, self, other)
        if flats is not None:
            loops().mul_scalar_par(*flats)
            return
    A, B, c = _operands(self, other)
    cn = c.numpy
    np.multiply(A, B, out=as_numpy(out), signature=(cn, cn, cn), casting="unsafe")


def _trunc_int_div(A, B, cn):
    q = np.floor_divide(A, B, dtype=cn)
    inexact = np.remainder(A, B, dtype=cn) != 0
    return q + (inexact & ((np.asarray(A) < 0) != (np.asarray(B) < 0))).astype(cn)


@kernel("div")
def div(out, self, other, *, rounding_mode=None):
    """out = self / other, optionally rounded ('trunc', 'floor') as in PyTorch"""
    if rounding_mode is None:
        if _same(out, self, other) and out._dtype.is_floating_point:
            flats = par_flats(out, self, other)
            if flats is None:
                np.true_divide(as_numpy(self), as_numpy(other), out=as_numpy(out))
            else:
                loops().div_par(*flats)
            return
        A, B, c = _operands(self, other, floating=True)
        cn = c.numpy
        np.true_divide(A, B, out=as_numpy(out), signature=(cn, cn, cn), casting="unsafe")
        return
    A, B, c = _operands(self, other)
    cn = c.numpy
    if c.is_floating_point:
        if rounding_mode == "floor":
            np.floor_divide(A, B, out=as_numpy(out), signature=(cn, cn, cn), casting="unsafe")
        else:
            write(out, np.trunc(np.true_divide(A, B, dtype=cn)))
        return
    check_nonzero_divisor("div", other)
    if c is dt.bool:
        cn = np.dtype(np.uint8)
    if rounding_mode == "floor":
        np.floor_divide(A, B, out=as_numpy(out), signature=(cn, cn, cn), casting="unsafe")
    else:
        write(out, _trunc_int_div(A, B, cn))


@kernel("pow")
def pow_(out, self, exponent):
    """out = self ** exponent (integer powers follow PyTorch: 2 ** -1 == 0, (-1) ** -3 == -1)"""
    A, B, c = _operands(self, exponent)
    if c is dt.bool:  # only bool ** Python bool reaches here (the meta rule refuses the rest)
        write(out, A if exponent else np.True_)   # x ** True == x, x ** False == 1
        return
    cn = c.numpy
    if c.is_floating_point:
        np.power(A, B, out=as_numpy(out), signature=(cn, cn, cn), casting="unsafe")
        return
    jit_apply("int_pow", out, (self if isinstance(self, _T) else np.asarray(A),
                               exponent if isinstance(exponent, _T) else np.asarray(B)),
              np.dtype(np.int64))


# ---- ufunc-backed families --------------------------------------------------------------------

def _promoting(name: str, uf, *, floating: bool = False, int_divisor: bool = False,
               no_bool: bool = False, doc: str = "in the promoted dtype"):
    def k(out, self, other):
        A, B, c = _operands(self, other, floating)
        if c is dt.bool and no_bool:
            raise unsupported(name, c)
        if int_divisor and not c.is_floating_point:
            check_nonzero_divisor(name, other)
        cn = c.numpy
        uf(A, B, out=as_numpy(out), signature=(cn, cn, cn), casting="unsafe")
    k.__name__ = name
    k.__doc__ = f"out = {name}(self, other) {doc}"
    kernel(name)(k)


for _name, _uf in (("maximum", np.maximum), ("minimum", np.minimum), ("fmax", np.fmax),
                   ("fmin", np.fmin)):
    _promoting(_name, _uf)
_promoting("remainder", np.remainder, int_divisor=True, no_bool=True)
_promoting("fmod", np.fmod, int_divisor=True, no_bool=True)
_promoting("floor_divide", np.floor_divide, int_divisor=True, no_bool=True)
for _name, _uf in (("atan2", np.arctan2), ("hypot", np.hypot), ("logaddexp", np.logaddexp)):
    _promoting(_name, _uf, floating=True)


@kernel("xlogy")
def xlogy(out, self, other):
    """out = self * log(other), 0 where self == 0 (unless other is NaN)"""
    A, B, c = _operands(self, other, floating=True)
    cn = c.numpy
    r = np.multiply(A, np.log(B, dtype=cn), dtype=cn)
    write(out, np.where((np.asarray(A) == 0) & ~np.isnan(B), cn.type(0), r))


def _compare(name: str, uf):
    def k(out, self, other):
        A, B, c = _operands(self, other)
        cn = c.numpy
        uf(A, B, out=as_numpy(out), signature=(cn, cn, _BOOL), casting="unsafe")
    k.__name__ = name
    k.__doc__ = f"out = {name}(self, other), compared in the promoted dtype"
    kernel(name)(k)


for _name, _uf in (("eq", np.equal), ("ne", np.not_equal), ("lt", np.less),
                   ("le", np.less_equal), ("gt", np.greater), ("ge", np.greater_equal)):
    _compare(_name, _uf)


def _logical(name: str, uf):
    def k(out, self, other):
        A, B, _ = _operands(self, other)
        uf(A, B, out=as_numpy(out), casting="unsafe")
    k.__name__ = name
    k.__doc__ = f"out = {name}(self != 0, other != 0)"
    kernel(name)(k)


for _name, _uf in (("logical_and", np.logical_and), ("logical_or", np.logical_or),
                   ("logical_xor", np.logical_xor)):
    _logical(_name, _uf)


for _name, _uf in (("bitwise_and", np.bitwise_and), ("bitwise_or", np.bitwise_or),
                   ("bitwise_xor", np.bitwise_xor)):
    _promoting(_name, _uf, doc="on integers or bools")


# bit shifts: the backend kit's (`coretorch.backend_kit.shifts`)
TABLE.add_all(shift_kernels(KIT))
