"""Reductions composed of the reduction primitives: nansum, nanmean, var_mean, std_mean,
count_nonzero, aminmax. Their gradients come from the ops they call (nansum's is zero at NaN).
"""

from __future__ import annotations

from typing import Any

from .. import dtypes as dt
from ..dispatch.arguments import to_dims
from ..tensor.tensor import Tensor
from .declare import REGISTRY, declare
from .meta_rules import reduced_shape
from .reductions import flops_reduction, reduction_dims

__all__: list[str] = ["std", "var"]


def _op(name: str):
    return REGISTRY[name].op.entry


def _meta_nansum(self, dim, keepdim, dtype):
    d = dtype or (self._dtype if self._dtype.is_floating_point else dt.int64)
    return (reduced_shape(self._shape, reduction_dims(self, dim), keepdim), d, self._device)


def _nansum(self, dim, keepdim, dtype):
    """The sum over `dim` treating NaN as zero."""
    x = _op("where")(self.isnan(), 0, self) if self._dtype.is_floating_point else self
    return x.sum(dim, keepdim, dtype=dtype)


def _meta_nanmean(self, dim, keepdim, dtype):
    if not (dtype or self._dtype).is_floating_point:
        raise RuntimeError(
            f"nanmean(): expected input to have floating point or complex dtype "
            f"but got {(dtype or self._dtype).name}"
        )
    return _meta_nansum(self, dim, keepdim, dtype)


def _nanmean(self, dim, keepdim, dtype):
    """The mean over `dim` of the values that are not NaN (NaN where there are none)."""
    count = self.isnan().logical_not().sum(dim, keepdim)
    return _nansum(self, dim, keepdim, dtype) / count


def _var_arguments(op: str, self, dim, unbiased) -> tuple:
    """(dims, unbiased) of a var_mean/std_mean call: ``var_mean(t, True)`` is PyTorch's
    ``unbiased`` overload; otherwise `dim` is None, one dim or a sequence of dims."""
    if isinstance(dim, bool):
        if unbiased is not None:
            raise TypeError(f"{op}(): got unbiased twice (positionally as {dim} and as a keyword)")
        return None, dim
    if dim is None:
        return None, unbiased
    return to_dims(op, "dim", 2, dim, len(self._shape)), unbiased


def _meta_var_mean(op: str):
    def meta(self, dim, unbiased, keepdim, correction):
        dims, unbiased = _var_arguments(f"{op}_mean", self, dim, unbiased)
        spec = REGISTRY[op].meta(self, dims, unbiased, keepdim, correction)
        return [spec, spec]

    meta.__name__ = f"meta_{op}_mean"
    return meta


def _var_mean(self, dim, unbiased, keepdim, correction):
    """(var, mean) over `dim` (the arguments of `var`; ``var_mean(t, True)`` passes
    `unbiased`)."""
    dims, unbiased = _var_arguments("var_mean", self, dim, unbiased)
    return (self.var(dims, unbiased, keepdim, correction=correction), self.mean(dims, keepdim))


def _std_mean(self, dim, unbiased, keepdim, correction):
    """(std, mean) over `dim` (the arguments of `std`; ``std_mean(t, True)`` passes
    `unbiased`)."""
    dims, unbiased = _var_arguments("std_mean", self, dim, unbiased)
    return (self.std(dims, unbiased, keepdim, correction=correction), self.mean(dims, keepdim))


def _meta_count_nonzero(self, dim):
    return (reduced_shape(self._shape, reduction_dims(self, dim), False), dt.int64, self._device)


def _count_nonzero(self, dim):
    """How many elements over `dim` are not zero."""
    return self.ne(0).sum(dim)


def _meta_aminmax(self, dim, keepdim):
    dims = reduction_dims(self, dim)
    if dim is not None and self._shape and self._shape[dim] == 0:  # PyTorch's type differs here
        raise IndexError(f"aminmax(): Expected reduction dim {dim} to have non-zero size.")
    if any(self._shape[d] == 0 for d in dims) or (dim is None and 0 in self._shape):
        raise RuntimeError(
            "aminmax(): cannot compute aminmax over an empty dimension as the "
            "operation has no identity."
        )
    if dim is None:
        shape = tuple(1 for _ in self._shape) if keepdim else ()
    else:
        shape = reduced_shape(self._shape, dims, keepdim)
    return [(shape, self._dtype, self._device)] * 2


def _aminmax(self, dim, keepdim):
    """(min, max) over `dim` (over every element when None)."""
    d = () if dim is None else dim
    return REGISTRY["aminmax"].returns(self.amin(d, keepdim), self.amax(d, keepdim))


def _declare_all() -> None:
    red: dict[str, Any] = dict(family="reduction", flops=flops_reduction)
    sum_args = (
        "(Tensor self, Dim[]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor"
    )
    declare("nansum" + sum_args, _meta_nansum, impl=_nansum, **red)
    declare("nanmean" + sum_args, _meta_nanmean, impl=_nanmean, **red)
    # dim is Any: PyTorch also takes ``var_mean(t, unbiased)``
    var_args = (
        "(Tensor self, Any dim=None, bool? unbiased=None, bool keepdim=False, *, "
        "Scalar? correction=None) -> (Tensor, Tensor)"
    )
    declare("var_mean" + var_args, _meta_var_mean("var"), impl=_var_mean, method=False, **red)
    declare("std_mean" + var_args, _meta_var_mean("std"), impl=_std_mean, method=False, **red)
    declare(
        "count_nonzero(Tensor self, Dim[]? dim=None) -> Tensor",
        _meta_count_nonzero,
        impl=_count_nonzero,
        differentiable=False,
        **red,
    )
    declare(
        "aminmax(Tensor self, *, Dim? dim=None, bool keepdim=False) -> (Tensor min, Tensor max)",
        _meta_aminmax,
        impl=_aminmax,
        **red,
    )


_declare_all()


def _with_unbiased_overload(name: str):
    """``coretorch.<name>`` and ``Tensor.<name>``: the op, plus PyTorch's older overload
    ``std(input, unbiased)`` where a bool in the place of `dim` is `unbiased`."""
    entry = REGISTRY[name].op.entry

    def fn(input, dim=None, *args, **kwargs):
        if isinstance(dim, bool):
            if args:
                raise TypeError(
                    f"{name}(): the (input, unbiased) form takes no further "
                    f"positional arguments, got {len(args)}"
                )
            return entry(input, unbiased=dim, **kwargs)
        return entry(input, dim, *args, **kwargs)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = entry.__doc__
    return fn


std, var = _with_unbiased_overload("std"), _with_unbiased_overload("var")
# before bind_methods, which keeps what a class defines
Tensor.std, Tensor.var = std, var  # type: ignore[method-assign]
