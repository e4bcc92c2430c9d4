"""Lazy layers infer their input size on the first call, then become the plain layer with
PyTorch's parameter shapes and state_dict keys."""

from __future__ import annotations

import pytest

import coretorch as ct
import coretorch.nn as nn

CASES = [
    ("LazyLinear", (4,), (2, 3)),
    ("LazyConv1d", (6, 3), (3, 7)),
    ("LazyConv2d", (6, 3), (1, 3, 5, 5)),
    ("LazyConv3d", (4, 2), (1, 2, 4, 4, 4)),
    ("LazyConvTranspose1d", (6, 3), (1, 3, 4)),
    ("LazyConvTranspose2d", (6, 3), (1, 3, 4, 4)),
    ("LazyConvTranspose3d", (2, 2), (1, 3, 3, 3, 3)),
    ("LazyBatchNorm1d", (), (4, 3)),
    ("LazyBatchNorm2d", (), (2, 3, 4, 4)),
    ("LazyBatchNorm3d", (), (2, 3, 2, 2, 2)),
    ("LazyInstanceNorm1d", (), (2, 3, 5)),
    ("LazyInstanceNorm2d", (), (2, 3, 4, 4)),
    ("LazyInstanceNorm3d", (), (2, 3, 2, 2, 2)),
]


@pytest.mark.parametrize("name,args,shape", CASES, ids=[c[0] for c in CASES])
def test_lazy_layer_matches_torch(name, args, shape):
    torch = pytest.importorskip("torch")
    ours, theirs = getattr(nn, name)(*args), getattr(torch.nn, name)(*args)
    assert ours.has_uninitialized_params() == theirs.has_uninitialized_params()
    y = ours(ct.randn(*shape))
    ty = theirs(torch.randn(*shape))
    assert type(ours).__name__ == type(theirs).__name__ == name[4:]
    assert tuple(y.shape) == tuple(ty.shape)
    assert {k: tuple(v.shape) for k, v in ours.state_dict().items()} == {
        k: tuple(v.shape) for k, v in theirs.state_dict().items()
    }
    assert repr(ours) == repr(theirs)


def test_uninitialized_parameter_refuses_shape_and_trains_after_first_call():
    m = nn.LazyLinear(3)
    assert isinstance(m.weight, nn.UninitializedParameter)
    with pytest.raises(RuntimeError, match="Can't access the shape of an uninitialized"):
        m.weight.shape
    model = nn.Sequential(nn.LazyLinear(8), nn.ReLU(), nn.LazyLinear(2))
    model(ct.randn(5, 3))
    assert sum(p.numel() for p in model.parameters()) == 3 * 8 + 8 + 8 * 2 + 2
    before = model[0].weight.detach().clone()
    opt = ct.optim.SGD(model.parameters(), lr=0.1)
    model(ct.randn(5, 3)).sum().backward()
    opt.step()
    assert not bool((model[0].weight.detach() == before).all())
    assert type(model[0].weight) is nn.Parameter


def test_lazy_batchnorm_initializes_running_stats():
    bn = nn.LazyBatchNorm2d()
    bn(ct.randn(4, 3, 2, 2))
    assert tuple(bn.running_var.shape) == (3,) and float(bn.num_batches_tracked) == 1
    assert type(bn.running_mean) is ct.Tensor


def test_buffer_assignment_registers_buffers():
    m = nn.Module()
    m.stats = nn.Buffer(ct.ones(3))
    m.scratch = nn.Buffer(ct.zeros(2), persistent=False)
    assert list(m.state_dict()) == ["stats"]
    assert [n for n, _ in m.named_buffers()] == ["stats", "scratch"]
    assert isinstance(m.stats, nn.Buffer) and m.stats.persistent
    assert not m.scratch.persistent and not list(m.parameters())
    m.stats = ct.full((3,), 2.0)  # a plain tensor replaces a registered buffer
    assert float(m.state_dict()["stats"].sum()) == 6.0
    torch = pytest.importorskip("torch")
    tm = torch.nn.Module()
    tm.stats = torch.nn.Buffer(torch.ones(3))
    tm.scratch = torch.nn.Buffer(torch.zeros(2), persistent=False)
    assert list(tm.state_dict()) == ["stats"]


def test_deprecated_container():
    with pytest.warns(UserWarning, match="nn.Container is deprecated"):
        c = nn.Container(a=nn.Linear(2, 3), b=nn.ReLU())
    assert [n for n, _ in c.named_children()] == ["a", "b"]
    assert list(c.state_dict()) == ["a.weight", "a.bias"]
