"""Scans and differences: cummax, cummin, logcumsumexp, diff, trapezoid (and its alias trapz),
cumulative_trapezoid. All composites.

The running maximum, minimum and log-sum-exp are inclusive scans by doubling: ceil(log2 n)
steps, each combining every element with the one 2^k before it (Hillis and Steele), so a
backend needs no scan primitive beyond cumsum. cummax/cummin give the index of the last
occurrence of the running extreme (of the last NaN once one is seen), as PyTorch.
"""

from __future__ import annotations

from typing import Any

from .. import dtypes as dt
from ..tensor.impl import TensorImpl
from .declare import REGISTRY, declare
from .meta_rules import broadcast_shapes, float_result, promote
from .reductions import flops_reduction, grad_at_indices

__all__ = ["inclusive_scan"]

_T = TensorImpl


def _op(name: str):
    return REGISTRY[name].op.entry


def inclusive_scan(x, dim: int, combine):
    """``out[i] = combine(x[0], ..., x[i])`` along `dim` for an associative `combine(later,
    earlier)` of two tensors, in ceil(log2 n) steps."""
    n = x._shape[dim]
    step = 1
    while step < n:
        tail = combine(x.narrow(dim, step, n - step), x.narrow(dim, 0, n - step))
        x = _op("cat")([x.narrow(dim, 0, step), tail], dim)
        step *= 2
    return x


# ---- cummax, cummin -----------------------------------------------------------------------------


def _meta_cumext(self, dim):
    return [(self._shape, self._dtype, self._device), (self._shape, dt.int64, self._device)]


def _cumext(op: str):
    pointwise = "maximum" if op == "cummax" else "minimum"

    def impl(self, dim):
        if not self._shape:
            return REGISTRY[op].returns(self.clone(), self.new_zeros((), dtype=dt.int64))
        combine = _op(pointwise)
        values = inclusive_scan(self, dim, combine)
        n = self._shape[dim]
        pos = _op("arange")(n, device=self._device).reshape(
            tuple(n if d == dim else 1 for d in range(len(self._shape)))
        )
        # the last element equal to the running extreme (or NaN) up to each position
        hit = self.eq(values) | self.isnan()
        indices = inclusive_scan(_op("where")(hit, pos, 0), dim, _op("maximum"))
        return REGISTRY[op].returns(values, indices)

    impl.__name__ = f"_{op}"
    return impl


def _d_cumext(ctx, grad, grad_indices=None):
    """Each running extreme's gradient goes to the element it came from (summed)."""
    return (grad_at_indices(ctx.self, grad, ctx.dim, ctx.result[1]),)


# ---- logcumsumexp --------------------------------------------------------------------------------


def _meta_logcumsumexp(self, dim):
    if not self._dtype.is_floating_point:
        raise NotImplementedError(
            f"logcumsumexp(): not implemented for '{self._dtype.name}'; "
            f"expected a floating point tensor"
        )
    return (self._shape, self._dtype, self._device)


def _logcumsumexp(self, dim):
    """log(cumsum(exp(self))) along `dim`, computed stably (a scan of logaddexp)."""
    if not self._shape:
        return self.clone()
    return inclusive_scan(self, dim, _op("logaddexp"))


def _d_logcumsumexp(ctx, grad):
    """PyTorch's formula: the positive and negative parts of the gradient each through a
    reversed logcumsumexp, so nothing overflows."""
    self, result, dim = ctx.self, ctx.result, ctx.dim
    if not self._shape:
        return (grad,)
    where = _op("where")
    lowest = dt.finfo(grad._dtype).min

    def reverse_lcse(x):
        return _op("logcumsumexp")(x.flip([dim]), dim).flip([dim])

    log_abs = grad.abs().log()
    pos = where(grad.gt(0), log_abs, lowest)
    neg = where(grad.lt(0), log_abs, lowest)
    return ((reverse_lcse(pos - result) + self).exp() - (reverse_lcse(neg - result) + self).exp(),)


# ---- diff ---------------------------------------------------------------------------------------


def _meta_diff(self, n, dim, prepend, append):
    if not self._shape:
        raise RuntimeError("diff(): diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"diff(): order must be non-negative but got {n}")
    if n == 0:  # PyTorch returns a copy of the input (prepend and append are not joined)
        return (self._shape, self._dtype, self._device)
    total = self._shape[dim]
    for t in (prepend, append):
        if t is None:
            continue
        if len(t._shape) != len(self._shape):
            raise RuntimeError(
                "diff(): diff expects prepend or append to be the same dimension as input"
            )
        for d, (a, b) in enumerate(zip(self._shape, t._shape)):
            if d != dim and a != b:
                raise RuntimeError(
                    f"diff(): diff expects the shape of tensor to prepend or "
                    f"append to match that of input except along the "
                    f"differencing dimension; input.size({d}) = {a}, but got "
                    f"tensor.size({d}) = {b}"
                )
        total += t._shape[dim]
    shape = self._shape[:dim] + (max(total - n, 0),) + self._shape[dim + 1 :]
    return (shape, promote(self, prepend, append), self._device)


def _diff(self, n, dim, prepend, append):
    """The n-th forward difference along `dim` (exclusive or for bool), after joining
    `prepend` and `append` to `self` (n = 0: a copy of `self` alone)."""
    if n == 0:
        return self.clone()
    parts = [t for t in (prepend, self, append) if t is not None]
    x = _op("cat")(parts, dim) if len(parts) > 1 else self
    for _ in range(n):
        m = x._shape[dim]
        if m == 0:
            break
        later, earlier = x.narrow(dim, 1, m - 1), x.narrow(dim, 0, m - 1)
        x = later.logical_xor(earlier) if x._dtype is dt.bool else later - earlier
    return x


# ---- trapezoid, cumulative_trapezoid -------------------------------------------------------------


def _meta_trapezoid(op: str):
    def meta(y, x, dx, dim):
        if x is not None and dx is not None:
            raise TypeError(f"{op}(): give the sample points `x` or the spacing `dx`, not both")
        if not y._shape:
            raise IndexError(
                f"{op}(): Dimension out of range (expected a tensor with at least "
                f"one dimension, got a 0-d tensor)"
            )
        n = y._shape[dim]
        d = promote(y, x if x is not None else (1 if dx is None else dx))
        if x is not None:
            if len(x._shape) == 1:
                if x._shape[0] != n:
                    raise RuntimeError(
                        f"{op}(): There must be one `x` value for each sample "
                        f"point; got {x._shape[0]} values of x and {n} samples"
                    )
            else:
                broadcast_shapes(op, x._shape, y._shape)
        if op == "trapezoid":
            shape = y._shape[:dim] + y._shape[dim + 1 :]
        else:
            shape = y._shape[:dim] + (max(n - 1, 0),) + y._shape[dim + 1 :]
        return (shape, float_result(d) if n else d, y._device)

    meta.__name__ = f"meta_{op}"
    return meta


def _spacing(y, x, dim):
    """The gap between neighbouring sample points along `dim`, broadcastable against y."""
    if len(x._shape) == 1:
        return x.diff().reshape(tuple(-1 if d == dim else 1 for d in range(len(y._shape))))
    return x.diff(dim=dim)


def _trapezoid(y, x, dx, dim):
    """The integral of y along `dim` by the trapezoidal rule, at sample points `x` or with
    spacing `dx` (default 1)."""
    n = y._shape[dim]
    if n == 0:
        return y.sum(dim) if x is None else (y * 0).sum(dim)
    if x is None:
        step = 1 if dx is None else dx
        ends = y.select(dim, 0) + y.select(dim, n - 1)
        return (y.sum(dim) - ends * 0.5) * step
    pairs = y.narrow(dim, 1, n - 1) + y.narrow(dim, 0, n - 1)
    return (pairs * _spacing(y, x, dim)).sum(dim) / 2.0


def _trapz(y, x, dx, dim):
    """`trapezoid` (its older name)."""
    return _trapezoid(y, x, dx, dim)


def _cumulative_trapezoid(y, x, dx, dim):
    """The running integral of y along `dim` by the trapezoidal rule (n - 1 values)."""
    n = y._shape[dim]
    if n == 0:
        return y.narrow(dim, 0, 0).to(float_result(y._dtype))
    pairs = y.narrow(dim, 1, n - 1) + y.narrow(dim, 0, n - 1)
    step = (1 if dx is None else dx) if x is None else _spacing(y, x, dim)
    return (pairs * step / 2.0).cumsum(dim)


def _declare_all() -> None:
    red: dict[str, Any] = dict(family="reduction", flops=flops_reduction)
    for op, pointwise in (("cummax", "maximum"), ("cummin", "minimum")):
        declare(
            f"{op}(Tensor self, Dim dim) -> (Tensor values, Tensor indices)",
            _meta_cumext,
            impl=_cumext(op),
            derivative=_d_cumext,
            saves=(),
            save_result=True,
            doc=f"(values, indices): the running {pointwise} of `input` along `dim` and the "
            f"index where it was last attained (NaN propagates).",
            **red,
        )
    declare(
        "logcumsumexp(Tensor self, Dim dim) -> Tensor",
        _meta_logcumsumexp,
        impl=_logcumsumexp,
        derivative=_d_logcumsumexp,
        saves=("self",),
        save_result=True,
        **red,
    )
    declare(
        "diff(Tensor self, int n=1, Dim dim=-1, Tensor? prepend=None, Tensor? append=None) "
        "-> Tensor",
        _meta_diff,
        impl=_diff,
        **red,
    )
    trap = "(Tensor y, Tensor? x=None, *, Scalar? dx=None, Dim dim=-1) -> Tensor"
    for op, fn in (
        ("trapezoid", _trapezoid),
        ("trapz", _trapz),
        ("cumulative_trapezoid", _cumulative_trapezoid),
    ):
        declare(
            op + trap,
            _meta_trapezoid(op if op != "trapz" else "trapezoid"),
            impl=fn,
            method=False,
            **red,
        )


_declare_all()
