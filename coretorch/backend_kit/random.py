"""Random kernels on the array API: uniform_, normal_, random_, bernoulli_ and bernoulli.

Where the numbers come from is the backend's: it passes three draw functions, each taking
``(out, generator)`` first (``generator`` is the op's ``generator=`` argument or None for the
device's default) and returning an array of out's shape:

    uniform(out, generator, dtype)       samples of U[0, 1) in numpy dtype `dtype`
    normal(out, generator, dtype)        samples of N(0, 1) in `dtype`
    integers(out, generator, low, high)  int64 samples of [low, high)
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from coretorch.tensor.impl import TensorImpl as _T

from .array_kit import ArrayKit

__all__ = ["random_kernels"]

_F64 = np.dtype(np.float64)


def random_kernels(kit: ArrayKit, uniform: Callable, normal: Callable,
                   integers: Callable) -> dict[str, Callable]:
    """The random kernels over `kit`'s array module and the backend's draws, by op name."""
    xp, arr, write = kit.xp, kit.arr, kit.write

    def uniform_(out, self, from_=0.0, to=1.0, *, generator=None):
        """Fill with samples from U[from_, to)."""
        c = kit.float_draw_dtype("uniform_", out)
        u = uniform(out, generator, c)
        if from_ != 0.0 or to != 1.0:
            u = c.type(from_) + u * c.type(to - from_)
        write(out, u)

    def normal_(out, self, mean=0.0, std=1.0, *, generator=None):
        """Fill with samples from N(mean, std**2)."""
        c = kit.float_draw_dtype("normal_", out)
        z = normal(out, generator, c)
        if mean != 0.0 or std != 1.0:
            z = c.type(mean) + z * c.type(std)
        write(out, z)

    def random_(out, self, from_=0, to=None, *, generator=None):
        """Fill with integers drawn uniformly from [from_, to)."""
        write(out, integers(out, generator, from_, to))

    def bernoulli_into(name: str, out, p, generator) -> None:
        if isinstance(p, _T):  # a scalar p was range-checked by the meta rule; a tensor is data
            probs = arr(p)
            if p.numel() and not bool(xp.logical_and(probs >= 0, probs <= 1).all()):
                raise RuntimeError(f"{name}(): expected all probabilities in [0, 1]")
        else:
            probs = float(p)
        write(out, uniform(out, generator, _F64) < probs)

    def bernoulli_(out, self, p=0.5, *, generator=None):
        """Fill with 1 with probability p (a number or a tensor of probabilities), else 0."""
        bernoulli_into("bernoulli_", out, p, generator)

    def bernoulli(out, self, p=None, *, generator=None):
        """Samples 0/1 with the probabilities in `self` (or the scalar `p`)."""
        bernoulli_into("bernoulli", out, self if p is None else p, generator)

    return {"uniform_": uniform_, "normal_": normal_, "random_": random_,
            "bernoulli_": bernoulli_, "bernoulli": bernoulli}
