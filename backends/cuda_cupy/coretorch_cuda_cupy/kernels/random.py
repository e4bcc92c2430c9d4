"""Random kernels: uniform_, normal_, random_, bernoulli_, bernoulli.

Numbers are drawn on the device by a RandomState seeded, per call, from the coretorch
`Generator` (``generator=`` or the device's default generator): `coretorch.cuda.manual_seed`,
`coretorch.manual_seed` and generator states make runs repeatable, while the values differ from
the cpu device's (as PyTorch's cuda and cpu streams differ).
"""
from __future__ import annotations

import numpy as np

from coretorch.random import generator_for

from ..registry import kernel
from ._common import KIT, T, arr, write, xp



def _state(out, generator):
    g = generator if generator is not None else generator_for(out._device)
    return xp.random.RandomState(int(g.numpy.integers(0, 1 << 32)))



@kernel("uniform_")
def uniform_(out, self, from_=0.0, to=1.0, *, generator=None):
    """Fill with samples from U[from_, to)."""
    o = arr(out)
    c = KIT.float_draw_dtype("uniform_", out)
    u = _state(out, generator).random_sample(o.shape).astype(c)
    if from_ != 0.0 or to != 1.0:
        u = c.type(from_) + u * c.type(to - from_)
    write(out, u)


@kernel("normal_")
def normal_(out, self, mean=0.0, std=1.0, *, generator=None):
    """Fill with samples from N(mean, std**2)."""
    o = arr(out)
    c = KIT.float_draw_dtype("normal_", out)
    z = _state(out, generator).standard_normal(o.shape).astype(c)
    if mean != 0.0 or std != 1.0:
        z = c.type(mean) + z * c.type(std)
    write(out, z)


@kernel("random_")
def random_(out, self, from_=0, to=None, *, generator=None):
    """Fill with integers drawn uniformly from [from_, to)."""
    o = arr(out)
    if o.size == 0:
        return
    write(out, _state(out, generator).randint(from_, to, size=o.shape, dtype=np.int64))


def _bernoulli_into(name: str, out, p, generator) -> None:
    o = arr(out)
    if isinstance(p, T):  # a scalar p was range-checked by the meta rule; a tensor is data
        probs = arr(p)
        if p.numel() and not bool(xp.logical_and(probs >= 0, probs <= 1).all()):
            raise RuntimeError(f"{name}(): expected all probabilities in [0, 1]")
    else:
        probs = float(p)
    u = _state(out, generator).random_sample(o.shape)
    write(out, u < probs)


@kernel("bernoulli_")
def bernoulli_(out, self, p=0.5, *, generator=None):
    """Fill with 1 with probability p (a number or a tensor of probabilities), else 0."""
    _bernoulli_into("bernoulli_", out, p, generator)


@kernel("bernoulli")
def bernoulli(out, self, p=None, *, generator=None):
    """Samples 0/1 with the probabilities in `self` (or the scalar `p`)."""
    _bernoulli_into("bernoulli", out, self if p is None else p, generator)
