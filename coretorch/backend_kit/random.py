"""Random kernels on the array API: uniform_, normal_, random_ (bernoulli and the random
factories are composites of these in `coretorch.ops.factories`).

The numbers come from three draw functions, each taking ``(out, generator)`` first
(``generator`` is the op's ``generator=`` argument, or None for the device's default) and
returning an array of out's shape in the backend's array module:

    uniform(out, generator, dtype)       samples of U[0, 1) in numpy dtype `dtype`
    normal(out, generator, dtype)        samples of N(0, 1) in `dtype`
    integers(out, generator, low, high)  int64 samples of [low, high)

By default they draw on the host from the `coretorch.random.Generator`'s numpy PCG64 stream
(a seed gives the same values on every run and on every device that uses them) and hand the
values to the array module (`ArrayKit.from_host`). A backend with its own generator (the cuda
backend draws on the device) registers its draws with `register_draws`.
"""

from __future__ import annotations

import math
from typing import Callable, NamedTuple

import numpy as np

from coretorch.random import generator_for
from coretorch.tensor.impl import shape_numel

from .array_kit import kit_of

__all__ = ["KERNELS", "Draws", "register_draws", "draws_of", "HOST_DRAWS"]

_F32, _F64, _I64 = np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.int64)


class Draws(NamedTuple):
    """The random draws of a device type (see the module docstring)."""

    uniform: Callable
    normal: Callable
    integers: Callable


def _host_rng(out, generator) -> np.random.Generator:
    return (generator if generator is not None else generator_for(out._device)).numpy


def _host_uniform(out, generator, dtype):
    u = _host_rng(out, generator).random(shape_numel(out._shape), dtype=dtype)
    return kit_of(out).from_host(u.reshape(out._shape))


def _host_normal(out, generator, dtype):
    z = _host_rng(out, generator).standard_normal(shape_numel(out._shape), dtype=dtype)
    return kit_of(out).from_host(z.reshape(out._shape))


def _host_integers(out, generator, low, high):
    i = _host_rng(out, generator).integers(low, high, shape_numel(out._shape), dtype=_I64)
    return kit_of(out).from_host(i.reshape(out._shape))


HOST_DRAWS = Draws(_host_uniform, _host_normal, _host_integers)
_DRAWS: dict[str, Draws] = {}


def register_draws(
    device_type: str, uniform: Callable, normal: Callable, integers: Callable
) -> Draws:
    """Make these the draws of the random kernels for tensors of `device_type` (instead of
    `HOST_DRAWS`)."""
    d = _DRAWS[device_type] = Draws(uniform, normal, integers)
    return d


def draws_of(t) -> Draws:
    """The draws for `t`'s device type: the registered ones, else `HOST_DRAWS`."""
    return _DRAWS.get(t._device.type, HOST_DRAWS)


def _draw_dtype(out) -> np.dtype:
    """Floats are drawn in float32 up to 4-byte dtypes (float16 is drawn in float32 and
    rounded), else float64 (the meta rules allow floating dtypes only)."""
    return _F32 if out._dtype.to_real().itemsize <= 4 else _F64


def _draw(draw, out, generator, c):
    """One draw per element; a complex `out` gets independent real and imaginary parts."""
    z = draw(out, generator, c)
    return z + 1j * draw(out, generator, c) if out._dtype.is_complex else z


def uniform_(out, self, from_, to, generator):
    """Fill with samples from U[from_, to) (each part of a complex value, as PyTorch)."""
    c = _draw_dtype(out)
    u = _draw(draws_of(out).uniform, out, generator, c)
    if from_ != 0.0 or to != 1.0:
        u = c.type(from_) * (1 + 1j if out._dtype.is_complex else 1) + u * c.type(to - from_)
    kit_of(out).write(out, u)


def normal_(out, self, mean, std, generator):
    """Fill with samples from N(mean, std**2); a complex value's parts each have variance
    std**2 / 2 (PyTorch's complex normal)."""
    c = _draw_dtype(out)
    z = _draw(draws_of(out).normal, out, generator, c)
    if out._dtype.is_complex:
        std = std / math.sqrt(2.0)
    if mean != 0.0 or std != 1.0:
        z = c.type(mean) + z * c.type(std)
    kit_of(out).write(out, z)


def random_(out, self, from_, to, generator):
    """Fill with integers drawn uniformly from [from_, to)."""
    kit_of(out).write(out, draws_of(out).integers(out, generator, from_, to))


KERNELS = {"uniform_": uniform_, "normal_": normal_, "random_": random_}
