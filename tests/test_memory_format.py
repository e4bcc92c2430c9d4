"""memory_format= on contiguous/clone/to/casts/empty/*_like and Tensor.is_contiguous: channels
last is a stride permutation (same values, NHWC strides) that every op reads correctly."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import coretorch as ct
import coretorch.nn.functional as F

CL_STRIDES = (60, 1, 15, 3)  # (N, C, H, W) = (2, 3, 4, 5) laid out as N, H, W, C


@pytest.fixture
def x():
    return ct.randn(2, 3, 4, 5)


def test_contiguous_channels_last_permutes_strides_only(x):
    y = x.contiguous(memory_format=ct.channels_last)
    assert y.shape == x.shape and y.stride() == CL_STRIDES
    assert y.is_contiguous(memory_format=ct.channels_last) and not y.is_contiguous()
    np.testing.assert_array_equal(y.numpy(), x.numpy())
    assert y.contiguous(memory_format=ct.channels_last) is y  # already in that format
    back = y.contiguous()
    assert back.stride() == (60, 20, 5, 1) and back.is_contiguous()
    np.testing.assert_array_equal(back.numpy(), x.numpy())


def test_preserve_format_keeps_channels_last(x):
    y = x.contiguous(memory_format=ct.channels_last)
    for out in (
        y.clone(),
        ct.empty_like(y),
        ct.zeros_like(y),
        ct.ones_like(y),
        ct.full_like(y, 2.0),
        ct.randn_like(y),
        y.to(ct.float64),
        y.double(),
    ):
        assert out.stride() == CL_STRIDES, out
    assert y.clone(memory_format=ct.contiguous_format).is_contiguous()
    assert x.clone().is_contiguous() and ct.empty_like(x).is_contiguous()
    np.testing.assert_array_equal(ct.ones_like(y).numpy(), np.ones((2, 3, 4, 5), np.float32))


def test_conversions_and_factories_take_a_format(x):
    assert x.to(memory_format=ct.channels_last).stride() == CL_STRIDES
    assert x.float(memory_format=ct.channels_last).stride() == CL_STRIDES
    assert x.to(memory_format=ct.contiguous_format) is x
    assert ct.empty(2, 3, 4, 5, memory_format=ct.channels_last).stride() == CL_STRIDES
    assert ct.zeros_like(x, memory_format=ct.channels_last).stride() == CL_STRIDES
    v = ct.randn(2, 3, 4, 5, 6).contiguous(memory_format=ct.channels_last_3d)
    assert v.stride() == (360, 1, 90, 18, 3)
    assert v.is_contiguous(memory_format=ct.channels_last_3d)
    assert not v.is_contiguous(memory_format=ct.channels_last)


def test_ops_and_gradients_read_channels_last_inputs(x):
    w = ct.randn(4, 3, 3, 3)
    y = x.contiguous(memory_format=ct.channels_last).requires_grad_()
    out = F.conv2d(y, w)
    np.testing.assert_allclose(out.detach().numpy(), F.conv2d(x, w).numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose((y * 2 + 1).relu().detach().numpy(), (x * 2 + 1).relu().numpy())
    (out.sum() + y.sum(dim=(2, 3)).pow(2).sum()).backward()
    ref = x.clone().requires_grad_()
    (F.conv2d(ref, w).sum() + ref.sum(dim=(2, 3)).pow(2).sum()).backward()
    np.testing.assert_allclose(y.grad.numpy(), ref.grad.numpy(), rtol=1e-5, atol=1e-5)


def test_to_takes_positional_non_blocking_and_copy(x):
    y = x.to(ct.float32, False, True, memory_format=ct.channels_last)
    assert y is not x and y.stride() == CL_STRIDES
    assert x.to(ct.float32, False, False) is x


def test_memory_format_errors(x):
    with pytest.raises(RuntimeError, match="required rank 4 tensor to use channels_last"):
        ct.randn(2, 3).contiguous(memory_format=ct.channels_last)
    with pytest.raises(RuntimeError, match="preserve memory format is unsupported"):
        x.contiguous(memory_format=ct.preserve_format)
    with pytest.raises(TypeError, match=r"clone\(\): argument 'memory_format' must be"):
        x.clone(memory_format=1)
    with pytest.raises(RuntimeError, match="required rank 5"):
        ct.empty(2, 3, memory_format=ct.channels_last_3d)


def test_formats_are_singletons():
    assert repr(ct.channels_last) == "coretorch.channels_last"
    assert isinstance(ct.preserve_format, ct.memory_format)
    assert pickle.loads(pickle.dumps(ct.channels_last)) is ct.channels_last


def test_matches_pytorch_strides():
    torch = pytest.importorskip("torch")
    t = torch.randn(2, 3, 4, 5)
    for fmt in ("channels_last", "contiguous_format"):
        ours = ct.from_numpy(t.numpy()).contiguous(memory_format=getattr(ct, fmt))
        assert ours.stride() == t.contiguous(memory_format=getattr(torch, fmt)).stride()
    single_channel = torch.randn(2, 1, 4, 5).contiguous(memory_format=torch.channels_last)
    ours = ct.randn(2, 1, 4, 5).contiguous(memory_format=ct.channels_last)
    assert ours.clone().stride() == single_channel.clone().stride()
