"""RelaxedBernoulli and RelaxedOneHotCategorical (the Concrete / Gumbel-softmax relaxations;
mirror ``torch.distributions``), with their logit-space bases LogitRelaxedBernoulli and
ExpRelaxedCategorical. All reparameterizable."""

from __future__ import annotations

from ..ops import aten
from ..tensor.size import Size
from ..tensor.tensor import Tensor
from . import constraints
from ._binary import BinaryParams, CategoricalParams, set_probs_or_logits
from .distribution import Distribution
from .transformed import TransformedDistribution
from .transforms import ExpTransform, SigmoidTransform
from .utils import broadcast_all, clamp_probs, forwarded_property

__all__ = [
    "LogitRelaxedBernoulli",
    "RelaxedBernoulli",
    "ExpRelaxedCategorical",
    "RelaxedOneHotCategorical",
]


def _uniforms(shape, like: Tensor) -> Tensor:
    return clamp_probs(aten.rand(tuple(shape), dtype=like.dtype, device=like.device))


class LogitRelaxedBernoulli(BinaryParams, Distribution):
    """The logit of a RelaxedBernoulli sample: (logit(u) + logits) / temperature."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.real
    has_rsample = True
    _copied = ("temperature",)

    def __init__(
        self, temperature: Tensor, probs=None, logits=None, validate_args: bool | None = None
    ) -> None:
        self.temperature = temperature
        scalar = set_probs_or_logits(self, probs, logits)
        super().__init__(Size() if scalar else self._param.shape, validate_args=validate_args)

    def rsample(self, sample_shape=Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        probs = clamp_probs(self.probs.expand(tuple(shape)))
        u = _uniforms(shape, probs)
        return (u.log() - (-u).log1p() + probs.log() - (-probs).log1p()) / self.temperature

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        diff = logits - value * self.temperature
        temperature = (
            self.temperature
            if isinstance(self.temperature, Tensor)
            else aten.full((), self.temperature, dtype=logits.dtype, device=logits.device)
        )
        return temperature.log() + diff - 2 * diff.exp().log1p()


class _Relaxed(TransformedDistribution):
    """A relaxed distribution: a transform of its logit-space base, whose temperature, logits
    and probs it shows."""

    temperature = forwarded_property("base_dist", "temperature")
    logits = forwarded_property("base_dist", "logits")
    probs = forwarded_property("base_dist", "probs")


class RelaxedBernoulli(_Relaxed):
    """A continuous relaxation of Bernoulli on (0, 1), sharper as `temperature` goes to 0."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True
    _expanded_attrs = ()

    def __init__(
        self, temperature: Tensor, probs=None, logits=None, validate_args: bool | None = None
    ) -> None:
        base = LogitRelaxedBernoulli(temperature, probs, logits)
        super().__init__(base, SigmoidTransform(), validate_args=validate_args)


class ExpRelaxedCategorical(CategoricalParams, Distribution):
    """The log of a RelaxedOneHotCategorical sample (log-softmax of Gumbel-perturbed logits
    over `temperature`)."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.real_vector
    has_rsample = True
    _copied = ("temperature",)

    def __init__(
        self, temperature: Tensor, probs=None, logits=None, validate_args: bool | None = None
    ) -> None:
        self.temperature = temperature
        self._init_categorical(probs, logits, validate_args)

    def rsample(self, sample_shape=Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        u = _uniforms(shape, self.logits)
        gumbels = -((-(u.log())).log())
        scores = (self.logits + gumbels) / self.temperature
        return scores - scores.logsumexp(-1, keepdim=True)

    def log_prob(self, value: Tensor) -> Tensor:
        k = self._categorical._num_events
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        temperature = (
            self.temperature
            if isinstance(self.temperature, Tensor)
            else aten.full((), self.temperature, dtype=logits.dtype, device=logits.device)
        )
        log_scale = aten.full_like(temperature, float(k)).lgamma() - temperature.log() * -(k - 1)
        score = logits - value * temperature
        score = (score - score.logsumexp(-1, keepdim=True)).sum(-1)
        return score + log_scale


class RelaxedOneHotCategorical(_Relaxed):
    """A continuous relaxation of OneHotCategorical on the simplex (Gumbel-softmax samples),
    sharper as `temperature` goes to 0."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.simplex
    has_rsample = True
    _expanded_attrs = ()

    def __init__(
        self, temperature: Tensor, probs=None, logits=None, validate_args: bool | None = None
    ) -> None:
        base = ExpRelaxedCategorical(temperature, probs, logits, validate_args=validate_args)
        super().__init__(base, ExpTransform(), validate_args=validate_args)
