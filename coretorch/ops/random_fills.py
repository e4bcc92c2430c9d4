"""In-place samples of further distributions, each a transform of ``uniform_`` or ``normal_``
(so every backend has them): ``exponential_``, ``cauchy_``, ``log_normal_``, ``geometric_``
(PyTorch's Tensor methods)."""

from __future__ import annotations

import math
from typing import Any

from .declare import EXPLICIT, declare


def _float_spec(name: str, self):
    if not self._dtype.is_floating_point:
        raise NotImplementedError(
            f"{name}(): not implemented for '{self._dtype.name}'; expected a floating point tensor"
        )
    return (self._shape, self._dtype, self._device)


def _meta_exponential_(self, lambd, generator):
    if not lambd > 0:
        raise RuntimeError(f"exponential_(): expects lambda > 0.0, but found lambda={lambd}")
    return _float_spec("exponential_", self)


def _exponential_(self, lambd, generator):
    """-log(1 - u) / lambda for u uniform on [0, 1): positive, mean 1/lambda."""
    return self.uniform_(0.0, 1.0, generator=generator).neg_().log1p_().div_(-lambd)


def _meta_cauchy_(self, median, sigma, generator):
    if not sigma > 0:
        raise RuntimeError(f"cauchy_(): expects sigma > 0.0, but found sigma={sigma}")
    return _float_spec("cauchy_", self)


def _cauchy_(self, median, sigma, generator):
    """median + sigma * tan(pi * (u - 1/2))."""
    return (
        self.uniform_(-0.5, 0.5, generator=generator).mul_(math.pi).tan_().mul_(sigma).add_(median)
    )


def _meta_log_normal_(self, mean, std, generator):
    if not std > 0:
        raise RuntimeError(f"log_normal_(): expects std > 0.0, but found std={std}")
    return _float_spec("log_normal_", self)


def _log_normal_(self, mean, std, generator):
    """exp of N(mean, std²) samples."""
    return self.normal_(mean, std, generator=generator).exp_()


def _meta_geometric_(self, p, generator):
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_(): expects p to be in (0, 1), but got p={p}")
    return (self._shape, self._dtype, self._device)


def _geometric_(self, p, generator):
    """The number of Bernoulli(p) trials up to the first success: ceil(log(1 - u) / log(1 - p))
    (at least 1), in self's dtype (integer dtypes too)."""
    from .. import float64

    u = self.new_empty(self._shape, dtype=float64).uniform_(0.0, 1.0, generator=generator)
    return self.copy_(u.neg_().log1p_().div_(math.log1p(-p)).ceil_().clamp_(min=1))


def _declare_all() -> None:
    rnd: dict[str, Any] = dict(kind=EXPLICIT, family="random", differentiable=False)
    g = "*, Generator? generator=None) -> Tensor(a!)"
    declare(
        f"exponential_(Tensor(a!) self, float lambd=1.0, {g}",
        _meta_exponential_,
        impl=_exponential_,
        doc="Fill `self` with samples of the exponential distribution of rate `lambd`.",
        **rnd,
    )
    declare(
        f"cauchy_(Tensor(a!) self, float median=0.0, float sigma=1.0, {g}",
        _meta_cauchy_,
        impl=_cauchy_,
        doc="Fill `self` with samples of the Cauchy distribution centred at "
        "`median` with scale `sigma`.",
        **rnd,
    )
    declare(
        f"log_normal_(Tensor(a!) self, float mean=1.0, float std=2.0, {g}",
        _meta_log_normal_,
        impl=_log_normal_,
        doc="Fill `self` with exp(N(mean, std²)) samples (a log-normal distribution).",
        **rnd,
    )
    declare(
        f"geometric_(Tensor(a!) self, float p, {g}",
        _meta_geometric_,
        impl=_geometric_,
        doc="Fill `self` with the number of Bernoulli(p) trials up to the first success "
        "(1, 2, ...).",
        **rnd,
    )


_declare_all()
