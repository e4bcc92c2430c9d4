"""Categorical and OneHotCategorical (mirror ``torch.distributions``)."""

from __future__ import annotations

import math

from .. import dtypes as _dt
from ..nn import functional as F
from ..ops import aten
from ..tensor.size import Size
from ..tensor.tensor import Tensor
from . import constraints
from .distribution import Distribution
from .utils import broadcast_shapes, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Categorical", "OneHotCategorical", "OneHotCategoricalStraightThrough"]


def _sample_indices(probs: Tensor, n: int) -> Tensor:
    """`n` category indices per row of `probs` (rows need not be normalized), drawn with
    replacement by inverting the cumulative distribution on uniforms from coretorch's
    generator; shape (n, rows). (``torch.multinomial(probs, n, True).T``.)"""
    cdf = probs.cumsum(-1)
    cdf = cdf / cdf[..., -1:]
    u = aten.rand((n, probs.shape[0], 1), dtype=cdf.dtype, device=cdf.device)
    # index k is drawn when cdf[k-1] <= u < cdf[k]; categories of probability 0 never are
    idx = (cdf.unsqueeze(0) <= u).sum(-1)
    return idx.clamp(max=probs.shape[-1] - 1)


class Categorical(Distribution):
    """A categorical distribution over {0, ..., K-1} given by `probs` (normalized over the last
    dimension) or `logits` (unnormalized log-probabilities); exactly one of the two."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    has_enumerate_support = True

    def __init__(
        self,
        probs: Tensor | None = None,
        logits: Tensor | None = None,
        validate_args: bool | None = None,
    ) -> None:
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            if probs.dim() < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
        else:
            assert logits is not None  # one of the two was checked to be given
            if logits.dim() < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logits.logsumexp(dim=-1, keepdim=True)
        self._param = self.probs if probs is not None else self.logits
        self._num_events = self._param.shape[-1]
        batch_shape = self._param.shape[:-1] if self._param.dim() > 1 else Size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Categorical, _instance)
        batch_shape = Size(tuple(batch_shape))
        param_shape = tuple(batch_shape) + (self._num_events,)
        if "probs" in self.__dict__:
            new.probs = self.probs.expand(param_shape)
            new._param = new.probs
        if "logits" in self.__dict__:
            new.logits = self.logits.expand(param_shape)
            new._param = new.logits
        new._num_events = self._num_events
        return self._expanded(new, batch_shape)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self._num_events - 1)

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs)

    @lazy_property
    def probs(self) -> Tensor:
        return logits_to_probs(self.logits)

    @property
    def param_shape(self) -> Size:
        """Shape of the parameter tensor (`probs` or `logits`), batch shape plus the category
        dimension."""
        return self._param.shape

    @property
    def mean(self) -> Tensor:
        """NaN everywhere: category indices have no meaningful mean (as PyTorch)."""
        return aten.full(
            tuple(self._extended_shape()),
            math.nan,
            dtype=self.probs.dtype,
            device=self.probs.device,
        )

    @property
    def mode(self) -> Tensor:
        """The most probable category index of each batch element."""
        return self.probs.argmax(dim=-1)

    @property
    def variance(self) -> Tensor:
        """NaN everywhere, as `mean`."""
        return self.mean

    def sample(self, sample_shape=Size()) -> Tensor:
        sample_shape = Size(tuple(sample_shape))
        probs_2d = self.probs.detach().reshape(-1, self._num_events)
        samples_2d = _sample_indices(probs_2d, math.prod(sample_shape))
        return samples_2d.reshape(tuple(self._extended_shape(sample_shape)))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        value = value.long().unsqueeze(-1)
        shape = broadcast_shapes(tuple(value.shape), tuple(self.logits.shape))
        log_pmf = self.logits.expand(shape)
        value = value.expand(shape)[..., :1]
        return log_pmf.gather(-1, value).squeeze(-1)

    def entropy(self) -> Tensor:
        min_real = _dt.finfo(self.logits.dtype).min
        logits = self.logits.clamp(min=min_real)
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        """All category indices 0..K-1, shaped (K, 1, ..., 1) for broadcasting.

        Args:
            expand: expand to (K, *batch_shape) instead of leaving size-1 batch dimensions.
        """
        values = aten.arange(self._num_events, dtype=_dt.int64, device=self._param.device)
        values = values.reshape((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values


class OneHotCategorical(Distribution):
    """A categorical distribution whose samples are one-hot vectors of length K."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.one_hot
    has_enumerate_support = True

    def __init__(
        self,
        probs: Tensor | None = None,
        logits: Tensor | None = None,
        validate_args: bool | None = None,
    ) -> None:
        self._categorical = Categorical(probs, logits)
        batch_shape = self._categorical.batch_shape
        event_shape = self._categorical.param_shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(OneHotCategorical, _instance)
        batch_shape = Size(tuple(batch_shape))
        new._categorical = self._categorical.expand(batch_shape)
        return self._expanded(new, batch_shape)

    _param = property(lambda self: self._categorical._param)
    probs = property(lambda self: self._categorical.probs, doc="The event probabilities.")
    logits = property(
        lambda self: self._categorical.logits, doc="The normalized log-probabilities."
    )
    mean = probs

    @property
    def mode(self) -> Tensor:
        """The one-hot vector of the most probable category, in `probs`' dtype."""
        probs = self._categorical.probs
        return F.one_hot(probs.argmax(dim=-1), num_classes=probs.shape[-1]).to(probs.dtype)

    @property
    def variance(self) -> Tensor:
        """probs * (1 - probs), per category."""
        return self._categorical.probs * (1 - self._categorical.probs)

    param_shape = property(
        lambda self: self._categorical.param_shape,
        doc="Shape of the parameter tensor: batch shape plus categories.",
    )

    def sample(self, sample_shape=Size()) -> Tensor:
        probs = self._categorical.probs
        indices = self._categorical.sample(sample_shape)
        return F.one_hot(indices, self._categorical._num_events).to(probs.dtype)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return self._categorical.log_prob(value.argmax(-1))

    def entropy(self) -> Tensor:
        return self._categorical.entropy()

    def enumerate_support(self, expand: bool = True) -> Tensor:
        """The K one-hot vectors (rows of the identity), shaped (K, 1, ..., 1, K).

        Args:
            expand: expand to (K, *batch_shape, K) instead of leaving size-1 batch dimensions.
        """
        n = self.event_shape[0]
        values = aten.eye(n, dtype=self._param.dtype, device=self._param.device)
        values = values.reshape((n,) + (1,) * len(self.batch_shape) + (n,))
        if expand:
            values = values.expand((n,) + tuple(self.batch_shape) + (n,))
        return values


class OneHotCategoricalStraightThrough(OneHotCategorical):
    """OneHotCategorical whose `rsample` passes gradients straight through to the
    probabilities (Bengio et al., 2013)."""

    has_rsample = True

    def rsample(self, sample_shape=Size()) -> Tensor:
        samples = self.sample(sample_shape)
        probs = self._categorical.probs
        return samples + (probs - probs.detach())
