"""Every factory honours ``requires_grad=True``: the result is a leaf that requires grad and
collects gradients, on every device; integer results refuse it as PyTorch does. The table is
checked against the op registry, so a new factory must be added here."""

from __future__ import annotations

import pytest

import coretorch as ct
from coretorch.ops import REGISTRY


def _src(device):
    return ct.zeros(2, 3, device=device)


# name -> call(device, requires_grad) giving a float tensor
FACTORIES = {
    "arange": lambda d, rg: ct.arange(3.0, device=d, requires_grad=rg),
    "linspace": lambda d, rg: ct.linspace(0, 1, 3, device=d, requires_grad=rg),
    "logspace": lambda d, rg: ct.logspace(0, 1, 3, device=d, requires_grad=rg),
    "full": lambda d, rg: ct.full((2,), 1.5, device=d, requires_grad=rg),
    "zeros": lambda d, rg: ct.zeros(2, device=d, requires_grad=rg),
    "ones": lambda d, rg: ct.ones(2, 2, device=d, requires_grad=rg),
    "empty": lambda d, rg: ct.empty(2, device=d, requires_grad=rg),
    "empty_strided": lambda d, rg: ct.empty_strided((2, 2), (1, 2), device=d, requires_grad=rg),
    "eye": lambda d, rg: ct.eye(2, 3, device=d, requires_grad=rg),
    "fft_fftfreq": lambda d, rg: ct.fft.fftfreq(4, device=d, requires_grad=rg),
    "fft_rfftfreq": lambda d, rg: ct.fft.rfftfreq(4, device=d, requires_grad=rg),
    "rand": lambda d, rg: ct.rand(2, device=d, requires_grad=rg),
    "randn": lambda d, rg: ct.randn(2, device=d, requires_grad=rg),
    "randint": lambda d, rg: ct.randint(0, 5, (2,), dtype=ct.float32, device=d, requires_grad=rg),
    "randperm": lambda d, rg: ct.randperm(3, dtype=ct.float32, device=d, requires_grad=rg),
    "zeros_like": lambda d, rg: ct.zeros_like(_src(d), requires_grad=rg),
    "ones_like": lambda d, rg: ct.ones_like(_src(d), requires_grad=rg),
    "empty_like": lambda d, rg: ct.empty_like(_src(d), requires_grad=rg),
    "full_like": lambda d, rg: ct.full_like(_src(d), 2.0, requires_grad=rg),
    "rand_like": lambda d, rg: ct.rand_like(_src(d), requires_grad=rg),
    "randn_like": lambda d, rg: ct.randn_like(_src(d), requires_grad=rg),
    "randint_like": lambda d, rg: ct.randint_like(_src(d), 5, requires_grad=rg),
    "scalar_tensor": lambda d, rg: ct.scalar_tensor(1.5, device=d, requires_grad=rg),
    "tril_indices": lambda d, rg: ct.tril_indices(
        3, 3, dtype=ct.float32, device=d, requires_grad=rg
    ),
    "triu_indices": lambda d, rg: ct.triu_indices(
        3, 3, dtype=ct.float32, device=d, requires_grad=rg
    ),
}

# factories that are not declared ops (Python data, Tensor.new_*)
OTHER = {
    "tensor": lambda d, rg: ct.tensor([1.0, 2.0], device=d, requires_grad=rg),
    "new_zeros": lambda d, rg: _src(d).new_zeros(2, requires_grad=rg),
    "new_ones": lambda d, rg: _src(d).new_ones(2, requires_grad=rg),
    "new_full": lambda d, rg: _src(d).new_full((2,), 3.0, requires_grad=rg),
    "new_empty": lambda d, rg: _src(d).new_empty((2,), requires_grad=rg),
    "new_tensor": lambda d, rg: _src(d).new_tensor([1.0], requires_grad=rg),
}
ALL = {**FACTORIES, **OTHER}


def test_every_declared_factory_is_covered():
    declared = {n for n, d in REGISTRY.items() if d.schema and "requires_grad" in d.schema.names}
    assert declared == set(FACTORIES)


@pytest.mark.parametrize("name", sorted(ALL))
def test_factory_honours_requires_grad(name, device):
    t = ALL[name](device, True)
    assert t.requires_grad and t.is_leaf and t.grad_fn is None
    assert t.device.type == device
    assert not ALL[name](device, False).requires_grad


@pytest.mark.parametrize("name", sorted(ALL))
def test_factory_result_collects_gradients(name, data_device):
    t = ALL[name](data_device, True)
    (t * 2).sum().backward()
    assert t.grad is not None and t.grad.tolist() == ct.full_like(t, 2.0).tolist()


@pytest.mark.parametrize(
    "call",
    [
        lambda: ct.arange(3, requires_grad=True),
        lambda: ct.zeros(2, dtype=ct.int64, requires_grad=True),
        lambda: ct.full((2,), 1, requires_grad=True),
        lambda: ct.randint(0, 5, (2,), requires_grad=True),
        lambda: ct.tensor([1, 2], requires_grad=True),
    ],
    ids=["arange", "zeros", "full", "randint", "tensor"],
)
def test_integer_factories_refuse_requires_grad(call):
    with pytest.raises(RuntimeError, match="floating point"):
        call()
