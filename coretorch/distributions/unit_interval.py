"""ContinuousBernoulli and LogisticNormal (mirror ``torch.distributions``): distributions on
[0, 1] and on the simplex."""

from __future__ import annotations

import math

from ..autograd.grad_mode import no_grad
from ..nn import functional as F
from ..ops import aten
from ..tensor.size import Size
from ..tensor.tensor import Tensor
from . import constraints
from ._binary import BinaryParams, set_probs_or_logits
from .distribution import ExponentialFamily
from .normal import Normal
from .transformed import TransformedDistribution
from .transforms_more import StickBreakingTransform
from .utils import broadcast_all, clamp_probs, forwarded_property, lazy_property, logits_to_probs

__all__ = ["ContinuousBernoulli", "LogisticNormal"]


class ContinuousBernoulli(BinaryParams, ExponentialFamily):
    """The continuous Bernoulli distribution on [0, 1] (Loaiza-Ganem & Cunningham, 2019):
    density C(λ) λ^x (1-λ)^(1-x), λ = `probs`. Near λ = 1/2 (inside `lims`) the normalizer
    and moments use their Taylor expansions, as PyTorch."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    _mean_carrier_measure = 0
    has_rsample = True
    _copied = ("_lims",)

    def __init__(
        self,
        probs=None,
        logits=None,
        lims: tuple = (0.499, 0.501),
        validate_args: bool | None = None,
    ) -> None:
        if probs is not None and validate_args is not None:
            (checked,) = broadcast_all(probs)
            if not bool(self.arg_constraints["probs"].check(checked).all()):
                raise ValueError("The parameter probs has invalid values")
        scalar = set_probs_or_logits(self, probs, logits)
        if probs is not None:
            # clamped away from 0 and 1 for the normalizer's logs
            self.probs = clamp_probs(self.probs)
            self._param = self.probs
        self._lims = lims
        super().__init__(Size() if scalar else self._param.shape, validate_args=validate_args)

    @lazy_property
    def probs(self) -> Tensor:
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    def _stable(self) -> Tensor:
        return (self.probs <= self._lims[0]) | (self.probs > self._lims[1])

    def _cut_probs(self) -> Tensor:
        return aten.where(self._stable(), self.probs, self._lims[0])

    def _cont_bern_log_norm(self) -> Tensor:
        cut = self._cut_probs()
        below = aten.where(cut <= 0.5, cut, 0.0)
        above = aten.where(cut >= 0.5, cut, 1.0)
        log_norm = ((-cut).log1p() - cut.log()).abs().log() - aten.where(
            cut <= 0.5, (-2.0 * below).log1p(), (2.0 * above - 1.0).log()
        )
        x = (self.probs - 0.5).pow(2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return aten.where(self._stable(), log_norm, taylor)

    @property
    def mean(self) -> Tensor:
        cut = self._cut_probs()
        mus = cut / (2.0 * cut - 1.0) + 1.0 / ((-cut).log1p() - cut.log())
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * x.pow(2)) * x
        return aten.where(self._stable(), mus, taylor)

    @property
    def variance(self) -> Tensor:
        cut = self._cut_probs()
        var = cut * (cut - 1.0) / (1.0 - 2.0 * cut).pow(2) + 1.0 / ((-cut).log1p() - cut.log()).pow(
            2
        )
        x = (self.probs - 0.5).pow(2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return aten.where(self._stable(), var, taylor)

    def sample(self, sample_shape=Size()) -> Tensor:
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=Size()) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        u = aten.rand(shape, dtype=self.probs.dtype, device=self.probs.device)
        return self.icdf(u)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return (
            -F.binary_cross_entropy_with_logits(logits, value, reduction="none")
            + self._cont_bern_log_norm()
        )

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        cut = self._cut_probs()
        cdfs = (cut.pow(value) * (1.0 - cut).pow(1.0 - value) + cut - 1.0) / (2.0 * cut - 1.0)
        unbounded = aten.where(self._stable(), cdfs, value)
        return aten.where(value <= 0.0, 0.0, aten.where(value >= 1.0, 1.0, unbounded))

    def icdf(self, value: Tensor) -> Tensor:
        cut = self._cut_probs()
        inside = ((-cut + value * (2.0 * cut - 1.0)).log1p() - (-cut).log1p()) / (
            cut.log() - (-cut).log1p()
        )
        return aten.where(self._stable(), inside, value)

    def entropy(self) -> Tensor:
        log_probs0 = (-self.probs).log1p()
        log_probs1 = self.probs.log()
        return self.mean * (log_probs0 - log_probs1) - self._cont_bern_log_norm() - log_probs0

    @property
    def _natural_params(self) -> tuple[Tensor]:
        return (self.logits,)


class LogisticNormal(TransformedDistribution):
    """The logistic-normal distribution on the simplex: StickBreakingTransform of a Normal
    with `loc` and `scale` (K-1 entries for K categories)."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.simplex

    def __init__(
        self, loc: Tensor | float, scale: Tensor | float, validate_args: bool | None = None
    ) -> None:
        base = Normal(loc, scale, validate_args=validate_args)
        if not base.batch_shape:
            base = base.expand((1,))
        super().__init__(base, StickBreakingTransform(), validate_args=validate_args)

    _expanded_attrs = ()

    loc = forwarded_property("base_dist.base_dist", "loc", "Mean of the underlying Normal.")
    scale = forwarded_property(
        "base_dist.base_dist", "scale", "Standard deviation of the underlying Normal."
    )
