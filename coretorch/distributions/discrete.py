"""Poisson, Binomial, Geometric, NegativeBinomial and Multinomial (mirror
``torch.distributions``). Poisson and binomial samples are inverse-cdf draws (scipy's ppf on
the host) of coretorch uniforms, so ``manual_seed`` fixes them."""

from __future__ import annotations

import math
import numbers

import numpy as np

from .. import dtypes as _dt
from ..autograd.grad_mode import no_grad
from ..nn import functional as F
from ..ops import aten
from ..tensor.size import Size
from ..tensor.tensor import Tensor
from . import constraints
from ._binary import BinaryParams, CategoricalParams, TrialCounts, set_probs_or_logits
from ._special import _host, _like, _uniforms, lgamma
from .distribution import Distribution, ExponentialFamily, expand_params
from .utils import broadcast_all

__all__ = ["Poisson", "Binomial", "Geometric", "NegativeBinomial", "Multinomial"]


def _scipy_stats():
    import scipy.stats

    return scipy.stats


class Poisson(ExponentialFamily):
    """The Poisson distribution with `rate` λ: P(k) = λ^k e^(-λ) / k!."""

    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    def __init__(self, rate: Tensor | float, validate_args: bool | None = None) -> None:
        (self.rate,) = broadcast_all(rate)
        scalar = isinstance(rate, numbers.Number)
        super().__init__(Size() if scalar else self.rate.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return expand_params(self, Poisson, ("rate",), batch_shape, _instance)

    @property
    def mean(self) -> Tensor:
        return self.rate

    @property
    def mode(self) -> Tensor:
        return self.rate.floor()

    @property
    def variance(self) -> Tensor:
        return self.rate

    def sample(self, sample_shape=Size()) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        with no_grad():
            rate = self.rate.expand(shape)
            u = _uniforms(rate)
            k = _scipy_stats().poisson.ppf(u, _host(rate, "Poisson.sample"))
            return _like(np.nan_to_num(k), rate)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        rate, value = broadcast_all(self.rate, value)
        return aten.xlogy(value, rate) - rate - lgamma(value + 1)

    @property
    def _natural_params(self) -> tuple[Tensor]:
        return (self.rate.log(),)

    def _log_normalizer(self, x):
        return x.exp()


class Binomial(TrialCounts, Distribution):
    """The number of successes in `total_count` trials of success probability `probs` (or
    sigmoid(`logits`))."""

    arg_constraints = {
        "total_count": constraints.nonnegative_integer,
        "probs": constraints.unit_interval,
        "logits": constraints.real,
    }
    has_enumerate_support = True

    def __init__(
        self,
        total_count: Tensor | int = 1,
        probs=None,
        logits=None,
        validate_args: bool | None = None,
    ) -> None:
        TrialCounts.__init__(self, total_count, probs, logits, validate_args)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self) -> Tensor:
        return self.total_count * self.probs

    @property
    def mode(self) -> Tensor:
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self) -> Tensor:
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=Size()) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        with no_grad():
            n = self.total_count.expand(shape)
            p = self.probs.expand(shape)
            k = _scipy_stats().binom.ppf(
                _uniforms(p), _host(n, "Binomial.sample"), _host(p, "Binomial.sample")
            )
            return _like(np.nan_to_num(k), p)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        n = self.total_count
        log_factorial_n = lgamma(n + 1)
        log_factorial_k = lgamma(value + 1)
        log_factorial_nmk = lgamma(n - value + 1)
        # k log p + (n - k) log(1 - p) = k logit - n softplus(logit): stable in the logits
        return (
            log_factorial_n
            - log_factorial_k
            - log_factorial_nmk
            + value * self.logits
            - n * F.softplus(self.logits)
        )

    def entropy(self) -> Tensor:
        total = int(self.total_count.max())
        if not bool((self.total_count == total).all()):
            raise NotImplementedError("Inhomogeneous total count not supported by `entropy`.")
        values = self.enumerate_support(False)
        log_prob = self.log_prob(values)
        return -(log_prob.exp() * log_prob).sum(0)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        total = int(self.total_count.max())
        if not bool((self.total_count == total).all()):
            raise NotImplementedError(
                "Inhomogeneous total count not supported by `enumerate_support`."
            )
        values = aten.arange(1 + total, dtype=self._param.dtype, device=self._param.device)
        values = values.reshape((-1,) + (1,) * len(self.batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self.batch_shape))
        return values


class Geometric(BinaryParams, Distribution):
    """The number of failures before the first success in trials of success probability
    `probs` (or sigmoid(`logits`)): P(k) = (1 - p)^k p."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, probs=None, logits=None, validate_args: bool | None = None) -> None:
        scalar = set_probs_or_logits(self, probs, logits)
        super().__init__(Size() if scalar else self._param.shape, validate_args=validate_args)
        if self._validate_args and probs is not None:
            if not bool((self.probs > 0).all()):
                raise ValueError(
                    f"Expected parameter probs ({type(self.probs).__name__} of "
                    f"shape {tuple(self.probs.shape)}) of distribution {self!r} to "
                    f"be positive but found invalid values:\n{self.probs}"
                )

    @property
    def mean(self) -> Tensor:
        return 1.0 / self.probs - 1.0

    @property
    def mode(self) -> Tensor:
        return aten.zeros_like(self.probs)

    @property
    def variance(self) -> Tensor:
        return (1.0 / self.probs - 1.0) / self.probs

    def sample(self, sample_shape=Size()) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        tiny = _dt.finfo(self.probs.dtype).tiny
        with no_grad():
            u = aten.rand(shape, dtype=self.probs.dtype, device=self.probs.device)
            u = u.clamp(min=tiny)
            return (u.log() / (-self.probs).log1p()).floor()

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        probs = aten.where((probs == 1) & (value == 0), 0.0, probs)
        return value * (-probs).log1p() + self.probs.log()

    def entropy(self) -> Tensor:
        return (
            F.binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")
            / self.probs
        )


class NegativeBinomial(TrialCounts, Distribution):
    """The number of successes before `total_count` failures in trials of success probability
    `probs` (or sigmoid(`logits`))."""

    arg_constraints = {
        "total_count": constraints.greater_than_eq(0),
        "probs": constraints.half_open_interval(0.0, 1.0),
        "logits": constraints.real,
    }
    support = constraints.nonnegative_integer

    def __init__(
        self,
        total_count: Tensor | float,
        probs=None,
        logits=None,
        validate_args: bool | None = None,
    ) -> None:
        TrialCounts.__init__(self, total_count, probs, logits, validate_args)

    @property
    def mean(self) -> Tensor:
        return self.total_count * self.logits.exp()

    @property
    def mode(self) -> Tensor:
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self) -> Tensor:
        return self.mean / (-self.logits).sigmoid()

    def sample(self, sample_shape=Size()) -> Tensor:
        from .gamma import Gamma

        with no_grad():
            rate = Gamma(self.total_count, (-self.logits).exp(), validate_args=False).sample(
                sample_shape
            )
            return Poisson(rate, validate_args=False).sample()

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        n = self.total_count
        log_unnormalized = n * F.logsigmoid(-self.logits) + value * F.logsigmoid(self.logits)
        log_normalization = -lgamma(n + value) + lgamma(1.0 + value) + lgamma(n)
        log_normalization = aten.where(n + value == 0.0, 0.0, log_normalization)
        return log_unnormalized - log_normalization


class Multinomial(CategoricalParams, Distribution):
    """Counts of `total_count` draws from a categorical distribution over the last dim of
    `probs` (or `logits`)."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    _copied = ("total_count",)

    def __init__(
        self, total_count: int = 1, probs=None, logits=None, validate_args: bool | None = None
    ) -> None:
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._init_categorical(probs, logits, validate_args)

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self):
        return constraints.multinomial(self.total_count)

    @property
    def mean(self) -> Tensor:
        return self.probs * self.total_count

    @property
    def variance(self) -> Tensor:
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=Size()) -> Tensor:
        sample_shape = Size(tuple(sample_shape))
        with no_grad():
            draws = self._categorical.sample(Size((self.total_count,)) + sample_shape)
            # (total_count, *sample, *batch) -> (*sample, *batch, total_count)
            draws = draws.permute(tuple(range(1, draws.dim())) + (0,))
            counts = aten.zeros(
                tuple(self._extended_shape(sample_shape)),
                dtype=self.probs.dtype,
                device=self.probs.device,
            )
            return counts.scatter_add(-1, draws, aten.ones_like(draws, dtype=counts.dtype))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        log_factorial_n = lgamma(value.sum(-1) + 1)
        log_factorial_xs = lgamma(value + 1).sum(-1)
        logits = aten.where((value == 0) & (logits == -math.inf), 0.0, logits)
        return log_factorial_n - log_factorial_xs + (logits * value).sum(-1)
