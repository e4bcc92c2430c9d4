"""Writes into a tensor whose elements share memory (a stride-0 dim of size > 1, as `expand`
makes) raise PyTorch's RuntimeError, for in-place ops and ``out=``; fills, views with distinct
elements and size-1 broadcasts are still written. Every op's in-place and ``out=`` forms are
checked by the conformance suite (``test_overlapping_writes``); these are the named cases."""

from __future__ import annotations

import pytest

import coretorch as ct

_MESSAGE = (
    "unsupported operation: more than one element of the written-to tensor refers to a "
    "single memory location. Please clone() the tensor before performing the operation."
)


def _expanded(m, device="cpu"):
    return m.zeros(1, device=device).expand(3)


REFUSED = {
    "add_": lambda m, e: e.add_(1),
    "iadd": lambda m, e: e.__iadd__(m.ones(3)),
    "mul_": lambda m, e: e.mul_(2),
    "exp_": lambda m, e: e.exp_(),
    "relu_": lambda m, e: e.relu_(),
    "clamp_": lambda m, e: e.clamp_(0, 1),
    "lerp_": lambda m, e: e.lerp_(m.ones(3), 0.5),
    "copy_": lambda m, e: e.copy_(m.ones(3)),
    "uniform_": lambda m, e: e.uniform_(),
    "scatter_": lambda m, e: e.scatter_(0, m.tensor([0]), m.tensor([1.0])),
    "index_add_": lambda m, e: e.index_add_(0, m.tensor([0]), m.tensor([1.0])),
    "out_add": lambda m, e: m.add(m.ones(3), 1, out=e),
    "out_exp": lambda m, e: m.exp(m.ones(3), out=e),
    "out_cat": lambda m, e: m.cat([m.ones(1), m.ones(2)], out=e),
    "out_clamp": lambda m, e: m.clamp(m.ones(3), 0, 1, out=e),
    "out_cumsum": lambda m, e: m.cumsum(m.ones(3), 0, out=e),
    "out_sort": lambda m, e: m.sort(m.ones(3), out=(e, m.zeros(3, dtype=m.int64))),
}

ALLOWED = {
    "fill_": lambda m, e: e.fill_(1.0),
    "zero_": lambda m, e: e.zero_(),
    "setitem_basic": lambda m, e: e.__setitem__(0, 1.0),
    "diagonal_view": lambda m, e: m.zeros(3, 3).diagonal().add_(1),
    "size_one_stride_zero": lambda m, e: m.zeros(1).expand(1).add_(1),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_write_into_expanded_tensor_raises(name, device):
    with ct.device(device), pytest.raises(RuntimeError) as info:
        REFUSED[name](ct, _expanded(ct, device))
    assert str(info.value) == _MESSAGE


def test_two_dimensional_expand_raises(device):
    e = ct.zeros(2, 1, device=device).expand(2, 3)
    with pytest.raises(RuntimeError, match="refers to a single memory location"):
        e.add_(1)
    with pytest.raises(RuntimeError, match="refers to a single memory location"):
        ct.mm(ct.ones(2, 2, device=device), ct.ones(2, 3, device=device), out=e)


@pytest.mark.parametrize("name", sorted(ALLOWED))
def test_writes_pytorch_accepts(name, device):
    with ct.device(device):
        ALLOWED[name](ct, _expanded(ct, device))


def test_refused_and_allowed_as_pytorch():
    torch = pytest.importorskip("torch")
    for name, call in REFUSED.items():
        with pytest.raises(RuntimeError, match="refers to a single memory location"):
            call(torch, _expanded(torch))
    for call in ALLOWED.values():
        call(torch, _expanded(torch))
