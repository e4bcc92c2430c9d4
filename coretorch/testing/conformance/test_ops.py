"""Conformance tests over the OpInfo database, run on every selected device (``device``
fixture of coretorch's pytest plugin). Test ids read ``test_forward[cpu-add-float32]``."""

from __future__ import annotations

import pytest

import coretorch
import coretorch.autograd  # noqa: F401  (gradcheck lives there once the engine exists)
from coretorch.ops import REGISTRY
from coretorch.testing.conformance.checks import (
    check_autograd,
    check_error_inputs,
    check_forward,
    check_inplace,
    check_meta_refuses_alike,
    check_out,
    check_overlapping_writes,
    check_torch_parity,
)
from coretorch.testing.opinfo import EXCLUDED, OP_DB

__all__ = [
    "pytestmark",
    "test_every_declared_op_has_an_opinfo",
    "test_opinfo_entries_name_declared_ops",
    "test_forward",
    "test_inplace",
    "test_out",
    "test_overlapping_writes",
    "test_torch_parity",
    "test_gradcheck",
    "test_error_inputs",
    "test_meta_refuses_alike",
]

# the per-op table already says which ops ran through the CPU fallback
pytestmark = pytest.mark.filterwarnings("ignore::coretorch.ops.cpu_fallback.CPUFallbackWarning")


def _params(select=lambda o: True, dtypes=None):
    out = []
    for o in OP_DB:
        if not select(o):
            continue
        for d in dtypes(o) if dtypes else o.dtypes:
            out.append(pytest.param(o, d, id=f"{o.name}-{d.name}"))
    return out


def _declared(o) -> bool:
    return o.name in REGISTRY


def test_every_declared_op_has_an_opinfo():
    """A declared op without an OpInfo (and not in the commented EXCLUDED list) fails here."""
    covered = {o.name for o in OP_DB}
    missing = sorted(set(REGISTRY) - covered - set(EXCLUDED))
    assert not missing, (
        f"declared ops without an OpInfo entry in coretorch/testing/opdb "
        f"(add one, or an EXCLUDED entry saying why): {missing}"
    )


def test_opinfo_entries_name_declared_ops():
    """Every OpInfo names a declared op (a typo or a not-yet-declared op fails here)."""
    undeclared = sorted(o.name for o in OP_DB if o.name not in REGISTRY)
    assert not undeclared, f"OpInfo entries for ops that are not declared: {undeclared}"


@pytest.mark.parametrize("opinfo,dtype", _params())
def test_forward(opinfo, dtype, device):
    """The op's outputs match its reference on every sample."""
    check_forward(opinfo, dtype, device)


@pytest.mark.parametrize(
    "opinfo,dtype", _params(lambda o: _declared(o) and not o.random and o.supports_inplace)
)
def test_inplace(opinfo, dtype, device):
    """The in-place variant writes the out-of-place result into self."""
    check_inplace(opinfo, dtype, device)


@pytest.mark.parametrize(
    "opinfo,dtype", _params(lambda o: _declared(o) and not o.random and o.supports_out)
)
def test_out(opinfo, dtype, device):
    """The out= variant writes the result into out and returns it."""
    check_out(opinfo, dtype, device)


@pytest.mark.parametrize(
    "opinfo,dtype",
    _params(
        lambda o: _declared(o) and (o.supports_inplace or o.supports_out or o.decl.inplace_only),
        lambda o: o.dtypes[:1],
    ),
)
def test_overlapping_writes(opinfo, dtype, device):
    """In-place and out= variants refuse outputs that overlap their inputs, as PyTorch."""
    check_overlapping_writes(opinfo, dtype, device)


def _has_torch_ref(o) -> bool:
    try:
        import torch  # noqa: F401
    except ImportError:
        return False
    return not o.random and o.torch_ref is not None


@pytest.mark.parametrize("opinfo,dtype", _params(lambda o: _declared(o) and _has_torch_ref(o)))
def test_torch_parity(opinfo, dtype, data_device):
    """The op matches PyTorch's on the same samples (skipped without torch)."""
    check_torch_parity(opinfo, dtype, data_device)


@pytest.mark.parametrize(
    "opinfo,dtype",
    _params(
        lambda o: _declared(o) and o.supports_autograd,
        lambda o: [d for d in o.grad_dtypes if d in o.dtypes],
    ),
)
def test_gradcheck(opinfo, dtype, data_device):
    """Gradients match finite differences in the op's gradient dtypes."""
    gradcheck = getattr(coretorch.autograd, "gradcheck", None)
    if gradcheck is None:
        pytest.skip("coretorch.autograd.gradcheck does not exist yet")
    check_autograd(opinfo, dtype, data_device, gradcheck)


@pytest.mark.parametrize(
    "opinfo,dtype", _params(lambda o: _declared(o) and o.error_inputs_func is not None)
)
def test_error_inputs(opinfo, dtype, device):
    """Every error sample raises the expected error type and message."""
    check_error_inputs(opinfo, dtype, device)


@pytest.mark.parametrize("opinfo,dtype", _params(lambda o: _declared(o) and not o.random))
def test_meta_refuses_alike(opinfo, dtype, data_device):
    """The meta device refuses the same error samples as a data device."""
    from coretorch.device import device_types

    if "meta" not in device_types():
        pytest.skip("the meta backend is not loaded: nothing to compare with")
    check_meta_refuses_alike(opinfo, dtype, data_device)
