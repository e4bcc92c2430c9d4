"""Random draws of the cpu device for the backend kit's random kernels
(`coretorch.backend_kit.random`: uniform_, normal_, random_).

Numbers come from the `coretorch.random.Generator` passed as ``generator=`` (or the cpu default
generator), whose numpy PCG64 stream makes a seed give the same values on every run.
"""
from __future__ import annotations

import numpy as np

from coretorch.backend_kit.random import register_draws
from coretorch.random import generator_for

from ..numpy_view import as_numpy

_I64 = np.dtype(np.int64)


def _rng(out, generator):
    return (generator if generator is not None else generator_for(out._device)).numpy


def _uniform(out, generator, dtype):
    o = as_numpy(out)
    return _rng(out, generator).random(o.size, dtype=dtype).reshape(o.shape)


def _normal(out, generator, dtype):
    o = as_numpy(out)
    return _rng(out, generator).standard_normal(o.size, dtype=dtype).reshape(o.shape)


def _integers(out, generator, low, high):
    o = as_numpy(out)
    return _rng(out, generator).integers(low, high, o.size, dtype=_I64).reshape(o.shape)


register_draws("cpu", _uniform, _normal, _integers)
