"""Random kernels: uniform_, normal_, random_, bernoulli_, bernoulli.

Numbers come from the `coretorch.random.Generator` passed as ``generator=`` (or the cpu default
generator), whose numpy PCG64 stream makes a seed give the same values on every run.
"""
from __future__ import annotations

import numpy as np

from coretorch.random import generator_for
from coretorch.tensor.impl import TensorImpl

from ..elementwise import KIT, as_numpy
from ..registry import kernel

_T = TensorImpl


def _rng(out, generator):
    return (generator if generator is not None else generator_for(out._device)).numpy



@kernel("uniform_")
def uniform_(out, self, from_=0.0, to=1.0, *, generator=None):
    """Fill with samples from U[from_, to)."""
    o = as_numpy(out)
    c = KIT.float_draw_dtype("uniform_", out)
    u = _rng(out, generator).random(o.size, dtype=c)
    if from_ != 0.0 or to != 1.0:
        u = c.type(from_) + u * c.type(to - from_)
    np.copyto(o, u.reshape(o.shape), casting="unsafe")


@kernel("normal_")
def normal_(out, self, mean=0.0, std=1.0, *, generator=None):
    """Fill with samples from N(mean, std**2)."""
    o = as_numpy(out)
    c = KIT.float_draw_dtype("normal_", out)
    z = _rng(out, generator).standard_normal(o.size, dtype=c)
    if mean != 0.0 or std != 1.0:
        z = c.type(mean) + z * c.type(std)
    np.copyto(o, z.reshape(o.shape), casting="unsafe")


@kernel("random_")
def random_(out, self, from_=0, to=None, *, generator=None):
    """Fill with integers drawn uniformly from [from_, to)."""
    o = as_numpy(out)
    v = _rng(out, generator).integers(from_, to, o.size, dtype=np.int64)
    np.copyto(o, v.reshape(o.shape), casting="unsafe")


def _bernoulli_into(name: str, out, p, generator) -> None:
    o = as_numpy(out)
    if isinstance(p, _T):  # a scalar p was range-checked by the meta rule; a tensor is data
        probs = np.broadcast_to(as_numpy(p), o.shape)
        if p.numel() and not ((probs >= 0) & (probs <= 1)).all():
            raise RuntimeError(f"{name}(): expected all probabilities in [0, 1]")
    else:
        probs = float(p)
    u = _rng(out, generator).random(o.size).reshape(o.shape)
    np.copyto(o, u < probs, casting="unsafe")


@kernel("bernoulli_")
def bernoulli_(out, self, p=0.5, *, generator=None):
    """Fill with 1 with probability p (a number or a tensor of probabilities), else 0."""
    _bernoulli_into("bernoulli_", out, p, generator)


@kernel("bernoulli")
def bernoulli(out, self, p=None, *, generator=None):
    """Samples 0/1 with the probabilities in `self` (or the scalar `p`)."""
    _bernoulli_into("bernoulli", out, self if p is None else p, generator)
