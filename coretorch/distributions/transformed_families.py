"""Distributions defined as transforms of simpler ones (mirror ``torch.distributions``):
HalfNormal, HalfCauchy, Pareto, Weibull, InverseGamma and Kumaraswamy, with their closed-form
moments and entropies."""

from __future__ import annotations

import math
from typing import Callable

from ..ops import aten
from ..tensor.tensor import Tensor
from . import constraints
from ._special import digamma, lgamma
from .distribution import Distribution
from .gamma import Gamma
from .location_scale import Cauchy, Exponential
from .normal import Normal, Uniform
from .transformed import TransformedDistribution
from .transforms import AbsTransform, AffineTransform, ExpTransform, PowerTransform
from .utils import broadcast_all, forwarded_property

__all__ = ["HalfNormal", "HalfCauchy", "Pareto", "Weibull", "InverseGamma", "Kumaraswamy"]

_EULER = 0.57721566490153286060


class _Folded(TransformedDistribution):
    """|X| for X symmetric about 0 with `scale` (the half-normal and half-Cauchy)."""

    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _base: Callable[..., Distribution]  # the symmetric distribution folded (per subclass)

    def __init__(self, scale: Tensor | float, validate_args: bool | None = None) -> None:
        base = type(self)._base(0, scale, validate_args=False)
        super().__init__(base, AbsTransform(), validate_args=validate_args)

    _expanded_attrs = ()

    scale = forwarded_property("base_dist", "scale")

    @property
    def mode(self) -> Tensor:
        return aten.zeros_like(self.scale)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        log_prob = self.base_dist.log_prob(value) + math.log(2)
        return aten.where(value >= 0, log_prob, -math.inf)

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob: Tensor) -> Tensor:
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self) -> Tensor:
        return self.base_dist.entropy() - math.log(2)


class HalfNormal(_Folded):
    """|X| for X ~ Normal(0, `scale`)."""

    _base = Normal

    @property
    def mean(self) -> Tensor:
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def variance(self) -> Tensor:
        return self.scale.pow(2) * (1 - 2 / math.pi)


class HalfCauchy(_Folded):
    """|X| for X ~ Cauchy(0, `scale`); mean and variance are infinite."""

    _base = Cauchy

    @property
    def mean(self) -> Tensor:
        return aten.full_like(self.scale, math.inf)

    @property
    def variance(self) -> Tensor:
        return aten.full_like(self.scale, math.inf)


class Pareto(TransformedDistribution):
    """The Pareto (type I) distribution with `scale` x_m and shape `alpha`: density
    α x_m^α / x^(α+1) on x >= x_m."""

    arg_constraints = {"alpha": constraints.positive, "scale": constraints.positive}

    def __init__(
        self, scale: Tensor | float, alpha: Tensor | float, validate_args: bool | None = None
    ) -> None:
        self.scale, self.alpha = broadcast_all(scale, alpha)
        base = Exponential(self.alpha, validate_args=validate_args)
        transforms = [ExpTransform(), AffineTransform(loc=0, scale=self.scale)]
        super().__init__(base, transforms, validate_args=validate_args)

    _expanded_attrs = ("scale", "alpha")

    @property
    def mean(self) -> Tensor:
        a = self.alpha.clamp(min=1)
        return a * self.scale / (a - 1)

    @property
    def mode(self) -> Tensor:
        return self.scale

    @property
    def variance(self) -> Tensor:
        a = self.alpha.clamp(min=2)
        return self.scale.pow(2) * a / ((a - 1).pow(2) * (a - 2))

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        return constraints.greater_than_eq(self.scale)

    def entropy(self) -> Tensor:
        return (self.scale / self.alpha).log() + (1 + self.alpha.reciprocal())


class Weibull(TransformedDistribution):
    """The Weibull distribution with `scale` λ and `concentration` k: cdf 1 - exp(-(x/λ)^k)."""

    arg_constraints = {"scale": constraints.positive, "concentration": constraints.positive}
    support = constraints.positive

    def __init__(
        self,
        scale: Tensor | float,
        concentration: Tensor | float,
        validate_args: bool | None = None,
    ) -> None:
        self.scale, self.concentration = broadcast_all(scale, concentration)
        self.concentration_reciprocal = self.concentration.reciprocal()
        base = Exponential(aten.ones_like(self.scale), validate_args=validate_args)
        transforms = [
            PowerTransform(exponent=self.concentration_reciprocal),
            AffineTransform(loc=0, scale=self.scale),
        ]
        super().__init__(base, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Weibull, _instance)
        shape = tuple(batch_shape)
        new.scale = self.scale.expand(shape)
        new.concentration = self.concentration.expand(shape)
        new.concentration_reciprocal = new.concentration.reciprocal()
        base = self.base_dist.expand(shape)
        transforms = [
            PowerTransform(exponent=new.concentration_reciprocal),
            AffineTransform(loc=0, scale=new.scale),
        ]
        TransformedDistribution.__init__(new, base, transforms, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> Tensor:
        return self.scale * lgamma(1 + self.concentration_reciprocal).exp()

    @property
    def mode(self) -> Tensor:
        k = self.concentration
        return self.scale * ((k - 1) / k) ** k.reciprocal()

    @property
    def variance(self) -> Tensor:
        k_inv = self.concentration_reciprocal
        return self.scale.pow(2) * (lgamma(1 + 2 * k_inv).exp() - lgamma(1 + k_inv).exp().pow(2))

    def entropy(self) -> Tensor:
        return (
            _EULER * (1 - self.concentration_reciprocal)
            + (self.scale * self.concentration_reciprocal).log()
            + 1
        )


class InverseGamma(TransformedDistribution):
    """1 / X for X ~ Gamma(`concentration`, `rate`)."""

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.positive

    def __init__(
        self, concentration: Tensor | float, rate: Tensor | float, validate_args: bool | None = None
    ) -> None:
        base = Gamma(concentration, rate, validate_args=validate_args)
        neg_one = -base.rate.new_ones(())
        super().__init__(base, PowerTransform(neg_one), validate_args=validate_args)

    _expanded_attrs = ()

    concentration = forwarded_property(
        "base_dist", "concentration", "Shape of the Gamma distribution of 1 / X."
    )
    rate = forwarded_property("base_dist", "rate", "Rate of the Gamma distribution of 1 / X.")

    @property
    def mean(self) -> Tensor:
        result = self.rate / (self.concentration - 1)
        return aten.where(self.concentration > 1, result, math.inf)

    @property
    def mode(self) -> Tensor:
        return self.rate / (self.concentration + 1)

    @property
    def variance(self) -> Tensor:
        c = self.concentration
        result = self.rate.pow(2) / ((c - 1).pow(2) * (c - 2))
        return aten.where(c > 2, result, math.inf)

    def entropy(self) -> Tensor:
        c = self.concentration
        return c + self.rate.log() + lgamma(c) - (1 + c) * digamma(c)


def _kumaraswamy_moment(a: Tensor, b: Tensor, n: int) -> Tensor:
    arg1 = 1 + n / a
    log_value = lgamma(arg1) + lgamma(b) - lgamma(arg1 + b)
    return b * log_value.exp()


class Kumaraswamy(TransformedDistribution):
    """The Kumaraswamy distribution on (0, 1): cdf 1 - (1 - x^a)^b, with a =
    `concentration1`, b = `concentration0`."""

    arg_constraints = {
        "concentration1": constraints.positive,
        "concentration0": constraints.positive,
    }
    support = constraints.unit_interval

    def __init__(
        self,
        concentration1: Tensor | float,
        concentration0: Tensor | float,
        validate_args: bool | None = None,
    ) -> None:
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        base = Uniform(
            aten.zeros_like(self.concentration0),
            aten.ones_like(self.concentration0),
            validate_args=validate_args,
        )
        transforms = [
            PowerTransform(exponent=self.concentration0.reciprocal()),
            AffineTransform(loc=1.0, scale=-1.0),
            PowerTransform(exponent=self.concentration1.reciprocal()),
        ]
        super().__init__(base, transforms, validate_args=validate_args)

    _expanded_attrs = ("concentration1", "concentration0")

    @property
    def mean(self) -> Tensor:
        return _kumaraswamy_moment(self.concentration1, self.concentration0, 1)

    @property
    def mode(self) -> Tensor:
        a, b = self.concentration1, self.concentration0
        log_mode = a.reciprocal() * ((a - 1).log() - (a * b - 1).log())
        return aten.where((a < 1) | (b < 1), math.nan, log_mode.exp())

    @property
    def variance(self) -> Tensor:
        a, b = self.concentration1, self.concentration0
        return _kumaraswamy_moment(a, b, 2) - _kumaraswamy_moment(a, b, 1).pow(2)

    def entropy(self) -> Tensor:
        a, b = self.concentration1, self.concentration0
        t1 = 1 - a.reciprocal()
        t0 = 1 - b.reciprocal()
        h_b = digamma(b + 1) + _EULER
        return t0 + t1 * h_b - a.log() - b.log()
