"""PyTorch's other spellings: op aliases, the top-level layer functions, `normal`, constants
and the small Tensor predicates, each against PyTorch where installed or numpy."""

from __future__ import annotations

import math

import numpy as np
import pytest

import coretorch as ct
import coretorch.nn.functional as F
from coretorch.nn_forms import SAME_AS_FUNCTIONAL
from coretorch.ops.aliases import ALIASES


@pytest.mark.parametrize("alias", sorted(ALIASES))
def test_an_alias_is_its_op(alias):
    op = ALIASES[alias]
    assert getattr(ct, alias) is getattr(ct, op)
    if hasattr(ct.Tensor, op):
        assert getattr(ct.Tensor, alias) is getattr(ct.Tensor, op)
    if hasattr(ct.Tensor, op + "_"):
        assert getattr(ct.Tensor, alias + "_") is getattr(ct.Tensor, op + "_")


@pytest.mark.parametrize("alias", sorted(ALIASES))
def test_aliases_exist_where_pytorch_has_them(alias):
    torch = pytest.importorskip("torch")
    for owner_ct, owner_t in ((ct, torch), (ct.Tensor, torch.Tensor)):
        for name in (alias, alias + "_"):
            if hasattr(owner_t, name):
                assert hasattr(owner_ct, name), f"{owner_ct.__name__}.{name}"


def test_aliases_compute_their_ops():
    x = ct.tensor([-2.0, 0.5, 3.0])
    np.testing.assert_array_equal(ct.clip(x, -1, 1).numpy(), [-1.0, 0.5, 1.0])
    np.testing.assert_allclose(ct.arctan2(x, ct.ones(3)).numpy(), np.arctan2([-2.0, 0.5, 3.0], 1))
    y = x.clone()
    y.negative_()
    np.testing.assert_array_equal(y.numpy(), [2.0, -0.5, -3.0])
    np.testing.assert_array_equal(ct.greater_equal(x, 0.5).numpy(), [False, True, True])
    assert ct.ones(2, 3).swapaxes(0, 1).shape == (3, 2)
    np.testing.assert_array_equal(ct.concatenate([x, x]).numpy(), np.tile([-2.0, 0.5, 3.0], 2))


def _pair(torch, shape, seed):
    a = np.random.default_rng(seed).standard_normal(shape)
    return ct.tensor(a), torch.tensor(a)


def test_top_level_layer_functions_take_pytorchs_arguments():
    torch = pytest.importorskip("torch")
    (x, tx), (w, tw), (b, tb) = (_pair(torch, s, i) for i, s in enumerate([(2, 3, 5), (3,), (3,)]))
    (m, tm), (v, tv) = _pair(torch, (3,), 7), _pair(torch, (3,), 8)
    v, tv = v.abs() + 0.5, tv.abs() + 0.5
    cases = [
        (
            ct.batch_norm(x, w, b, m, v, False, 0.1, 1e-5, True),
            torch.batch_norm(tx, tw, tb, tm, tv, False, 0.1, 1e-5, True),
        ),
        (
            ct.instance_norm(x, w, b, None, None, True, 0.1, 1e-5, True),
            torch.instance_norm(tx, tw, tb, None, None, True, 0.1, 1e-5, True),
        ),
        (
            ct.layer_norm(x, (5,), None, None, 1e-5, True),
            torch.layer_norm(tx, (5,), None, None, 1e-5, True),
        ),
        (ct.group_norm(x, 3, w, b, 1e-5, True), torch.group_norm(tx, 3, tw, tb, 1e-5, True)),
        (ct.dropout(x, 0.5, False), torch.dropout(tx, 0.5, False)),
        (ct.adaptive_max_pool1d(x, 2)[1], torch.adaptive_max_pool1d(tx, 2)[1]),
        (
            ct.pixel_shuffle(ct.arange(16.0).reshape(1, 4, 2, 2), 2),
            torch.pixel_shuffle(torch.arange(16.0).reshape(1, 4, 2, 2), 2),
        ),
        (ct.max_pool1d(x, 2), torch.max_pool1d(tx, 2)),
    ]
    for ours, theirs in cases:
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-10, atol=1e-12)


def test_same_signature_functions_are_the_functional_ones():
    for name in SAME_AS_FUNCTIONAL:
        assert getattr(ct, name) is getattr(F, name)


def test_normal_forms():
    ct.manual_seed(0)
    z = ct.normal(2.0, 3.0, (200_000,), dtype=ct.float64)
    assert z.dtype is ct.float64 and abs(z.mean().item() - 2.0) < 0.05
    assert abs(z.std().item() - 3.0) < 0.05
    mean = ct.tensor([0.0, 10.0], dtype=ct.float64, requires_grad=True)
    std = ct.tensor([1.0, 0.0], dtype=ct.float64, requires_grad=True)
    s = ct.normal(mean, std)
    assert s[1].item() == 10.0  # std 0: the mean itself
    s.sum().backward()  # d/dmean = 1, d/dstd = the standard draw (s - mean) / std
    np.testing.assert_array_equal(mean.grad.numpy(), [1.0, 1.0])
    np.testing.assert_allclose(std.grad[0].item(), s[0].item())
    ct.manual_seed(3)
    a = ct.normal(ct.zeros(4), 1.0)
    ct.manual_seed(3)
    np.testing.assert_array_equal(ct.normal(ct.zeros(4), 1.0).numpy(), a.numpy())
    assert ct.normal(0.0, ct.ones(2, 3)).shape == (2, 3)
    with pytest.raises(RuntimeError, match="std >= 0.0"):
        ct.normal(0.0, -1.0, (2,))
    with pytest.raises(RuntimeError, match="floating point mean"):
        ct.normal(ct.zeros(2, dtype=ct.int64), 1.0)
    with pytest.raises(TypeError, match="size is required"):
        ct.normal(0.0, 1.0)


def test_constants_and_predicates():
    assert (ct.pi, ct.e, ct.inf) == (math.pi, math.e, math.inf) and math.isnan(ct.nan)
    assert ct.newaxis is None
    i, f = ct.ones(2, dtype=ct.int64), ct.ones(1, dtype=ct.float64)
    assert i.type_as(f).dtype is ct.float64
    np.testing.assert_array_equal(
        ct.tensor([1.0, 2.0]).where(ct.tensor([True, False]), 0.0).numpy(), [1.0, 0.0]
    )
    assert ct.is_signed(i) and not ct.ones(1, dtype=ct.uint8).is_signed()
    assert not ct.ones(1, dtype=ct.bool).is_signed()
    assert ct.is_same_size(i, ct.zeros(2)) and not i.is_same_size(f)
    assert ct.is_nonzero(ct.tensor([2])) and not ct.tensor(0.0).is_nonzero()
    with pytest.raises(RuntimeError, match="more than one value is ambiguous"):
        ct.is_nonzero(i)
    with pytest.raises(RuntimeError, match="no values is ambiguous"):
        ct.zeros(0).is_nonzero()
    assert ct.typename(ct.ones(1)) == "torch.FloatTensor" and ct.typename(3) == "int"
    assert ct.can_cast(ct.int32, ct.float32) and not ct.can_cast(ct.float32, ct.int32)
    assert isinstance(ct.default_generator, ct.Generator)
