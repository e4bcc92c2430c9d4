"""Reductions and scans.

Primitives (a backend implements these): sum, prod, amax, argmax, cumsum, cumprod. Composites
(written with other ops; a backend may register a faster kernel, as the backend kit does for
amin, argmin, any, all): amin/argmin (amax/argmax of the order-reversed values), any (a sum of
nonzeros), all (not any of the zeros), mean, max/min (all elements, along a dim, or elementwise
against another tensor), the by-dim ``_max_dim``/``_min_dim`` (argmax/argmin + gather, with
PyTorch's gradient), var, std, logsumexp, norm. softmax/log_softmax are in `softmax.py`.

Dims arrive wrapped from the schema: a ``Dim[]?`` is None or a tuple of non-negative dims, a
``Dim?`` None or one dim. For sum-like reductions None and ``()`` both mean every dim (``any``/
``all`` read ``()`` as no dim, as PyTorch does); a 0-d tensor accepts dim 0 and reduces nothing.
The meta rules are the only place arguments are refused. FLOPs: one per input element.
"""

from __future__ import annotations

import collections
import math
import warnings
from typing import Any

from .. import dtypes as dt
from ..dispatch.keys import AUTOGRAD_BIT
from ..dispatch.tls import local_keys
from ..frames import user_stacklevel
from ..tensor.impl import TensorImpl, shape_numel
from .declare import REGISTRY, declare, return_types
from .meta_rules import reduced_shape, refuse_complex, wrap_dim
from .pointwise import binary_spec

_T = TensorImpl

__all__ = ["flops_reduction", "reduction_dims", "restore_reduced", "grad_at_indices"]


def flops_reduction(result, self, *args) -> int:
    """One FLOP per input element."""
    return self.numel()


def _op(name: str):
    """The entry point of declared op `name` (looked up when called)."""
    return REGISTRY[name].op.entry


def reduction_dims(self, dim) -> tuple:
    """The dims of `self` a reduction over `dim` covers: every dim for None or ``()``, none for
    a 0-d tensor, else `dim` itself (one wrapped dim or a tuple of them)."""
    if not self._shape:
        return ()
    if dim is None or dim == ():
        return tuple(range(len(self._shape)))
    return dim if dim.__class__ is tuple else (dim,)


def _int_to_long(d):
    """sum/prod/cumsum of bool or integer tensors accumulate in int64, as in PyTorch."""
    return d if d.is_floating_point or d.is_complex else dt.int64


def _reduced_count(self, dims: tuple) -> int:
    """How many elements each output of a reduction over `dims` combines."""
    return shape_numel(self._shape[d] for d in dims)


def restore_reduced(grad, self, dims: tuple, keepdim: bool):
    """`grad` of a reduction of `self` over `dims` (from `reduction_dims`) with the reduced
    dims put back as size 1, so it broadcasts against `self`."""
    if keepdim:
        return grad
    for d in sorted(dims):
        grad = grad.unsqueeze(d)
    return grad


def _grad_to(grad, self):
    """Gradients flow back in the input's dtype (when a `dtype=` argument changed it)."""
    return grad if grad._dtype is self._dtype else grad.to(self._dtype)


def _empty_full_reduction(op: str, index_error: bool = False):
    """PyTorch's error for a reduction without identity over every element of an empty tensor."""
    if index_error:
        return IndexError(f"{op}(): Expected reduction dim to be specified for input.numel() == 0.")
    return RuntimeError(
        f"{op}(): Expected reduction dim to be specified for input.numel() == 0. "
        f"Specify the reduction dim with the 'dim' argument."
    )


def _check_nonempty(op: str, self, dims: tuple) -> None:
    """Reductions without an identity (max, argmax, ...) need non-empty reduced dims."""
    shape = self._shape
    for d in dims:
        if shape[d] == 0:
            raise IndexError(f"{op}(): Expected reduction dim {d} to have non-zero size.")


# ---- sum, prod, mean ----------------------------------------------------------------------------


def _meta_sum_prod(self, dim, keepdim, dtype):
    return (
        reduced_shape(self._shape, reduction_dims(self, dim), keepdim),
        dtype or _int_to_long(self._dtype),
        self._device,
    )


def _d_sum(ctx, grad):
    self = ctx.self
    grad = restore_reduced(grad, self, reduction_dims(self, ctx.dim), ctx.keepdim)
    return (_grad_to(grad, self).expand(self._shape),)


def _prod_grad_1d(x, g, d: int):
    """d prod(x along d) / dx * g with zeros handled: the product of all other elements
    (exclusive cumulative products from both ends)."""
    cat = _op("cat")
    ones = x.narrow(d, 0, 1).new_ones(x.narrow(d, 0, 1)._shape)
    before = cat([ones, x.narrow(d, 0, x._shape[d] - 1)], d).cumprod(d)
    after = cat([x.narrow(d, 1, x._shape[d] - 1), ones], d).flip([d]).cumprod(d)
    return g * before * after.flip([d])


def _d_prod(ctx, grad):
    self, dim = ctx.self, ctx.dim
    dims = reduction_dims(self, dim)
    grad = _grad_to(restore_reduced(grad, self, dims, ctx.keepdim), self)
    if not self._shape:
        return (grad,)
    if self.numel() == 0:
        return (grad.new_zeros(self._shape),)
    if dim is None:
        flat = self.reshape(-1)
        return (_prod_grad_1d(flat, grad.reshape(1), 0).reshape(self._shape),)
    return (_prod_grad_1d(self, grad, dim),)


def _meta_mean(self, dim, keepdim, dtype):
    if dtype is not None and not (dtype.is_floating_point or dtype.is_complex):
        raise RuntimeError(
            f"mean(): could not infer output dtype. Optional dtype must be either "
            f"a floating point or complex dtype. Got: {dtype.name}"
        )
    if dtype is None and not (self._dtype.is_floating_point or self._dtype.is_complex):
        raise RuntimeError(
            f"mean(): could not infer output dtype. Input dtype must be either a "
            f"floating point or complex dtype. Got: {self._dtype.name}"
        )
    return (
        reduced_shape(self._shape, reduction_dims(self, dim), keepdim),
        dtype or self._dtype,
        self._device,
    )


def _in_opmath(x):
    """`x` in the dtype its reductions accumulate in (half precision in float32, as PyTorch's
    kernels: a long half reduction neither overflows nor drops small terms)."""
    d = dt.opmath_dtype(x._dtype)
    return x if d is x._dtype else x.to(d)


def _as_dtype(r, d):
    return r if r._dtype is d else r.to(d)


def _mean(self, dim, keepdim, dtype):
    """Arithmetic mean over `dim` (every dim when None); float dtypes only (or give `dtype`)."""
    count = _reduced_count(self, reduction_dims(self, dim))
    out = dtype or self._dtype
    total = self.sum(dim, keepdim, dtype=dt.opmath_dtype(out))
    return _as_dtype(total.div(count if count else math.nan), out)


# ---- amax, amin, max, min, argmax, argmin -------------------------------------------------------


def _meta_extremum(op: str):
    def meta(self, dim, keepdim):
        if self._dtype.is_complex:
            refuse_complex(op, self)
        dims = reduction_dims(self, dim)
        if not all(self._shape):
            if not dim:
                raise _empty_full_reduction(op)
            _check_nonempty(op, self, dims)
        return (reduced_shape(self._shape, dims, keepdim), self._dtype, self._device)

    meta.__name__ = f"meta_{op}"
    return meta


def _reversed(x):
    """Values in reversed order, exactly: -x for floats, ~x for integers and bools."""
    return x.neg() if x._dtype.is_floating_point else x.bitwise_not()


def _amin(self, dim, keepdim):
    """The minimum over `dim`: the maximum of the order-reversed values, reversed back."""
    return _reversed(_reversed(self).amax(dim, keepdim))


def _d_amax(ctx, grad):
    """The gradient goes evenly to every element equal to the extreme value (as PyTorch)."""
    self = ctx.self
    dims = reduction_dims(self, ctx.dim)
    value = restore_reduced(ctx.result, self, dims, ctx.keepdim)
    mask = self.eq(value)
    count = mask.sum(dims, keepdim=True) if dims else mask.to(self._dtype)
    return (restore_reduced(grad, self, dims, ctx.keepdim).div(count).mul(mask),)


def _meta_arg(op: str):
    def meta(self, dim, keepdim):
        if self._dtype.is_complex:
            refuse_complex(op, self)
        if self._dtype is dt.bool:
            raise RuntimeError(f"{op}(): does not support bool input")
        if dim is None:
            if shape_numel(self._shape) == 0:
                raise _empty_full_reduction(op, index_error=True)
            return (tuple(1 for _ in self._shape) if keepdim else (), dt.int64, self._device)
        dims = reduction_dims(self, dim)
        _check_nonempty(op, self, dims)
        return (reduced_shape(self._shape, dims, keepdim), dt.int64, self._device)

    meta.__name__ = f"meta_{op}"
    return meta


def _argmin(self, dim, keepdim):
    """The index of the first minimum: the first maximum of the order-reversed values."""
    return _reversed(self).argmax(dim, keepdim)


def _result_type(name: str) -> type:
    """``coretorch.return_types.<name>``: the (values, indices) namedtuple of max/min."""
    cls = collections.namedtuple(name, ("values", "indices"))  # type: ignore[misc]  # run-time name
    cls.__module__ = "coretorch.return_types"
    setattr(return_types, name, cls)
    return cls


_RESULT = {"max": _result_type("max"), "min": _result_type("min")}


def _meta_extremum_dim(op: str):
    def meta(self, dim, keepdim):
        if self._dtype.is_complex:
            refuse_complex(op, self)
        dims = reduction_dims(self, dim)
        _check_nonempty(op, self, dims)
        shape = reduced_shape(self._shape, dims, keepdim)
        return [(shape, self._dtype, self._device), (shape, dt.int64, self._device)]

    meta.__name__ = f"meta_{op}_dim"
    return meta


def _extremum_dim(op: str):
    arg, result = "argmax" if op == "max" else "argmin", _RESULT[op]

    def impl(self, dim, keepdim):
        x = self if self._shape else self.reshape(1)
        # argmax refuses bool; as 0/1 bytes the first True is the first maximum
        idx = _op(arg)(x if x._dtype is not dt.bool else x.to(dt.uint8), dim, True)
        values = x.gather(dim, idx)
        if not self._shape:
            return result(values.reshape(()), idx.reshape(()))
        if not keepdim:
            values, idx = values.squeeze(dim), idx.squeeze(dim)
        return result(values, idx)

    impl.__name__ = f"_{op}_dim"
    return impl


def grad_at_indices(self, grad, dim: int, indices):
    """The gradient for `self` of values taken from it at `indices` along `dim` (max/min's
    values, cummax's running extremes): `grad` summed into zeros at those indices; a 0-d
    `self` takes `grad` as it is."""
    if not self._shape:
        return grad
    return grad.new_zeros(self._shape).scatter_add(dim, indices, grad)


def _d_extremum_dim(ctx, grad, grad_indices=None):
    """The gradient of `values` goes to the selected element of each slice."""
    d, indices = ctx.dim, ctx.result[1]
    if not ctx.keepdim and ctx.self._shape:
        grad, indices = grad.unsqueeze(d), indices.unsqueeze(d)
    return (grad_at_indices(ctx.self, grad, d, indices),)


def _meta_max_min(op: str, pointwise: str):
    by_dim = _meta_extremum_dim(op)

    def meta(self, dim, keepdim):
        if self._dtype.is_complex:
            refuse_complex(op, self)
        if isinstance(dim, _T):
            return binary_spec(pointwise, self, dim, "promote")
        if dim is None:
            if keepdim:
                raise TypeError(f"{op}(): keepdim=True needs a dim; got dim=None")
            if shape_numel(self._shape) == 0:
                raise _empty_full_reduction(op)
            return ((), self._dtype, self._device)
        if not isinstance(dim, int) or isinstance(dim, bool):
            raise TypeError(f"{op}(): argument 'dim' must be int, not {type(dim).__name__}")
        return by_dim(self, wrap_dim(op, dim, len(self._shape)), keepdim)

    meta.__name__ = f"meta_{op}"
    return meta


def _max_min(op: str, pointwise: str):
    full, by_dim, result = "amax" if op == "max" else "amin", f"_{op}_dim", _RESULT[op]

    def impl(self, dim, keepdim):
        if isinstance(dim, _T):
            return _op(pointwise)(self, dim)
        if dim is None:
            return _op(full)(self)
        return result(*_op(by_dim)(self, dim, keepdim))

    impl.__name__ = op
    impl.__doc__ = (
        f"``{op}(t)``: the {op}imum of all elements (0-d); ``{op}(t, dim, keepdim)``: "
        f"namedtuple (values, indices) along `dim`; ``{op}(t, other)``: the "
        f"elementwise {pointwise}."
    )
    return impl


# ---- any, all -----------------------------------------------------------------------------------


def _meta_logical(op: str):
    def meta(self, dim, keepdim):
        # an empty dim list reduces nothing here (unlike sum, where it means every dim)
        dims = () if dim == () else reduction_dims(self, dim)
        # PyTorch keeps uint8 for uint8 inputs (a legacy of byte masks); every other dtype -> bool
        d = dt.uint8 if self._dtype is dt.uint8 else dt.bool
        return (reduced_shape(self._shape, dims, keepdim), d, self._device)

    meta.__name__ = f"meta_{op}"
    return meta


def _as_mask_of(r, self):
    return r.to(dt.uint8) if self._dtype is dt.uint8 else r


def _any(self, dim, keepdim):
    """Whether some element (along `dim`) is nonzero: the count of nonzeros is not 0."""
    nonzero = self.ne(0)
    return _as_mask_of(nonzero if dim == () else nonzero.sum(dim, keepdim).ne(0), self)


def _all(self, dim, keepdim):
    """Whether every element (along `dim`) is nonzero: not any(self == 0)."""
    return _as_mask_of(self.eq(0).any(dim, keepdim).logical_not(), self)


# ---- cumsum, cumprod ----------------------------------------------------------------------------


def _meta_scan(self, dim, dtype):
    return (self._shape, dtype or _int_to_long(self._dtype), self._device)


def _reverse_cumsum(x, d: int):
    return x.flip([d]).cumsum(d).flip([d])


def _d_cumsum(ctx, grad):
    self = ctx.self
    if not self._shape:
        return (_grad_to(grad, self),)
    return (_grad_to(_reverse_cumsum(grad, ctx.dim), self),)


def _cumprod_grad_division_free(x, g, d: int):
    """grad_k = prod_{i<k} x_i * sum_{j>=k} g_j prod_{k<i<=j} x_i through an n x n matrix of
    partial products: O(n^2) memory, but no division, so it is differentiable again at zeros."""
    n = x._shape[d]
    where = _op("where")
    xm, gm = x.movedim(d, -1), g.movedim(d, -1)
    pos = _op("arange")(n, device=x._device)
    after_k = pos.unsqueeze(0).gt(pos.unsqueeze(1))  # [k, i]: i > k
    parts = where(after_k, xm.unsqueeze(-2), 1).cumprod(-1).triu()
    tail = (parts * gm.unsqueeze(-2)).sum(-1)  # sum over j
    ones = xm.narrow(-1, 0, 1).new_ones(xm.narrow(-1, 0, 1)._shape)
    before = _op("cat")([ones, xm.narrow(-1, 0, n - 1)], -1).cumprod(-1)
    return (before * tail).movedim(-1, d)


def _d_cumprod(ctx, grad):
    """grad_k = sum_{j>=k} g_j prod_{i<=j, i!=k} x_i. First order, in O(n) with zeros handled:
    positions before the first zero use the division formula, the first zero uses the cumulative
    product with that zero replaced by one, positions after it get zero. When the gradient is
    itself differentiated (grad mode on) the division-free form is used, as in PyTorch."""
    x, d = ctx.self, ctx.dim
    if not x._shape:
        return (_grad_to(grad, x),)
    g = _grad_to(grad, x)
    if not local_keys.exclude & AUTOGRAD_BIT and x._shape[d] > 0:
        return (_cumprod_grad_division_free(x, g, d),)
    where = _op("where")
    out = _grad_to(ctx.result, x)
    is_zero = x.eq(0)
    zeros_so_far = is_zero.cumsum(d)
    before = zeros_so_far.eq(0)
    first_zero = is_zero.logical_and(zeros_so_far.eq(1))
    grad_before = _reverse_cumsum(g * out, d).div(where(before, x, 1))
    grad_first = _reverse_cumsum(g * where(first_zero, 1, x).cumprod(d), d)
    return (where(before, grad_before, where(first_zero, grad_first, 0)),)


# ---- var, std, logsumexp, norm ------------------------------------------------------------------


def _correction(unbiased, correction):
    if correction is None:
        return 1 if unbiased is None or unbiased else 0
    return correction


def _meta_var_std(op: str):
    def meta(self, dim, unbiased, keepdim, correction):
        if unbiased is not None and correction is not None:
            raise TypeError(f"{op}(): give either 'unbiased' or 'correction', not both")
        if not self._dtype.is_floating_point:
            raise RuntimeError(
                f"{op}(): std and var only support floating point and complex "
                f"dtypes, got {self._dtype.name}"
            )
        dims = reduction_dims(self, dim)
        if _reduced_count(self, dims) - _correction(unbiased, correction) <= 0:
            warnings.warn(
                f"{op}(): degrees of freedom is <= 0. Correction should be strictly "
                f"less than the reduction factor (input numel divided by output "
                f"numel).",
                UserWarning,
                stacklevel=user_stacklevel(),
            )
        return (reduced_shape(self._shape, dims, keepdim), self._dtype, self._device)

    meta.__name__ = f"meta_{op}"
    return meta


def _var_opmath(self, dim, unbiased, keepdim, correction):
    """The variance in self's opmath dtype (half precision accumulates in float32)."""
    x = _in_opmath(self)
    n = _reduced_count(x, reduction_dims(x, dim))
    centered = x - x.mean(dim, keepdim=True)
    denom = max(n - _correction(unbiased, correction), 0)
    sumsq = (centered * centered).sum(dim, keepdim)
    # PyTorch divides by max(0, n - correction): x / 0 is inf, 0 / 0 is nan
    return sumsq.div(denom) if denom else sumsq.mul(math.inf)


def _var(self, dim, unbiased, keepdim, correction):
    """Variance over `dim` with Bessel's `correction` (``unbiased=False`` means correction=0)."""
    return _as_dtype(_var_opmath(self, dim, unbiased, keepdim, correction), self._dtype)


def _std(self, dim, unbiased, keepdim, correction):
    """Standard deviation: the square root of `var` (same arguments)."""
    return _as_dtype(_var_opmath(self, dim, unbiased, keepdim, correction).sqrt(), self._dtype)


def _d_std(ctx, grad):
    """PyTorch's: var's gradient of grad / (2 std), which is 0 where std is 0 (not NaN)."""
    self, result, keepdim = ctx.self, ctx.result, ctx.keepdim
    dims = reduction_dims(self, ctx.dim)
    grad_var = _op("where")(result.eq(0), 0.0, grad.div(result * 2))
    dof = _reduced_count(self, dims) - _correction(ctx.unbiased, ctx.correction)
    centered = self - self.mean(ctx.dim, keepdim=True)
    return (
        restore_reduced(grad_var, self, dims, keepdim).mul(2.0 / dof if dof else math.inf)
        * centered,
    )


def _meta_logsumexp(self, dim, keepdim):
    d = self._dtype if self._dtype.is_floating_point else dt.get_default_dtype()
    return (reduced_shape(self._shape, reduction_dims(self, dim), keepdim), d, self._device)


def _logsumexp(self, dim, keepdim):
    """log(sum(exp(self), dim)), computed stably by shifting by the maximum."""
    x = self if self._dtype.is_floating_point else self.to(dt.get_default_dtype())
    if shape_numel(x._shape) == 0:
        return x.exp().sum(dim, keepdim).log()
    m = x.detach().amax(dim, keepdim=True)
    m = _op("where")(m.isinf(), 0.0, m)
    s = (x - m).exp().sum(dim, keepdim).log()
    return s + (m if keepdim else m.squeeze(reduction_dims(x, dim)))


def _meta_norm(self, p, dim, keepdim, dtype):
    if not self._dtype.is_floating_point:
        raise RuntimeError(
            f"norm(): Expected a floating point or complex tensor as input. Got {self._dtype.name}"
        )
    if dtype is not None and not dtype.is_floating_point:
        raise RuntimeError(
            f"norm(): the dtype argument must be a floating point or complex "
            f"dtype, got {dtype.name}"
        )
    if isinstance(p, str):
        if p == "nuc":
            nuc_dims = (-2, -1) if dim is None else dim
            if len(nuc_dims) != 2 or len(self._shape) < 2:
                raise RuntimeError(
                    f"norm(): p='nuc' is a matrix norm: it needs a 2-D input or a "
                    f"dim of two dims, got a {len(self._shape)}-D input and dim "
                    f"{dim}"
                )
            d0, d1 = (d % len(self._shape) for d in nuc_dims)
            return (
                reduced_shape(self._shape, (d0, d1), keepdim),
                dtype or self._dtype,
                self._device,
            )
        if p != "fro":
            raise RuntimeError(f"norm(): only valid string values are 'fro' and 'nuc', found {p}")
        if dim is not None and len(dim) > 2:
            raise RuntimeError(
                f"norm(): p='fro' over more than 2 dims is a matrix norm: dim "
                f"must be a 2-tuple, got {list(dim)}"
            )
    elif p is not None and (isinstance(p, bool) or not isinstance(p, (int, float))):
        raise TypeError(
            f"norm(): argument 'p' must be a number, 'fro' or None, not {type(p).__name__}"
        )
    dims = reduction_dims(self, dim)
    if p in (math.inf, -math.inf) and not all(self._shape):
        for d in dims:
            if self._shape[d] == 0:
                what = "an empty tensor" if dim is None else f"the dimension {d}, which is empty,"
                raise RuntimeError(
                    f"norm(): cannot compute the {p} norm on {what} because the "
                    f"operation does not have an identity"
                )
    return (reduced_shape(self._shape, dims, keepdim), dtype or self._dtype, self._device)


def _norm(self, p, dim, keepdim, dtype):
    """Vector p-norm over `dim` (all elements when None): p = 2/'fro'/None, 1, inf, -inf, 0, or
    any other number; computed in `dtype` when given."""
    out = dtype or self._dtype
    if p == "nuc":  # the sum of the singular values over the two dims
        x = _as_dtype(self, out)
        return _op("linalg_matrix_norm")(x, "nuc", (-2, -1) if dim is None else dim, keepdim)
    return _as_dtype(_norm_opmath(_in_opmath(_as_dtype(self, out)), p, dim, keepdim), out)


def _norm_opmath(x, p, dim, keepdim):
    if p == "fro" or p is None:
        p = 2
    a = x.abs()
    if p == math.inf:
        return a.amax(() if dim is None else dim, keepdim)
    if p == -math.inf:
        return a.amin(() if dim is None else dim, keepdim)
    if p == 0:
        return x.ne(0).to(x._dtype).sum(dim, keepdim)
    if p == 1:
        return a.sum(dim, keepdim)
    if p == 2:
        return (x * x).sum(dim, keepdim).sqrt()
    return a.pow(p).sum(dim, keepdim).pow(1.0 / p)


def _d_norm(ctx, grad):
    """PyTorch's norm_backward: 0 where the norm is 0 (p > 1), sign(self) for p = 1, split
    evenly between the largest |self| (and NaNs) for p = inf."""
    self, p, keepdim = ctx.self, ctx.p, ctx.keepdim
    if p == "nuc":
        return (_d_nuclear_norm(ctx, grad),)
    p = 2.0 if p == "fro" or p is None else float(p)
    x = self if ctx.dtype is None or ctx.dtype is self._dtype else self.to(ctx.dtype)
    dims = reduction_dims(x, ctx.dim)
    where = _op("where")
    norm, grad = (restore_reduced(t, x, dims, keepdim) for t in (ctx.result, grad))
    if p == 0.0:
        g = x.new_zeros(x._shape)
    elif p == 1.0:
        g = x.sign() * grad
    elif p == 2.0:
        g = grad * where(norm.eq(0), 0.0, x / norm)
    elif math.isinf(p):
        a = x.abs()
        mask = a.eq(norm).logical_or(a.isnan())
        count = mask.sum(dims, keepdim=True) if dims else mask.to(x._dtype)
        g = x.sign() * (grad / count * mask)
    elif p < 1.0:
        scaled = x.sign() * where(x.eq(0), 0.0, x.abs().pow(p - 1))
        g = scaled * grad * norm.pow(1 - p)
    else:
        scaled = x.sign() * x.abs().pow(p - 1) if p < 2.0 else x * x.abs().pow(p - 2)
        g = scaled * where(norm.eq(0), 0.0, grad / norm.pow(p - 1))
    return (_grad_to(g, self),)


def _d_nuclear_norm(ctx, grad):
    """U Vh (scaled by grad) over the two dims: the gradient of the sum of singular values."""
    self = ctx.self
    x = self if ctx.dtype is None or ctx.dtype is self._dtype else self.to(ctx.dtype)
    d0, d1 = (d % len(x._shape) for d in ((-2, -1) if ctx.dim is None else ctx.dim))
    U, _, Vh = _op("linalg_svd")(x.movedim((d0, d1), (-2, -1)), False)
    g = grad if ctx.keepdim else grad.unsqueeze(min(d0, d1)).unsqueeze(max(d0, d1))
    g = g.movedim((d0, d1), (-2, -1))
    return _grad_to((U.matmul(Vh) * g).movedim((-2, -1), (d0, d1)), self)


def _declare_all() -> None:
    red: dict[str, Any] = dict(family="reduction", flops=flops_reduction)
    declare(
        "sum(Tensor self, Dim[]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) "
        "-> Tensor",
        _meta_sum_prod,
        derivative=_d_sum,
        saves=(),
        doc="The sum of the elements of `input` over `dim` (all when None), in `dtype` "
        "(int64 for integer and bool inputs by default).",
        **red,
    )
    declare(
        "prod(Tensor self, Dim? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
        _meta_sum_prod,
        derivative=_d_prod,
        saves=("self",),
        doc="The product of the elements of `input` along `dim` (all when None), in "
        "`dtype` (int64 for integer and bool inputs by default).",
        **red,
    )
    declare(
        "mean(Tensor self, Dim[]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) "
        "-> Tensor",
        _meta_mean,
        impl=_mean,
        **red,
    )
    extremum: dict[str, Any] = dict(derivative=_d_amax, saves=("self",), save_result=True, **red)
    declare(
        "amax(Tensor self, Dim[] dim=[], bool keepdim=False) -> Tensor",
        _meta_extremum("amax"),
        doc="The maximum of `input` over the dims `dim` (all when empty); NaN propagates; "
        "the gradient is shared evenly among tied maxima.",
        **extremum,
    )
    declare(
        "amin(Tensor self, Dim[] dim=[], bool keepdim=False) -> Tensor",
        _meta_extremum("amin"),
        impl=_amin,
        **extremum,
    )
    declare(
        "argmax(Tensor self, Dim? dim=None, bool keepdim=False) -> Tensor",
        _meta_arg("argmax"),
        differentiable=False,
        doc="The index of the first maximum of `input` along `dim` (of the flattened "
        "input when None); a NaN counts as the maximum.",
        **red,
    )
    declare(
        "argmin(Tensor self, Dim? dim=None, bool keepdim=False) -> Tensor",
        _meta_arg("argmin"),
        impl=_argmin,
        differentiable=False,
        **red,
    )
    for op, pointwise in (("max", "maximum"), ("min", "minimum")):
        declare(
            f"_{op}_dim(Tensor self, Dim dim, bool keepdim=False) -> (Tensor, Tensor)",
            _meta_extremum_dim(op),
            impl=_extremum_dim(op),
            derivative=_d_extremum_dim,
            saves=(),
            save_result=True,
            out=False,
            doc=f"(values, indices) of the {op}imum along `dim` (the first one, or the first "
            f"NaN): arg{op} + gather.",
            **red,
        )
        declare(
            f"{op}(Tensor self, Tensor|Scalar? dim=None, bool keepdim=False) -> Any",
            _meta_max_min(op, pointwise),
            impl=_max_min(op, pointwise),
            family="reduction",
        )
    for op, fn in (("any", _any), ("all", _all)):
        declare(
            f"{op}(Tensor self, Dim[]? dim=None, bool keepdim=False) -> Tensor",
            _meta_logical(op),
            impl=fn,
            differentiable=False,
            **red,
        )
    declare(
        "cumsum(Tensor self, Dim dim, *, ScalarType? dtype=None) -> Tensor",
        _meta_scan,
        derivative=_d_cumsum,
        saves=(),
        inplace=True,
        doc="The running sum of `input` along `dim`, in `dtype` (int64 for integer and "
        "bool inputs by default).",
        **red,
    )
    declare(
        "cumprod(Tensor self, Dim dim, *, ScalarType? dtype=None) -> Tensor",
        _meta_scan,
        derivative=_d_cumprod,
        saves=("self",),
        save_result=True,
        inplace=True,
        doc="The running product of `input` along `dim`, in `dtype` (int64 for integer and "
        "bool inputs by default).",
        **red,
    )
    var_args = (
        "(Tensor self, Dim[]? dim=None, bool? unbiased=None, bool keepdim=False, *, "
        "Scalar? correction=None) -> Tensor"
    )
    declare("var" + var_args, _meta_var_std("var"), impl=_var, **red)
    declare(
        "std" + var_args,
        _meta_var_std("std"),
        impl=_std,
        derivative=_d_std,
        saves=("self",),
        save_result=True,
        **red,
    )
    declare(
        "logsumexp(Tensor self, Dim[] dim, bool keepdim=False) -> Tensor",
        _meta_logsumexp,
        impl=_logsumexp,
        **red,
    )
    declare(
        "norm(Tensor self, Any p='fro', Dim[]? dim=None, bool keepdim=False, *, "
        "ScalarType? dtype=None) -> Tensor",
        _meta_norm,
        impl=_norm,
        derivative=_d_norm,
        saves=("self",),
        save_result=True,
        **red,
    )


_declare_all()
