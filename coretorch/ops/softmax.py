"""softmax and log_softmax along one dim: composites (amax, sub, exp, sum, div/log) with explicit
derivatives that read only the result. Backends register fused kernels for them where it pays
(the cpu backend's numba loops, the cuda backend's exp-shift kernel); they never have to.

Half precision computes in float32, as PyTorch's kernels do; ``dtype=`` casts the input first.
"""

from __future__ import annotations

from typing import Any

from .. import dtypes as dt
from .declare import declare

__all__ = ["flops_softmax"]


def flops_softmax(result, self, *args) -> int:
    """About five per element: max, subtract, exp, sum, divide (or log)."""
    return 5 * self.numel()


def _meta_softmax(op: str):
    def meta(self, dim, dtype):
        d = dtype or self._dtype
        if not d.is_floating_point:
            raise NotImplementedError(
                f"{op}(): not implemented for {d.name} tensors; expected a "
                f"floating point tensor (or pass dtype=)"
            )
        return (self._shape, d, self._device)

    meta.__name__ = f"meta_{op}"
    return meta


def _shifted(self, dim, dtype):
    """(x - max(x, dim), the output dtype) with x in its compute dtype; None for an empty x."""
    out_dtype = dtype or self._dtype
    compute = dt.opmath_dtype(out_dtype)
    x = self if self._dtype is compute else self.to(compute)
    if x.numel() == 0:
        return None, out_dtype
    return x - x.amax(dim, keepdim=True), out_dtype


def _softmax(self, dim, dtype):
    """exp(x) / sum(exp(x)) along `dim`, shifted by the maximum for stability."""
    s, out_dtype = _shifted(self, dim, dtype)
    if s is None:
        return self.new_empty(self._shape, dtype=out_dtype)
    e = s.exp()
    return e.div(e.sum(dim, keepdim=True)).to(out_dtype)


def _log_softmax(self, dim, dtype):
    """x - log(sum(exp(x))) along `dim`, shifted by the maximum for stability."""
    s, out_dtype = _shifted(self, dim, dtype)
    if s is None:
        return self.new_empty(self._shape, dtype=out_dtype)
    return s.sub(s.exp().sum(dim, keepdim=True).log()).to(out_dtype)


def _as_input_dtype(g, self):
    return g if g._dtype is self._dtype else g.to(self._dtype)


def _d_softmax(ctx, grad):
    y = ctx.result
    return (_as_input_dtype(y * (grad - (grad * y).sum(ctx.dim, keepdim=True)), ctx.self),)


def _d_log_softmax(ctx, grad):
    y = ctx.result
    return (_as_input_dtype(grad - y.exp() * grad.sum(ctx.dim, keepdim=True), ctx.self),)


def _declare_all() -> None:
    common: dict[str, Any] = dict(
        family="reduction", saves=(), save_result=True, flops=flops_softmax
    )
    declare(
        "softmax(Tensor self, Dim dim, ScalarType? dtype=None) -> Tensor",
        _meta_softmax("softmax"),
        impl=_softmax,
        derivative=_d_softmax,
        **common,
    )
    declare(
        "log_softmax(Tensor self, Dim dim, ScalarType? dtype=None) -> Tensor",
        _meta_softmax("log_softmax"),
        impl=_log_softmax,
        derivative=_d_log_softmax,
        **common,
    )


_declare_all()
