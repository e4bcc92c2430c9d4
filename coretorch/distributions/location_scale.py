"""Exponential, Laplace, Cauchy, Gumbel and GeneralizedPareto (mirror
``torch.distributions``): closed-form densities, entropies and moments; samples by inverse cdf
of uniforms, so all are
reparameterizable."""

from __future__ import annotations

import math

from .. import dtypes as _dt
from ..ops import aten
from ..tensor.size import Size
from ..tensor.tensor import Tensor
from . import constraints
from .distribution import Distribution, ExponentialFamily, LocationMoments, TwoParams, expand_params
from .utils import broadcast_all

__all__ = ["Exponential", "Laplace", "Cauchy", "Gumbel", "GeneralizedPareto"]

_EULER = 0.57721566490153286060


def _uniform_open(shape, like: Tensor) -> Tensor:
    """Uniforms in (0, 1): never exactly 0, so their logs are finite."""
    tiny = _dt.finfo(like.dtype).tiny
    return aten.rand(tuple(shape), dtype=like.dtype, device=like.device).clamp(min=tiny)


def _one_param(dist: Distribution, name: str, value, validate_args) -> None:
    """Set the single parameter `name` (a number or a tensor) and initialize the base."""
    (t,) = broadcast_all(value)
    setattr(dist, name, t)
    scalar = not isinstance(value, Tensor)
    Distribution.__init__(dist, Size() if scalar else t.shape, validate_args=validate_args)


class _LocationScale(TwoParams, Distribution):
    """A reparameterizable distribution on the reals given by `loc` and `scale` > 0."""

    # the parameters, set by init_params
    loc: Tensor
    scale: Tensor

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    @property
    def mode(self) -> Tensor:
        return self.loc


class Exponential(ExponentialFamily):
    """The exponential distribution with `rate` λ: density λ e^(-λx) on x >= 0."""

    # the parameter, set by _one_param
    rate: Tensor

    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, rate: Tensor | float, validate_args: bool | None = None) -> None:
        _one_param(self, "rate", rate, validate_args)

    def expand(self, batch_shape, _instance=None):
        return expand_params(self, Exponential, ("rate",), batch_shape, _instance)

    @property
    def mean(self) -> Tensor:
        return self.rate.reciprocal()

    @property
    def mode(self) -> Tensor:
        return aten.zeros_like(self.rate)

    @property
    def stddev(self) -> Tensor:
        return self.rate.reciprocal()

    @property
    def variance(self) -> Tensor:
        return self.rate.pow(-2)

    def rsample(self, sample_shape=Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        return -_uniform_open(shape, self.rate).log() / self.rate

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return self.rate.log() - self.rate * value

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return 1 - (-self.rate * value).exp()

    def icdf(self, value: Tensor) -> Tensor:
        return -(-value).log1p() / self.rate

    def entropy(self) -> Tensor:
        return 1.0 - self.rate.log()

    @property
    def _natural_params(self) -> tuple[Tensor]:
        return (-self.rate,)

    def _log_normalizer(self, x):
        return -(-x).log()


class Laplace(LocationMoments, _LocationScale):
    """The Laplace distribution: density exp(-|x - loc| / scale) / (2 scale)."""

    @property
    def variance(self) -> Tensor:
        return 2 * self.scale.pow(2)

    @property
    def stddev(self) -> Tensor:
        return math.sqrt(2) * self.scale

    def rsample(self, sample_shape=Size()) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        eps = _dt.finfo(self.loc.dtype).eps
        u = aten.rand(shape, dtype=self.loc.dtype, device=self.loc.device) * 2 - 1
        u = u.clamp(min=eps - 1, max=1 - eps)
        return self.loc - self.scale * u.sign() * (-u.abs()).log1p()

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return -(2 * self.scale).log() - (value - self.loc).abs() / self.scale

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        z = value - self.loc
        return 0.5 - 0.5 * z.sign() * (-z.abs() / self.scale).expm1()

    def icdf(self, value: Tensor) -> Tensor:
        term = value - 0.5
        return self.loc - self.scale * term.sign() * (-2 * term.abs()).log1p()

    def entropy(self) -> Tensor:
        return 1 + (2 * self.scale).log()


class Cauchy(_LocationScale):
    """The Cauchy (Lorentz) distribution: density 1 / (π scale (1 + ((x - loc)/scale)²));
    its mean and variance do not exist (nan and inf, as PyTorch)."""

    @property
    def mean(self) -> Tensor:
        return aten.full_like(self.loc, math.nan)

    @property
    def variance(self) -> Tensor:
        return aten.full_like(self.loc, math.inf)

    def rsample(self, sample_shape=Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        u = _uniform_open(shape, self.loc)
        return self.loc + self.scale * (math.pi * (u - 0.5)).tan()

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return (
            -math.log(math.pi) - self.scale.log() - (((value - self.loc) / self.scale) ** 2).log1p()
        )

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return ((value - self.loc) / self.scale).atan() / math.pi + 0.5

    def icdf(self, value: Tensor) -> Tensor:
        return (math.pi * (value - 0.5)).tan() * self.scale + self.loc

    def entropy(self) -> Tensor:
        return math.log(4 * math.pi) + self.scale.log()


class Gumbel(_LocationScale):
    """The Gumbel (type-I extreme value) distribution: cdf exp(-exp(-(x - loc) / scale))."""

    @property
    def mean(self) -> Tensor:
        return self.loc + self.scale * _EULER

    @property
    def stddev(self) -> Tensor:
        return (math.pi / math.sqrt(6)) * self.scale

    @property
    def variance(self) -> Tensor:
        return self.stddev.pow(2)

    def rsample(self, sample_shape=Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        u = _uniform_open(shape, self.loc)
        return self.loc - self.scale * (-u.log()).log()

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        return -(self.scale.log() + z + (-z).exp())

    def cdf(self, value: Tensor) -> Tensor:
        return (-(-(value - self.loc) / self.scale).exp()).exp()

    def icdf(self, value: Tensor) -> Tensor:
        return self.loc - self.scale * (-value.log()).log()

    def entropy(self) -> Tensor:
        return self.scale.log() + (1 + _EULER)


class GeneralizedPareto(_LocationScale):
    """The generalized Pareto distribution with `loc`, `scale` and shape `concentration` ξ:
    survival (1 + ξ z)^(-1/ξ) for z = (x - loc) / scale (exp(-z) at ξ = 0)."""

    arg_constraints = {
        "loc": constraints.real,
        "scale": constraints.positive,
        "concentration": constraints.real,
    }

    def __init__(
        self,
        loc: Tensor | float,
        scale: Tensor | float,
        concentration: Tensor | float,
        validate_args: bool | None = None,
    ) -> None:
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        scalar = not any(isinstance(v, Tensor) for v in (loc, scale, concentration))
        Distribution.__init__(
            self, Size() if scalar else self.loc.shape, validate_args=validate_args
        )

    def expand(self, batch_shape, _instance=None):
        return expand_params(
            self, GeneralizedPareto, ("loc", "scale", "concentration"), batch_shape, _instance
        )

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        upper = aten.where(
            self.concentration < 0, self.loc - self.scale / self.concentration, math.inf
        )
        return constraints.interval(self.loc, upper)

    def _safe_concentration(self) -> tuple:
        """(ξ == 0 mask, ξ with the zeros replaced by 1), so no branch divides by zero."""
        eq_zero = self.concentration.abs() <= 1e-8
        return eq_zero, aten.where(eq_zero, 1.0, self.concentration)

    def rsample(self, sample_shape=Size()) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        return self.icdf(aten.rand(shape, dtype=self.loc.dtype, device=self.loc.device))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        eq_zero, conc = self._safe_concentration()
        y = 1 / conc + 1
        nonzero = aten.where(y == 0, y, y * (conc * z).log1p())
        return -self.scale.log() - aten.where(eq_zero, z, nonzero)

    def log_survival_function(self, value: Tensor) -> Tensor:
        """log P(X > value), computed stably (the ξ = 0 limit where `concentration` is 0);
        validates `value` against the support when `validate_args`."""
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        eq_zero, conc = self._safe_concentration()
        return aten.where(eq_zero, -z, -(conc * z).log1p() / conc)

    def log_cdf(self, value: Tensor) -> Tensor:
        """log P(X <= value), as log1p(-survival)."""
        return (-self.log_survival_function(value).exp()).log1p()

    def cdf(self, value: Tensor) -> Tensor:
        return self.log_cdf(value).exp()

    def icdf(self, value: Tensor) -> Tensor:
        eq_zero, conc = self._safe_concentration()
        logu = (-value).log1p()
        return aten.where(
            eq_zero,
            self.loc - self.scale * logu,
            self.loc + self.scale / conc * (-conc * logu).expm1(),
        )

    @property
    def mean(self) -> Tensor:
        valid = self.concentration < 1
        conc = aten.where(valid, self.concentration, 0.5)
        return aten.where(valid, self.loc + self.scale / (1 - conc), math.nan)

    @property
    def variance(self) -> Tensor:
        valid = self.concentration < 0.5
        conc = aten.where(valid, self.concentration, 0.25)
        return aten.where(valid, self.scale.pow(2) / ((1 - conc).pow(2) * (1 - 2 * conc)), math.nan)

    def entropy(self) -> Tensor:
        return (self.scale.log() + self.concentration + 1).expand(tuple(self.batch_shape))
