"""Binary elementwise kernels: arithmetic, division modes, pow, comparisons, logical, bitwise.

Either operand may be a Python scalar (``div(2, t)``). Both operands are brought to the compute
dtype, the ufunc runs (straight into `out` when out has that dtype) and the result is cast.
"""
from __future__ import annotations

import numpy as np

from coretorch.backend_kit.shifts import shift_kernels

from ..registry import TABLE, kernel
from ._common import (KIT, BOOL, T, arr, check_nonzero_divisor, compute_dtype, dt, operand,
                      ufunc_into, unsupported, write, xp)


def _operands(a, b, floating: bool = False):
    """(A, B, compute dtype) with A, B as device arrays/numpy scalars in the compute dtype."""
    if isinstance(a, T) and isinstance(b, T) and a._dtype is b._dtype and \
            (not floating or a._dtype.is_floating_point):
        c = a._dtype
        return arr(a), arr(b), c
    c = compute_dtype(a, b, floating=floating)
    return operand(a, c.numpy), operand(b, c.numpy), c


# ---- add / sub / mul / div --------------------------------------------------------------------

def _add(out, a, b, alpha, uf) -> None:
    A, B, c = _operands(a, b)
    cn = c.numpy
    if alpha != 1:
        B = B * operand(alpha, cn)  # stays in cn: both operands are of cn
    ufunc_into(uf, out, cn, A, B)


@kernel("add")
def add(out, self, other, *, alpha=1):
    """out = self + alpha * other"""
    _add(out, self, other, alpha, xp.add)


@kernel("sub")
def sub(out, self, other, *, alpha=1):
    """out = self - alpha * other (bool operands were refused by the meta rule)"""
    _add(out, self, other, alpha, xp.subtract)


@kernel("mul")
def mul(out, self, other):
    """out = self * other"""
    A, B, c = _operands(self, other)
    if c is dt.bool:
        ufunc_into(xp.logical_and, out, BOOL, A, B)
        return
    ufunc_into(xp.multiply, out, c.numpy, A, B)


def _trunc_int_div(A, B, cn):
    q = xp.floor_divide(A, B)
    inexact = xp.remainder(A, B) != 0
    neg = xp.logical_xor(xp.asarray(A) < 0, xp.asarray(B) < 0)
    return q + xp.logical_and(inexact, neg).astype(cn)


@kernel("div")
def div(out, self, other, *, rounding_mode=None):
    """out = self / other, optionally rounded ('trunc', 'floor') as in PyTorch"""
    if rounding_mode is None:
        A, B, c = _operands(self, other, floating=True)
        ufunc_into(xp.true_divide, out, c.numpy, A, B)
        return
    A, B, c = _operands(self, other)
    cn = c.numpy
    if c.is_floating_point:
        if rounding_mode == "floor":
            ufunc_into(xp.floor_divide, out, cn, A, B)
        else:
            write(out, xp.trunc(xp.true_divide(A, B)))
        return
    check_nonzero_divisor("div", other)
    if c is dt.bool:
        cn = np.dtype(np.uint8)
        A, B = operand(self, cn), operand(other, cn)
    if rounding_mode == "floor":
        ufunc_into(xp.floor_divide, out, cn, A, B)
    else:
        write(out, _trunc_int_div(A, B, cn))


def _int_pow(base, e, cn):
    """Integer power by squaring with PyTorch's negative-exponent rule (1 ** -n == 1,
    (-1) ** -n == +-1, anything else ** -n == 0)."""
    base, e = xp.broadcast_arrays(xp.asarray(base).astype(np.int64),
                                  xp.asarray(e).astype(np.int64))
    neg = e < 0
    r = xp.ones(base.shape, np.int64)
    b = base.copy()
    k = xp.where(neg, 0, e)
    while bool((k > 0).any()):
        odd = (k & 1) == 1
        r = xp.where(odd, r * b, r)
        b = b * b
        k = k >> 1
    neg_val = xp.where(base == 1, 1, xp.where(base == -1, xp.where(e % 2 == 0, 1, -1), 0))
    return xp.where(neg, neg_val, r)


@kernel("pow")
def pow_(out, self, exponent):
    """out = self ** exponent (integer powers follow PyTorch: 2 ** -1 == 0, (-1) ** -3 == -1)"""
    A, B, c = _operands(self, exponent)
    if c is dt.bool:  # only bool ** Python bool reaches here (the meta rule refuses the rest)
        write(out, A if exponent else np.True_)   # x ** True == x, x ** False == 1
        return
    cn = c.numpy
    if c.is_floating_point:
        ufunc_into(xp.power, out, cn, A, B)
        return
    write(out, _int_pow(A, B, cn))


# ---- ufunc-backed families --------------------------------------------------------------------

def _promoting(name: str, ufname: str, *, floating: bool = False, int_divisor: bool = False,
               no_bool: bool = False, doc: str = "in the promoted dtype"):
    uf = getattr(xp, ufname)

    def k(out, self, other):
        A, B, c = _operands(self, other, floating)
        if c is dt.bool and no_bool:
            raise unsupported(name, c)
        if int_divisor and not c.is_floating_point:
            check_nonzero_divisor(name, other)
        ufunc_into(uf, out, c.numpy, A, B)
    k.__name__ = name
    k.__doc__ = f"out = {name}(self, other) {doc}"
    kernel(name)(k)


for _name in ("maximum", "minimum", "fmax", "fmin"):
    _promoting(_name, _name)
_promoting("remainder", "remainder", int_divisor=True, no_bool=True)
_promoting("fmod", "fmod", int_divisor=True, no_bool=True)
_promoting("floor_divide", "floor_divide", int_divisor=True, no_bool=True)
for _name, _uf in (("atan2", "arctan2"), ("hypot", "hypot"), ("logaddexp", "logaddexp")):
    _promoting(_name, _uf, floating=True)


@kernel("xlogy")
def xlogy(out, self, other):
    """out = self * log(other), 0 where self == 0 (unless other is NaN)"""
    A, B, c = _operands(self, other, floating=True)
    cn = c.numpy
    r = xp.multiply(A, xp.log(B))
    zero = xp.logical_and(xp.asarray(A) == 0, xp.logical_not(xp.isnan(B)))
    write(out, xp.where(zero, cn.type(0), r))


def _predicate(name: str, ufname: str, doc: str):
    """A bool-valued kernel: `xp.<ufname>` on the operands in their promoted dtype."""
    uf = getattr(xp, ufname)

    def k(out, self, other):
        A, B, _ = _operands(self, other)
        ufunc_into(uf, out, BOOL, A, B)
    k.__name__ = name
    k.__doc__ = doc
    kernel(name)(k)


for _name, _uf in (("eq", "equal"), ("ne", "not_equal"), ("lt", "less"), ("le", "less_equal"),
                   ("gt", "greater"), ("ge", "greater_equal")):
    _predicate(_name, _uf, f"out = {_name}(self, other), compared in the promoted dtype")
for _name in ("logical_and", "logical_or", "logical_xor"):
    _predicate(_name, _name, f"out = {_name}(self != 0, other != 0)")
for _name in ("bitwise_and", "bitwise_or", "bitwise_xor"):
    _promoting(_name, _name, doc="on integers or bools")


# bit shifts: the backend kit's (`coretorch.backend_kit.shifts`)
TABLE.add_all(shift_kernels(KIT))
