"""Special functions the distributions use: `lgamma`, `digamma`, `polygamma` and the regularized
incomplete gamma function `gammainc` are coretorch's operators (`coretorch.lgamma`, ...,
`coretorch.special.gammainc`), checked here for floating-point input; gamma and beta sampling
with implicit reparameterization gradients draws through scipy's inverse cdfs on the host.

scipy is imported on first use, not with coretorch.
"""

from __future__ import annotations

import numpy as np

from .. import dtypes as _dt
from ..autograd.function import Function
from ..ops import aten
from ..ops.declare import REGISTRY
from ..ops.factories_public import tensor as _tensor
from ..tensor.tensor import Tensor

__all__ = ["lgamma", "digamma", "polygamma", "gammainc", "standard_gamma", "standard_beta"]


def _scipy_special():
    import scipy.special

    return scipy.special


def _host(t: Tensor, name: str) -> np.ndarray:
    """`t`'s values as a float64 numpy array (a copy on the host)."""
    if t.device.type == "meta":
        raise NotImplementedError(
            f"{name}(): computed with scipy on the host, which needs "
            f"data; a tensor on the meta device holds none"
        )
    return np.asarray(t.detach().cpu().numpy(), dtype=np.float64)


def _like(values: np.ndarray, like: Tensor) -> Tensor:
    """`values` as a tensor with `like`'s dtype and device."""
    # np.ascontiguousarray would turn a 0-d array into a 1-d one
    out = _tensor(np.array(values, dtype=np.float64, order="C"), dtype=like.dtype)
    return out if like.device.type == "cpu" else out.to(like.device)


def _check_float(name: str, x: Tensor) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): expected a Tensor, got {type(x).__name__}")
    if not x.dtype.is_floating_point:
        raise TypeError(f"{name}(): expected a floating-point tensor, got {x.dtype}")


def lgamma(x: Tensor) -> Tensor:
    """log |Γ(x)| elementwise (`coretorch.lgamma`); its derivative is `digamma`."""
    _check_float("lgamma", x)
    return REGISTRY["lgamma"].op.entry(x)


def digamma(x: Tensor) -> Tensor:
    """ψ(x) = d/dx log Γ(x) elementwise (`coretorch.digamma`); -inf at 0, nan at negative
    integers, as PyTorch."""
    _check_float("digamma", x)
    return REGISTRY["digamma"].op.entry(x)


def polygamma(n: int, x: Tensor) -> Tensor:
    """The n-th derivative of `digamma` elementwise (`coretorch.polygamma`)."""
    if not isinstance(n, int) or n < 0:
        raise ValueError(f"polygamma(): expected a non-negative integer order n, got {n!r}")
    _check_float("polygamma", x)
    return REGISTRY["polygamma"].op.entry(n, x)


def gammainc(a: Tensor, x: Tensor) -> Tensor:
    """The regularized lower incomplete gamma function P(a, x) (`coretorch.special.gammainc`),
    differentiable in `x`."""
    _check_float("gammainc", x)
    return REGISTRY["special_gammainc"].op.entry(a, x)


# ---- sampling with implicit reparameterization ----------------------------------------------
#
# A sample x = F⁻¹(u; θ) of a distribution with cdf F has dx/dθ = -(∂F/∂θ)(x; θ) / f(x; θ),
# f the density (Figurnov et al., "Implicit Reparameterization Gradients", 2018): the sample
# moves with θ so that its quantile u stays put. The samples are drawn by inverting the cdf
# (scipy's gammaincinv / betaincinv of uniforms from coretorch's generator), and ∂F/∂θ is a
# central difference of scipy's gammainc / betainc with a relative step of 1e-5 (its error is
# below 1e-9 of the derivative wherever the density is representable).

_REL_STEP = 1e-5


def _central_difference(fn, theta: np.ndarray) -> np.ndarray:
    h = _REL_STEP * np.maximum(theta, 1e-3)
    return (fn(theta + h) - fn(theta - h)) / (2 * h)


def _quantile_gradient(dcdf: np.ndarray, log_density: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        g = -dcdf * np.exp(-log_density)
    return np.where(np.isfinite(g), g, 0.0)


class _HostDerivative(Function):
    """Passes on a derivative computed on the host (its first argument) and records that it
    depends on `inputs`; differentiating it again raises, as PyTorch's
    ``_standard_gamma_grad`` and ``_dirichlet_grad`` do."""

    @staticmethod
    def forward(ctx, values, name, *inputs):
        ctx.fn_name = name
        return values

    @staticmethod
    def backward(ctx, grad):
        raise NotImplementedError(
            f"{ctx.fn_name}: the derivative of the implicit "
            f"reparameterization gradient (a second derivative of the "
            f"sample) is not implemented"
        )


def _host_derivative(values: np.ndarray, like: Tensor, name: str, *inputs: Tensor) -> Tensor:
    return _HostDerivative.apply(_like(values, like), name, *inputs)


def _uniforms(like: Tensor) -> np.ndarray:
    return _host(aten.rand(like.shape, dtype=_dt.float64, device=like.device), "sample")


class _StandardGamma(Function):
    @staticmethod
    def forward(ctx, concentration):
        a = _host(concentration, "Gamma.rsample")
        x = _scipy_special().gammaincinv(a, _uniforms(concentration))
        x = np.maximum(x, _dt.finfo(concentration.dtype).tiny)
        ctx.values = (a, x)
        ctx.save_for_backward(concentration)
        return _like(x, concentration)

    @staticmethod
    def backward(ctx, grad):
        special = _scipy_special()
        a, x = ctx.values
        dcdf = _central_difference(lambda t: special.gammainc(t, x), a)
        log_density = (a - 1) * np.log(x) - x - special.gammaln(a)
        return grad * _host_derivative(
            _quantile_gradient(dcdf, log_density), grad, "standard_gamma", *ctx.saved_tensors
        )


class _StandardBeta(Function):
    @staticmethod
    def forward(ctx, concentration1, concentration0):
        a = _host(concentration1, "Beta.rsample")
        b = _host(concentration0, "Beta.rsample")
        x = _scipy_special().betaincinv(a, b, _uniforms(concentration1))
        finfo = _dt.finfo(concentration1.dtype)
        x = np.clip(x, finfo.tiny, 1 - finfo.eps)
        ctx.values = (a, b, x)
        ctx.save_for_backward(concentration1, concentration0)
        return _like(x, concentration1)

    @staticmethod
    def backward(ctx, grad):
        special = _scipy_special()
        a, b, x = ctx.values
        log_density = (a - 1) * np.log(x) + (b - 1) * np.log1p(-x) - special.betaln(a, b)
        da = _central_difference(lambda t: special.betainc(t, b, x), a)
        db = _central_difference(lambda t: special.betainc(a, t, x), b)
        return tuple(
            grad
            * _host_derivative(
                _quantile_gradient(d, log_density), grad, "standard_beta", *ctx.saved_tensors
            )
            for d in (da, db)
        )


def standard_gamma(concentration: Tensor) -> Tensor:
    """Samples of Gamma(concentration, rate=1), one per element, differentiable in
    `concentration` (implicit reparameterization); the smallest value is finfo.tiny."""
    _check_float("standard_gamma", concentration)
    return _StandardGamma.apply(concentration)


def standard_beta(concentration1: Tensor, concentration0: Tensor) -> Tensor:
    """Samples of Beta(concentration1, concentration0) (same shapes), one per element,
    differentiable in both (implicit reparameterization); kept in [tiny, 1 - eps]."""
    _check_float("standard_beta", concentration1)
    return _StandardBeta.apply(concentration1, concentration0)
