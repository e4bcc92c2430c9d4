"""The probs/logits pair of the binary-outcome distributions (Bernoulli, Binomial, Geometric,
LogitRelaxedBernoulli): exactly one is given, the other derived on first use."""
from __future__ import annotations

import numbers

from ..tensor.size import Size
from ..tensor.tensor import Tensor
from .utils import broadcast_all, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["BinaryParams", "set_probs_or_logits", "expand_probs_or_logits"]


class BinaryParams:
    """`probs` and `logits` (log-odds) derived from each other on first access."""

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
