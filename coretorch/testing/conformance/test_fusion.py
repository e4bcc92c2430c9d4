"""Conformance of a backend's elementwise fusion (``DeviceType.extras["fuse"]``): every op with a
scalar formula, fused in a chain, equals the same chain run eagerly, on the op's OpInfo samples.

Each sample becomes the chain ``x' = x * True`` for every tensor operand (so the op is a middle
link, reading values the kernel computed, not loaded), ``r = op(x', ...)``, ``s = r * r``, with
both `r` and `s` written out. Values are compared within the op's tolerances for the dtype (NaN
equal to NaN); integer and bool results exactly.
"""

from __future__ import annotations

import pytest

import coretorch
from coretorch import dtypes as dt
from coretorch.compile.fusion import (
    ChainBuilder,
    FusionError,
    compile_chain,
    eager_chain,
)
from coretorch.device import get_device_type
from coretorch.ops import REGISTRY, primitives
from coretorch.ops.scalar_formulas import FORMULAS, NOT_FUSED
from coretorch.testing.comparison import assert_close
from coretorch.testing.opinfo import OP_DB
from coretorch.testing.trees import is_tensor

__all__ = ["test_every_elementwise_primitive_has_a_formula", "test_fused_chain_matches_eager"]

_ELEMENTWISE_FAMILIES = ("unary", "binary", "ternary", "copy", "fill")
# the dtypes a fused loop computes in (half precision stays unfused)
_FUSED_DTYPES = (dt.bool, dt.uint8, dt.int8, dt.int16, dt.int32, dt.int64, dt.float32, dt.float64)


def test_every_elementwise_primitive_has_a_formula():
    """Each elementwise primitive has a scalar formula, or a reason in NOT_FUSED."""
    elementwise = {n for n in primitives() if REGISTRY[n].family in _ELEMENTWISE_FAMILIES}
    missing = sorted(elementwise - set(FORMULAS) - set(NOT_FUSED))
    assert not missing, f"elementwise primitives without a scalar formula: {missing}"
    assert not set(FORMULAS) & set(NOT_FUSED)


def _params():
    return [
        pytest.param(o, d, id=f"{o.name}-{d.name}")
        for o in OP_DB
        if o.name in FORMULAS
        for d in o.dtypes
        if d in _FUSED_DTYPES
    ]


def _chain_of(op: str, sample):
    """The sample's chain (see the module docstring) and its input tensors."""
    b = ChainBuilder()
    ins = []

    def link(x):
        if not is_tensor(x):
            return x
        ins.append(x)
        return b.call("mul", b.input(x.shape, x.dtype), True)

    args = [link(a) for a in sample.all_args()]
    kwargs = {k: link(v) for k, v in sample.kwargs.items()}
    r = b.call(op, *args, **kwargs)
    return b.chain([r, b.call("mul", r, r)]), ins


@pytest.mark.parametrize("opinfo,dtype", _params())
def test_fused_chain_matches_eager(opinfo, dtype, data_device):
    """The fused chain of each sample equals the chain run op by op."""
    entry = get_device_type(data_device)
    if entry.extras.get("fuse") is None:
        pytest.skip(f"{entry.name} offers no extras['fuse']")
    rtol, atol = opinfo.tolerances(dtype)
    fused, failures = 0, []
    for i, sample in enumerate(opinfo.sample_inputs(data_device, dtype)):
        chain, ins = _chain_of(opinfo.name, sample)
        try:
            kernel = compile_chain(chain, entry.name)
        except FusionError:
            continue  # the formula declines these arguments (integer division, ...)
        fused += 1
        expected = eager_chain(chain, ins)
        outs = [coretorch.empty(e.shape, dtype=e.dtype, device=data_device) for e in expected]
        kernel(outs, ins)
        try:
            assert_close(outs, expected, rtol=rtol, atol=atol, equal_nan=True)
        except AssertionError as e:
            failures.append(f"sample {i} {sample!r} ({kernel!r}):\n{e}")
    if not fused:
        pytest.skip(f"no sample of {opinfo.name} fuses for {dtype.name}")
    assert not failures, "\n".join(failures[:6])
