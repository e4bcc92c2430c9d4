"""Reductions: sum, prod, mean, amax/amin, max/min, argmax/argmin, all/any, cumsum/cumprod,
var/std, logsumexp, norm.

Primitives get a meta rule (reduced shape via `dims_arg`/`reduced_shape`, result dtype); the
composites (mean, max, min, var, std, logsumexp, norm) are written with coretorch ops. FLOPs of a
reduction: one per input element.
"""
from __future__ import annotations

import math

from .. import dtypes as dt
from ..dispatch.keys import AUTOGRAD_BIT
from ..dispatch.tls import local_keys
from ..tensor.impl import TensorImpl, shape_numel
from .declare import IMPLICIT, REGISTRY, declare, namedtuple_return
from .derivative_utils import saves
from .meta_rules import dims_arg, reduced_shape, wrap_dim
from .meta_rules import need_tensor as _need_tensor

_T = TensorImpl

__all__ = ["flops_reduction", "reduction_dims", "restore_reduced"]


def flops_reduction(result, self, *args, **kwargs) -> int:
    """One FLOP per input element."""
    return self.numel()


def _check_dtype_arg(op: str, dtype) -> None:
    if dtype is not None and not isinstance(dtype, dt.dtype):
        raise TypeError(f"{op}(): argument 'dtype' must be coretorch.dtype, not "
                        f"{type(dtype).__name__}")


def _int_to_long(d):
    """sum/prod/cumsum of bool or integer tensors accumulate in int64, as in PyTorch."""
    return d if d.is_floating_point else dt.int64


def reduction_dims(op: str, self, dim) -> tuple:
    """The sorted non-negative dims a reduction over `dim` (None, int, sequence) covers."""
    if dim is not None and not isinstance(dim, (int, tuple, list)):
        raise TypeError(f"{op}(): argument 'dim' must be int or tuple of ints, not "
                        f"{type(dim).__name__}")
    return dims_arg(op, dim, len(self._shape))


def _reduced_count(self, dims: tuple) -> int:
    """How many elements each output of a reduction over `dims` combines."""
    return shape_numel(self._shape[d] for d in dims) if self._shape else 1


def _check_nonempty(op: str, self, dims: tuple) -> None:
    """Reductions without an identity (max, argmax, ...) need non-empty reduced dims."""
    for d in dims:
        if self._shape and self._shape[d] == 0:
            raise IndexError(f"{op}(): Expected reduction dim {d} to have non-zero size.")


def restore_reduced(grad, self, dim, keepdim: bool):
    """`grad` of a reduction over `dim` with its reduced dims put back as size 1 (so it
    broadcasts against `self`)."""
    if keepdim or not self._shape:
        return grad
    for d in dims_arg("restore_reduced", dim, len(self._shape)):
        grad = grad.unsqueeze(d)
    return grad


def _grad_to(grad, self):
    """Gradients flow back in the input's dtype (when a `dtype=` argument changed it)."""
    return grad if grad._dtype is self._dtype else grad.to(self._dtype)


# ---- sum, prod, mean ----------------------------------------------------------------------------

def _meta_sum(self, dim=None, keepdim=False, *, dtype=None):
    _need_tensor("sum", self)
    _check_dtype_arg("sum", dtype)
    dims = reduction_dims("sum", self, dim)
    return (reduced_shape(self._shape, dims, keepdim), dtype or _int_to_long(self._dtype),
            self._device)


def _sum_args(self, dim=None, keepdim=False, *, dtype=None):
    return self, dim, keepdim


@saves()
def _d_sum(ctx, grad):
    self, dim, keepdim = _sum_args(*ctx.args, **ctx.kwargs)
    return (_grad_to(restore_reduced(grad, self, dim, keepdim), self).expand(self._shape),)


def _meta_prod(self, dim=None, keepdim=False, *, dtype=None):
    _need_tensor("prod", self)
    _check_dtype_arg("prod", dtype)
    if dim is not None and (not isinstance(dim, int) or isinstance(dim, bool)):
        raise TypeError(f"prod(): argument 'dim' must be int or None, not {type(dim).__name__}")
    dims = reduction_dims("prod", self, dim)
    return (reduced_shape(self._shape, dims, keepdim), dtype or _int_to_long(self._dtype),
            self._device)


def _prod_args(self, dim=None, keepdim=False, *, dtype=None):
    return self, dim, keepdim


def _prod_grad_1d(x, g, d):
    """d prod(x along d) / dx * g, with zeros handled: the product of all other elements."""
    # prod of the elements before and after each position (exclusive cumulative products)
    ones = REGISTRY["ones_like"].op(x.narrow(d, 0, 1))
    before = REGISTRY["cat"].op([ones, x.narrow(d, 0, x._shape[d] - 1)], d).cumprod(d)
    after = REGISTRY["cat"].op([x.narrow(d, 1, x._shape[d] - 1), ones], d).flip([d]).cumprod(d)
    return g * before * after.flip([d])


def _d_prod(ctx, grad):
    self, dim, keepdim = _prod_args(*ctx.args, **ctx.kwargs)
    grad = _grad_to(restore_reduced(grad, self, dim, keepdim), self)
    if not self._shape:
        return (grad,)
    if dim is None:
        flat = self.reshape(-1)
        if flat._shape[0] == 0:
            return (REGISTRY["zeros_like"].op(self),)
        return (_prod_grad_1d(flat, grad.reshape(1), 0).reshape(self._shape),)
    d = wrap_dim("prod", dim, len(self._shape))
    if self._shape[d] == 0:
        return (REGISTRY["zeros_like"].op(self),)
    return (_prod_grad_1d(self, grad, d),)


def _mean(self, dim=None, keepdim=False, *, dtype=None):
    """Arithmetic mean over `dim` (all dims when None); float dtypes only (or give `dtype`)."""
    _need_tensor("mean", self)
    _check_dtype_arg("mean", dtype)
    if dtype is not None and not dtype.is_floating_point:
        raise RuntimeError(f"mean(): could not infer output dtype. Optional dtype must be either "
                           f"a floating point or complex dtype. Got: {dtype.name}")
    if dtype is None and not self._dtype.is_floating_point:
        raise RuntimeError(f"mean(): could not infer output dtype. Input dtype must be either a "
                           f"floating point or complex dtype. Got: {self._dtype.name}")
    dims = reduction_dims("mean", self, dim)
    count = _reduced_count(self, dims)
    return self.sum(dim, keepdim, dtype=dtype).div(count if count else float("nan"))


# ---- amax, amin, max, min, argmax, argmin -------------------------------------------------------

def _meta_minmax(op: str):
    def meta(self, dim=(), keepdim=False):
        _need_tensor(op, self)
        dims = reduction_dims(op, self, dim)
        _check_nonempty(op, self, dims)
        return (reduced_shape(self._shape, dims, keepdim), self._dtype, self._device)
    meta.__name__ = f"meta_{op}"
    return meta


def _minmax_args(self, dim=(), keepdim=False):
    return self, dim, keepdim


@saves(0)
def _d_amax(ctx, grad):
    """The gradient goes evenly to every element equal to the extreme value (as PyTorch)."""
    self, dim, keepdim = _minmax_args(*ctx.args, **ctx.kwargs)
    dim = None if dim == () or dim == [] else dim
    value = restore_reduced(ctx.result, self, dim, keepdim)
    mask = self.eq(value)
    count = mask.sum(dim, keepdim=True) if self._shape else mask.to(self._dtype)
    return (restore_reduced(grad, self, dim, keepdim).div(count).mul(mask),)


def _meta_minmax_dim(op: str):
    def meta(self, dim, keepdim=False):
        _need_tensor(op, self)
        d = wrap_dim(op, dim, len(self._shape))
        _check_nonempty(op, self, (d,))
        shape = reduced_shape(self._shape, (d,) if self._shape else (), keepdim)
        return [(shape, self._dtype, self._device), (shape, dt.int64, self._device)]
    meta.__name__ = f"meta_{op}"
    return meta


def _dim_args(self, dim, keepdim=False):
    return self, dim, keepdim


@saves()
def _d_minmax_dim(ctx, grad, grad_indices=None):
    """The gradient of `values` goes to the selected element of each slice."""
    self, dim, keepdim = _dim_args(*ctx.args, **ctx.kwargs)
    if not self._shape:
        return (grad,)
    d = wrap_dim("max", dim, len(self._shape))
    indices = ctx.result[1]
    if not keepdim:
        grad, indices = grad.unsqueeze(d), indices.unsqueeze(d)
    return (REGISTRY["zeros_like"].op(self, dtype=grad._dtype).scatter(d, indices, grad),)


_max_ret = namedtuple_return("max", "values indices")
_min_ret = namedtuple_return("min", "values indices")


def _minmax_composite(op: str, reduce_all: str, by_dim: str, pointwise: str, ret: type):
    def fn(self, dim=None, keepdim=False):
        _need_tensor(op, self)
        if isinstance(dim, _T):
            return REGISTRY[pointwise].op(self, dim)
        if dim is None:
            if keepdim:
                raise TypeError(f"{op}(): keepdim=True needs a dim; got dim=None")
            if shape_numel(self._shape) == 0:
                raise RuntimeError(f"{op}(): Expected reduction dim to be specified for "
                                   f"input.numel() == 0. Specify the reduction dim with the "
                                   f"'dim' argument.")
            return REGISTRY[reduce_all].op(self)
        return ret(*REGISTRY[by_dim].op(self, dim, keepdim))
    fn.__name__ = op
    fn.__doc__ = (f"``{op}(t)``: the {op}imum of all elements (0-d); ``{op}(t, dim, keepdim)``: "
                  f"namedtuple (values, indices) along `dim`; ``{op}(t, other)``: the elementwise "
                  f"{pointwise}.")
    return fn


def _meta_arg(op: str):
    def meta(self, dim=None, keepdim=False):
        _need_tensor(op, self)
        if dim is None:
            if shape_numel(self._shape) == 0:
                raise RuntimeError(f"{op}(): Expected reduction dim to be specified for "
                                   f"input.numel() == 0.")
            shape = tuple(1 for _ in self._shape) if keepdim else ()
            return (shape, dt.int64, self._device)
        d = wrap_dim(op, dim, len(self._shape))
        _check_nonempty(op, self, (d,))
        shape = reduced_shape(self._shape, (d,) if self._shape else (), keepdim)
        return (shape, dt.int64, self._device)
    meta.__name__ = f"meta_{op}"
    return meta


# ---- all, any -----------------------------------------------------------------------------------

def _meta_logical(op: str):
    def meta(self, dim=None, keepdim=False):
        _need_tensor(op, self)
        # an empty dim list reduces nothing here (unlike sum, where it means every dim)
        empty = isinstance(dim, (tuple, list)) and not dim
        dims = () if empty else reduction_dims(op, self, dim)
        # PyTorch keeps uint8 for uint8 inputs (a legacy of byte masks); every other dtype -> bool
        d = dt.uint8 if self._dtype is dt.uint8 else dt.bool
        return (reduced_shape(self._shape, dims, keepdim), d, self._device)
    meta.__name__ = f"meta_{op}"
    return meta


# ---- cumsum, cumprod ----------------------------------------------------------------------------

def _meta_cum(op: str):
    def meta(self, dim, *, dtype=None):
        _need_tensor(op, self)
        _check_dtype_arg(op, dtype)
        wrap_dim(op, dim, len(self._shape))
        return (self._shape, dtype or _int_to_long(self._dtype), self._device)
    meta.__name__ = f"meta_{op}"
    return meta


def _cum_args(self, dim, *, dtype=None):
    return self, dim


def _reverse_cumsum(x, d: int):
    return x.flip([d]).cumsum(d).flip([d])


@saves()
def _d_cumsum(ctx, grad):
    self, dim = _cum_args(*ctx.args, **ctx.kwargs)
    if not self._shape:
        return (_grad_to(grad, self),)
    return (_grad_to(_reverse_cumsum(grad, wrap_dim("cumsum", dim, len(self._shape))), self),)


def _cumprod_grad_division_free(x, g, d: int):
    """grad_k = prod_{i<k} x_i * sum_{j>=k} g_j prod_{k<i<=j} x_i through an n x n matrix of
    partial products: O(n^2) memory, but no division, so it is differentiable again at zeros."""
    n = x._shape[d]
    xm, gm = x.movedim(d, -1), g.movedim(d, -1)
    pos = REGISTRY["arange"].op(n, device=x._device)
    after_k = pos.unsqueeze(0).gt(pos.unsqueeze(1))                     # [k, i]: i > k
    parts = REGISTRY["where"].op(after_k, xm.unsqueeze(-2), 1).cumprod(-1).triu()
    tail = (parts * gm.unsqueeze(-2)).sum(-1)                            # sum over j
    ones = REGISTRY["ones_like"].op(xm.narrow(-1, 0, 1))
    before = REGISTRY["cat"].op([ones, xm.narrow(-1, 0, n - 1)], -1).cumprod(-1)
    return (before * tail).movedim(-1, d)


def _d_cumprod(ctx, grad):
    """grad_k = sum_{j>=k} g_j prod_{i<=j, i!=k} x_i. First order, in O(n) with zeros handled:
    positions before the first zero use the division formula, the first zero uses the cumulative
    product with that zero replaced by one, positions after it get zero. When the gradient is
    itself differentiated (grad mode on) the division-free form is used, as in PyTorch."""
    self, dim = _cum_args(*ctx.args, **ctx.kwargs)
    if not self._shape:
        return (_grad_to(grad, self),)
    d = wrap_dim("cumprod", dim, len(self._shape))
    x, g = self, _grad_to(grad, self)
    if not local_keys.exclude & AUTOGRAD_BIT and x._shape[d] > 0:
        return (_cumprod_grad_division_free(x, g, d),)
    out = _grad_to(ctx.result, self)
    is_zero = x.eq(0)
    zeros_so_far = is_zero.cumsum(d)
    before = zeros_so_far.eq(0)
    first_zero = is_zero.logical_and(zeros_so_far.eq(1))
    safe_x = REGISTRY["where"].op(before, x, 1)
    grad_before = _reverse_cumsum(g * out, d).div(safe_x)
    cp = REGISTRY["where"].op(first_zero, 1, x).cumprod(d)
    grad_first = _reverse_cumsum(g * cp, d)
    res = REGISTRY["where"].op(first_zero, grad_first, 0)
    return (REGISTRY["where"].op(before, grad_before, res),)


# ---- var, std, logsumexp, norm ------------------------------------------------------------------

def _var_parse(op: str, self, dim, unbiased, correction):
    if isinstance(dim, bool):  # var(t, unbiased)
        dim, unbiased = None, dim
    if unbiased is not None and correction is not None:
        raise TypeError(f"{op}(): give either 'unbiased' or 'correction', not both")
    if correction is None:
        correction = 1 if unbiased is None or unbiased else 0
    if not self._dtype.is_floating_point:
        raise RuntimeError(f"{op}(): std and var only support floating point and complex dtypes, "
                           f"got {self._dtype.name}")
    return dim, correction


def _var(self, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """Variance over `dim` with Bessel's `correction` (``unbiased=False`` means correction=0)."""
    _need_tensor("var", self)
    dim, correction = _var_parse("var", self, dim, unbiased, correction)
    dims = reduction_dims("var", self, dim)
    n = _reduced_count(self, dims)
    centered = self - self.mean(dim, keepdim=True)
    denom = max(n - correction, 0)
    sumsq = (centered * centered).sum(dim, keepdim)
    # PyTorch divides by max(0, n - correction): x / 0 is inf, 0 / 0 is nan (no division here)
    return sumsq.div(denom) if denom else sumsq.mul(math.inf)


def _std(self, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """Standard deviation: the square root of `var` (same arguments)."""
    _need_tensor("std", self)
    return _var(self, dim, unbiased, keepdim, correction=correction).sqrt()


def _logsumexp(self, dim, keepdim=False):
    """log(sum(exp(self), dim)), computed stably by shifting by the maximum."""
    _need_tensor("logsumexp", self)
    x = self if self._dtype.is_floating_point else self.to(dt.get_default_dtype())
    if shape_numel(x._shape) == 0:
        return x.exp().sum(dim, keepdim).log()
    m = x.detach().amax(dim, keepdim=True)
    m = REGISTRY["where"].op(m.isinf(), 0.0, m)
    s = (x - m).exp().sum(dim, keepdim).log()
    dims = None if dim == () or dim == [] else dim
    return s + (m if keepdim else m.squeeze(reduction_dims("logsumexp", x, dims)))


def _norm(self, p=2, dim=None, keepdim=False):
    """Vector p-norm over `dim` (all elements when None): p = 2/'fro', 1, inf, -inf, 0, or any
    other number."""
    _need_tensor("norm", self)
    if not self._dtype.is_floating_point:
        raise RuntimeError(f"norm(): Expected a floating point or complex tensor as input. Got "
                           f"{self._dtype.name}")
    if p == "fro" or p is None:
        p = 2
    if isinstance(p, str):
        raise NotImplementedError(f"norm(): p='{p}' (matrix norms) is not supported; give a "
                                  f"number or 'fro'")
    a = self.abs()
    if p == math.inf:
        return a.amax(() if dim is None else dim, keepdim)
    if p == -math.inf:
        return a.amin(() if dim is None else dim, keepdim)
    if p == 0:
        return self.ne(0).to(self._dtype).sum(dim, keepdim)
    if p == 1:
        return a.sum(dim, keepdim)
    if p == 2:
        return (self * self).sum(dim, keepdim).sqrt()
    return a.pow(p).sum(dim, keepdim).pow(1.0 / p)


def _register_composite(name: str, fn, **kw) -> None:
    declare(name, kind=IMPLICIT, impl=fn, family="reduction", out=False, **kw)


def _declare_all() -> None:
    red = dict(family="reduction", flops=flops_reduction)
    declare("sum", _meta_sum, derivative=_d_sum, **red)
    declare("prod", _meta_prod, derivative=_d_prod, **red)
    _register_composite("mean", _mean)
    for op in ("amax", "amin"):
        declare(op, _meta_minmax(op), derivative=_d_amax, save_result=True, **red)
    declare("_max_dim", _meta_minmax_dim("max"), derivative=_d_minmax_dim, save_result=True,
            returns=_max_ret, **red)
    declare("_min_dim", _meta_minmax_dim("min"), derivative=_d_minmax_dim, save_result=True,
            returns=_min_ret, **red)
    _register_composite("max", _minmax_composite("max", "amax", "_max_dim", "maximum", _max_ret))
    _register_composite("min", _minmax_composite("min", "amin", "_min_dim", "minimum", _min_ret))
    for op in ("argmax", "argmin"):
        declare(op, _meta_arg(op), differentiable=False, **red)
    for op in ("all", "any"):
        declare(op, _meta_logical(op), differentiable=False, **red)
    declare("cumsum", _meta_cum("cumsum"), derivative=_d_cumsum, inplace=True, **red)
    declare("cumprod", _meta_cum("cumprod"), derivative=_d_cumprod, save_result=True,
            inplace=True, **red)
    _register_composite("var", _var)
    _register_composite("std", _std)
    _register_composite("logsumexp", _logsumexp)
    _register_composite("norm", _norm)


_declare_all()
