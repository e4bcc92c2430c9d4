"""Conformance of the optional hooks a device type offers in ``DeviceType.extras`` (checked
against numpy on the values `read_numpy` gives), run on every selected device with data."""

from __future__ import annotations

import numpy as np
import pytest

import coretorch
from coretorch.device import get_device_type

__all__ = ["test_all_finite_agrees_with_numpy"]

_SHAPES = [(), (0,), (7,), (33, 65), (3, 4, 5), (70_000,)]


def _tensors(device, dtype):
    rng = np.random.default_rng(0)
    for shape in _SHAPES:
        base = rng.standard_normal(shape).astype(dtype.numpy)
        yield shape, base
        for bad in (np.nan, np.inf, -np.inf):
            for pos in {0, base.size // 2, base.size - 1} if base.size else ():
                a = base.copy()
                a.flat[pos] = bad
                yield shape, a


@pytest.mark.parametrize(
    "dtype",
    [coretorch.float16, coretorch.bfloat16, coretorch.float32, coretorch.float64],
    ids=lambda d: d.name,
)
def test_all_finite_agrees_with_numpy(data_device, dtype):
    """``extras["all_finite"](t)`` (the anomaly detector's check) says whether `t` holds no NaN
    and no ±Inf, on contiguous, transposed and strided tensors alike."""
    entry = get_device_type(data_device)
    all_finite = entry.extras.get("all_finite")
    if all_finite is None:
        pytest.skip(f"{entry.name} offers no extras['all_finite'] (the detector uses numpy)")
    for shape, a in _tensors(data_device, dtype):
        t = coretorch.from_numpy(a).to(data_device)
        views = [t]
        if t.dim() >= 2:
            views += [t.transpose(0, 1), t[:, ::2]]
        for v in views:
            expected = bool(np.isfinite(entry.read_numpy(v)).all())
            assert all_finite(v) is expected, (
                f"{entry.name}: all_finite gave {not expected} for a {dtype.name} tensor of shape "
                f"{tuple(v.shape)} (strides {v.stride()}) whose values are "
                f"{'all finite' if expected else 'not all finite'}"
            )
