"""Normal and Uniform (mirror ``torch.distributions``); both reparameterizable."""

from __future__ import annotations

import math

from ..ops import aten
from ..tensor.size import Size
from ..tensor.tensor import Tensor
from . import constraints
from .distribution import Distribution, ExponentialFamily, LocationMoments, TwoParams
from .utils import standard_normal

__all__ = ["Normal", "Uniform"]


class Normal(LocationMoments, TwoParams, ExponentialFamily):
    """The normal distribution N(`loc`, `scale`²)."""

    # the parameters, set by init_params
    loc: Tensor
    scale: Tensor

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def stddev(self) -> Tensor:
        """The scale parameter."""
        return self.scale

    @property
    def variance(self) -> Tensor:
        """scale ** 2."""
        return self.stddev.pow(2)

    def rsample(self, sample_shape=Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        eps = standard_normal(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + eps * self.scale

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        var = self.scale**2
        return (
            -((value - self.loc) ** 2) / (2 * var)
            - self.scale.log()
            - math.log(math.sqrt(2 * math.pi))
        )

    def cdf(self, value: Tensor) -> Tensor:
        """0.5 * (1 + erf((value - loc) / (scale * sqrt(2)))).

        Raises:
            ValueError: when argument validation is on and `value` is not a valid sample.
        """
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 * (1 + aten.erf((value - self.loc) * self.scale.reciprocal() / math.sqrt(2)))

    def icdf(self, value: Tensor) -> Tensor:
        """The quantile loc + scale * sqrt(2) * erfinv(2 * value - 1) of probabilities `value`."""
        return self.loc + self.scale * aten.erfinv(2 * value - 1) * math.sqrt(2)

    def entropy(self) -> Tensor:
        return 0.5 + 0.5 * math.log(2 * math.pi) + self.scale.log()

    @property
    def _natural_params(self) -> tuple[Tensor, Tensor]:
        return (self.loc / self.scale.pow(2), -0.5 * self.scale.pow(2).reciprocal())

    def _log_normalizer(self, x, y):
        return -0.25 * x.pow(2) / y + 0.5 * (-math.pi / y).log()


class Uniform(TwoParams, Distribution):
    """The uniform distribution on the half-open interval [`low`, `high`)."""

    # the parameters, set by init_params
    low: Tensor
    high: Tensor

    has_rsample = True
    _params = ("low", "high")

    @property
    def arg_constraints(self):
        return {"low": constraints.less_than(self.high), "high": constraints.greater_than(self.low)}

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        return constraints.interval(self.low, self.high)

    @property
    def mean(self) -> Tensor:
        """(low + high) / 2."""
        return (self.high + self.low) / 2

    @property
    def mode(self) -> Tensor:
        """NaN: every point of [low, high) is equally likely."""
        return math.nan * self.high

    @property
    def stddev(self) -> Tensor:
        """(high - low) / sqrt(12)."""
        return (self.high - self.low) / 12**0.5

    @property
    def variance(self) -> Tensor:
        """(high - low) ** 2 / 12."""
        return (self.high - self.low).pow(2) / 12

    def rsample(self, sample_shape=Size()) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        rand = aten.rand(shape, dtype=self.low.dtype, device=self.low.device)
        return self.low + rand * (self.high - self.low)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        lb = self.low.le(value).to(self.low.dtype)
        ub = self.high.gt(value).to(self.low.dtype)
        return lb.mul(ub).log() - (self.high - self.low).log()

    def cdf(self, value: Tensor) -> Tensor:
        """(value - low) / (high - low), clamped to [0, 1].

        Raises:
            ValueError: when argument validation is on and `value` is outside [low, high).
        """
        if self._validate_args:
            self._validate_sample(value)
        return ((value - self.low) / (self.high - self.low)).clamp(min=0, max=1)

    def icdf(self, value: Tensor) -> Tensor:
        """low + value * (high - low) for probabilities `value`."""
        return value * (self.high - self.low) + self.low

    def entropy(self) -> Tensor:
        return (self.high - self.low).log()
