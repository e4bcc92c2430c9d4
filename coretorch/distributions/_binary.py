"""The probs/logits parameters shared by several distributions: the binary-outcome ones
(Bernoulli, Binomial, NegativeBinomial, Geometric, LogitRelaxedBernoulli: exactly one of probs
and logits is given, the other derived on first use) and those over categories (Multinomial,
ExpRelaxedCategorical: kept in a Categorical)."""

from __future__ import annotations

import numbers
from typing import TYPE_CHECKING

from ..tensor.size import Size
from ..tensor.tensor import Tensor
from .utils import (
    broadcast_all,
    forwarded_property,
    lazy_property,
    logits_to_probs,
    probs_to_logits,
)

# mixed into Distribution subclasses (typed as one; object at run time)
if TYPE_CHECKING:
    from .distribution import Distribution as _DistributionMixin
else:
    _DistributionMixin = object

__all__ = [
    "BinaryParams",
    "set_probs_or_logits",
    "expand_probs_or_logits",
    "CategoricalParams",
    "TrialCounts",
]


def _expanded_copy(dist, batch_shape, _instance, fill):
    """`dist.expand(batch_shape)`: a new instance of `dist`'s type sharing its `_copied`
    attributes, its batched parameters set by ``fill(new, batch_shape)``."""
    new = dist._get_checked_instance(type(dist), _instance)
    batch_shape = Size(tuple(batch_shape))
    for name in dist._copied:
        setattr(new, name, getattr(dist, name))
    fill(new, batch_shape)
    return dist._expanded(new, batch_shape)


class BinaryParams(_DistributionMixin):
    """`probs` and `logits` (log-odds) derived from each other on first access; `expand`
    carries over the attributes named in `_copied` unchanged and expands those in `_batched`
    with probs/logits."""

    # the given parameter (probs or logits), set by set_probs_or_logits
    _param: Tensor

    _copied: tuple = ()
    _batched: tuple = ()

    def expand(self, batch_shape, _instance=None):
        def fill(new, shape):
            for name in self._batched:
                setattr(new, name, getattr(self, name).expand(tuple(shape)))
            expand_probs_or_logits(self, new, shape)

        return _expanded_copy(self, batch_shape, _instance, fill)

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Tensor:
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self) -> Size:
        return self._param.shape


def set_probs_or_logits(dist, probs, logits, others: tuple = ()) -> bool:
    """Set exactly one of `probs`/`logits` on `dist` (broadcast with `others`) as
    `dist._param`; True when every value given is a Python number."""
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")
    value = probs if probs is not None else logits
    values = broadcast_all(*others, value)
    setattr(dist, "probs" if probs is not None else "logits", values[-1])
    dist._param = values[-1]
    return all(isinstance(v, numbers.Number) for v in (*others, value))


def expand_probs_or_logits(dist, new, batch_shape) -> None:
    """Give `new` (being built by ``dist.expand``) `dist`'s probs and/or logits expanded to
    `batch_shape`."""
    for name in ("probs", "logits"):
        if name in dist.__dict__:
            setattr(new, name, getattr(dist, name).expand(tuple(batch_shape)))
            new._param = getattr(new, name)


class CategoricalParams(_DistributionMixin):
    """A distribution over the last dim of `probs`/`logits` that keeps them in a Categorical
    (`_categorical`); `_copied` names the other attributes `expand` carries over."""

    _copied: tuple = ()

    def _init_categorical(self, probs, logits, validate_args) -> None:
        from .categorical import Categorical
        from .distribution import Distribution

        self._categorical = Categorical(probs=probs, logits=logits)
        shape = tuple(self._categorical._param.shape)
        Distribution.__init__(self, shape[:-1], shape[-1:], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        def fill(new, shape):
            new._categorical = self._categorical.expand(shape)

        return _expanded_copy(self, batch_shape, _instance, fill)

    logits = forwarded_property("_categorical", "logits")
    probs = forwarded_property("_categorical", "probs")
    param_shape = forwarded_property("_categorical", "param_shape")


class TrialCounts(BinaryParams):
    """Binomial-type distributions: a `total_count` broadcast with probs/logits."""

    _batched = ("total_count",)

    def __init__(
        self, total_count, probs=None, logits=None, validate_args: bool | None = None
    ) -> None:
        from .distribution import Distribution

        scalar = set_probs_or_logits(self, probs, logits, (total_count,))
        (self.total_count,) = broadcast_all(total_count, self._param)[:1]
        self.total_count = self.total_count.to(self._param.dtype)
        Distribution.__init__(
            self, Size() if scalar else self._param.shape, validate_args=validate_args
        )
