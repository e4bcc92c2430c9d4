"""Random kernels on the array API: uniform_, normal_, random_ (bernoulli and the random
factories are composites of these in `coretorch.ops.factories`).

Where the numbers come from is the backend's: it registers three draw functions for its device
type with `register_draws`, each taking ``(out, generator)`` first (``generator`` is the op's
``generator=`` argument or None for the device's default) and returning an array of out's
shape:

    uniform(out, generator, dtype)       samples of U[0, 1) in numpy dtype `dtype`
    normal(out, generator, dtype)        samples of N(0, 1) in `dtype`
    integers(out, generator, low, high)  int64 samples of [low, high)
"""
from __future__ import annotations

from typing import Callable, NamedTuple

import numpy as np

from .array_kit import kit_of

__all__ = ["KERNELS", "Draws", "register_draws", "draws_of"]

_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)


class Draws(NamedTuple):
    """A backend's random draws (see the module docstring)."""

    uniform: Callable
    normal: Callable
    integers: Callable


_DRAWS: dict[str, Draws] = {}


def register_draws(device_type: str, uniform: Callable, normal: Callable,
                   integers: Callable) -> Draws:
    """Make these the draws of the random kernels for tensors of `device_type`."""
    d = _DRAWS[device_type] = Draws(uniform, normal, integers)
    return d


def draws_of(t) -> Draws:
    """The draws registered for `t`'s device type."""
    try:
        return _DRAWS[t._device.type]
    except KeyError:
        raise RuntimeError(f"no random draws are registered for device type "
                           f"{t._device.type!r}: a backend that uses "
                           f"coretorch.backend_kit.random kernels must call "
                           f"register_draws({t._device.type!r}, uniform, normal, integers)") \
            from None


def _draw_dtype(out) -> np.dtype:
    """Floats are drawn in float32 up to 4-byte dtypes (float16 is drawn in float32 and
    rounded), else float64 (the meta rules allow floating dtypes only)."""
    return _F32 if out._dtype.itemsize <= 4 else _F64


def uniform_(out, self, from_, to, generator):
    """Fill with samples from U[from_, to)."""
    c = _draw_dtype(out)
    u = draws_of(out).uniform(out, generator, c)
    if from_ != 0.0 or to != 1.0:
        u = c.type(from_) + u * c.type(to - from_)
    kit_of(out).write(out, u)


def normal_(out, self, mean, std, generator):
    """Fill with samples from N(mean, std**2)."""
    c = _draw_dtype(out)
    z = draws_of(out).normal(out, generator, c)
    if mean != 0.0 or std != 1.0:
        z = c.type(mean) + z * c.type(std)
    kit_of(out).write(out, z)


def random_(out, self, from_, to, generator):
    """Fill with integers drawn uniformly from [from_, to)."""
    kit_of(out).write(out, draws_of(out).integers(out, generator, from_, to))


KERNELS = {"uniform_": uniform_, "normal_": normal_, "random_": random_}
