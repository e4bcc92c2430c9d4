"""Gamma and Beta (mirror ``torch.distributions``), reparameterizable through implicit
gradients of inverse-cdf samples (see `_special`)."""

from __future__ import annotations

from ..ops import aten
from ..tensor.size import Size
from ..tensor.tensor import Tensor
from . import constraints
from ._special import digamma, gammainc, lgamma, standard_beta, standard_gamma
from .distribution import ExponentialFamily, TwoParams

__all__ = ["Gamma", "Beta"]


class Gamma(TwoParams, ExponentialFamily):
    """The gamma distribution with shape `concentration` (α) and `rate` (β): density
    β^α x^(α-1) e^(-βx) / Γ(α)."""

    # the parameters, set by init_params
    concentration: Tensor
    rate: Tensor

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def mean(self) -> Tensor:
        """concentration / rate."""
        return self.concentration / self.rate

    @property
    def mode(self) -> Tensor:
        """(concentration - 1) / rate, clamped at 0."""
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self) -> Tensor:
        """concentration / rate ** 2."""
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape=Size()) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        return standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)

    def log_prob(self, value) -> Tensor:
        if not isinstance(value, Tensor):
            value = aten.full((), value, dtype=self.rate.dtype, device=self.rate.device)
        if self._validate_args:
            self._validate_sample(value)
        return (
            aten.xlogy(self.concentration, self.rate)
            + aten.xlogy(self.concentration - 1, value)
            - self.rate * value
            - lgamma(self.concentration)
        )

    def entropy(self) -> Tensor:
        return (
            self.concentration
            - self.rate.log()
            + lgamma(self.concentration)
            + (1.0 - self.concentration) * digamma(self.concentration)
        )

    def cdf(self, value: Tensor) -> Tensor:
        """The regularized lower incomplete gamma function P(concentration, rate * value).

        Raises:
            ValueError: when argument validation is on and `value` is outside the support.
        """
        if self._validate_args:
            self._validate_sample(value)
        return gammainc(self.concentration, self.rate * value)

    @property
    def _natural_params(self) -> tuple[Tensor, Tensor]:
        return (self.concentration - 1, -self.rate)

    def _log_normalizer(self, x, y):
        return lgamma(x + 1) + (x + 1) * (-y.reciprocal()).log()


class Beta(TwoParams, ExponentialFamily):
    """The beta distribution on [0, 1] with shapes `concentration1` (α) and `concentration0`
    (β): density x^(α-1) (1-x)^(β-1) / B(α, β)."""

    # the parameters, set by init_params
    concentration1: Tensor
    concentration0: Tensor

    arg_constraints = {
        "concentration1": constraints.positive,
        "concentration0": constraints.positive,
    }
    support = constraints.unit_interval
    has_rsample = True

    @property
    def mean(self) -> Tensor:
        """concentration1 / (concentration1 + concentration0)."""
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self) -> Tensor:
        """(c1 - 1) / (c1 + c0 - 2), with concentrations below 1 clamped as PyTorch does."""
        # as PyTorch's Dirichlet mode: 1 when both concentrations are below 1
        c1m1 = (self.concentration1 - 1).clamp(min=0.0)
        c0m1 = (self.concentration0 - 1).clamp(min=0.0)
        both_below_one = (self.concentration1 < 1) & (self.concentration0 < 1)
        return aten.where(both_below_one, 1.0, c1m1 / (c1m1 + c0m1))

    @property
    def variance(self) -> Tensor:
        """c1 * c0 / ((c1 + c0) ** 2 * (c1 + c0 + 1))."""
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total.pow(2) * (total + 1))

    def rsample(self, sample_shape=Size()) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        return standard_beta(self.concentration1.expand(shape), self.concentration0.expand(shape))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        c1, c0 = self.concentration1, self.concentration0
        return (
            aten.xlogy(c1 - 1.0, value)
            + aten.xlogy(c0 - 1.0, 1.0 - value)
            + lgamma(c1 + c0)
            - lgamma(c1)
            - lgamma(c0)
        )

    def entropy(self) -> Tensor:
        c1, c0 = self.concentration1, self.concentration0
        total = c1 + c0
        return (
            lgamma(c1)
            + lgamma(c0)
            - lgamma(total)
            - (2 - total) * digamma(total)
            - (c1 - 1.0) * digamma(c1)
            - (c0 - 1.0) * digamma(c0)
        )

    @property
    def _natural_params(self) -> tuple[Tensor, Tensor]:
        return (self.concentration1, self.concentration0)

    def _log_normalizer(self, x, y):
        return lgamma(x) + lgamma(y) - lgamma(x + y)
