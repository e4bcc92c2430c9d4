"""Random draws of the cuda device for the backend kit's random kernels
(`coretorch.backend_kit.random`: uniform_, normal_, random_).

Numbers are drawn on the device by a RandomState seeded, per call, from the coretorch
`Generator` (``generator=`` or the device's default generator): `coretorch.cuda.manual_seed`,
`coretorch.manual_seed` and generator states make runs repeatable, while the values differ from
the cpu device's (as PyTorch's cuda and cpu streams differ).
"""

from __future__ import annotations

import numpy as np

from coretorch.backend_kit.random import register_draws
from coretorch.random import generator_for

from ._common import arr, xp

_I64 = np.dtype(np.int64)


def _state(out, generator):
    g = generator if generator is not None else generator_for(out._device)
    return xp.random.RandomState(int(g.numpy.integers(0, 1 << 32)))


def _uniform(out, generator, dtype):
    return _state(out, generator).random_sample(arr(out).shape).astype(dtype, copy=False)


def _normal(out, generator, dtype):
    return _state(out, generator).standard_normal(arr(out).shape).astype(dtype, copy=False)


def _integers(out, generator, low, high):
    shape = arr(out).shape
    if 0 in shape:  # nothing to draw (and no generator state to consume)
        return xp.empty(shape, _I64)
    return _state(out, generator).randint(low, high, size=shape, dtype=_I64)


register_draws("cuda", _uniform, _normal, _integers)
