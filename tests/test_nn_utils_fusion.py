"""nn.utils: BatchNorm folding, functional_call, skip_init, clip_grad_norm; random.fork_rng."""

from __future__ import annotations

import numpy as np
import pytest

import coretorch as ct
import coretorch.nn as nn
from coretorch.nn.utils import fuse_conv_bn_eval, fuse_linear_bn_eval, skip_init
from coretorch.nn.utils.stateless import functional_call


def _trained_bn(bn, shape):
    bn.train()
    for _ in range(3):
        bn(ct.randn(*shape, dtype=ct.float64) * 2 + 1)
    bn.weight.data.uniform_(0.5, 1.5)
    bn.bias.data.uniform_(-1, 1)
    return bn.eval()


@pytest.mark.parametrize("transpose", [False, True])
def test_conv_bn_folding_computes_the_pair(transpose):
    ct.manual_seed(0)
    conv = (nn.ConvTranspose2d(3, 4, 3) if transpose else nn.Conv2d(3, 4, 3)).double().eval()
    bn = _trained_bn(nn.BatchNorm2d(4).double(), (8, 4, 5, 5))
    x = ct.randn(2, 3, 6, 6, dtype=ct.float64)
    fused = fuse_conv_bn_eval(conv, bn, transpose=transpose)
    np.testing.assert_allclose(
        fused(x).detach().numpy(), bn(conv(x)).detach().numpy(), rtol=1e-10, atol=1e-12
    )
    assert fused is not conv and conv.weight is not fused.weight
    assert isinstance(fused.weight, nn.Parameter)


def test_linear_bn_folding_and_its_checks():
    ct.manual_seed(1)
    lin = nn.Linear(5, 3).double().eval()
    bn = _trained_bn(nn.BatchNorm1d(3).double(), (16, 3))
    x = ct.randn(4, 5, dtype=ct.float64)
    np.testing.assert_allclose(
        fuse_linear_bn_eval(lin, bn)(x).detach().numpy(),
        bn(lin(x)).detach().numpy(),
        rtol=1e-10,
        atol=1e-12,
    )
    with pytest.raises(AssertionError, match="Fusion only for eval"):
        fuse_linear_bn_eval(lin.train(), bn)
    with pytest.raises(AssertionError, match="linear.out_features == bn.num_features"):
        fuse_linear_bn_eval(lin.eval(), nn.BatchNorm1d(2).eval())


def test_folding_matches_torch():
    torch = pytest.importorskip("torch")
    from torch.nn.utils import fuse_conv_bn_weights as t_fuse

    from coretorch.nn.utils import fuse_conv_bn_weights

    rng = np.random.default_rng(0)
    w, b, rm, w2, b2 = (rng.standard_normal(s) for s in [(4, 3, 3, 3), (4,), (4,), (4,), (4,)])
    rv = rng.uniform(0.5, 2, 4)
    ours = fuse_conv_bn_weights(
        *(ct.tensor(a) for a in (w, b, rm, rv)), 1e-5, ct.tensor(w2), ct.tensor(b2)
    )
    theirs = t_fuse(
        *(torch.tensor(a) for a in (w, b, rm, rv)), 1e-5, torch.tensor(w2), torch.tensor(b2)
    )
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(o.detach().numpy(), t.detach().numpy(), rtol=1e-12)


def test_functional_call_uses_the_given_tensors_and_restores_the_module():
    lin = nn.Linear(3, 2)
    w = ct.ones(2, 3, requires_grad=True)
    b = ct.zeros(2)
    x = ct.tensor([[1.0, 2.0, 3.0]])
    out = functional_call(lin, {"weight": w, "bias": b}, (x,))
    np.testing.assert_array_equal(out.detach().numpy(), [[6.0, 6.0]])
    out.sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), np.tile([1.0, 2.0, 3.0], (2, 1)))
    assert isinstance(lin.weight, nn.Parameter) and lin.weight.grad is None
    partial = functional_call(lin, {"bias": ct.full((2,), 10.0)}, x)
    np.testing.assert_allclose(
        partial.detach().numpy(), (lin(x) - lin.bias + 10).detach().numpy(), rtol=1e-6
    )
    with pytest.raises(RuntimeError, match="Unexpected key\\(s\\): 'nope'"):
        functional_call(lin, {"nope": b}, x)
    with pytest.raises(RuntimeError, match="Missing key\\(s\\): 'weight'"):
        functional_call(lin, {"bias": b}, x, strict=True)
    with pytest.raises(RuntimeError, match="multiple dictionaries"):
        functional_call(lin, ({"bias": b}, {"bias": b}), x)


def test_functional_call_replaces_tied_weights_together():
    seq = nn.Sequential(nn.Linear(2, 2, bias=False), nn.Linear(2, 2, bias=False))
    seq[1].weight = seq[0].weight
    eye = ct.eye(2)
    x = ct.tensor([[1.0, 2.0]])
    np.testing.assert_array_equal(functional_call(seq, {"0.weight": eye}, x).numpy(), [[1.0, 2.0]])
    untied = functional_call(seq, {"0.weight": eye}, x, tie_weights=False)
    np.testing.assert_allclose(untied.detach().numpy(), (x @ seq[0].weight.T).detach().numpy())


def test_skip_init_builds_without_initializing():
    lin = skip_init(nn.Linear, 4, 3, dtype=ct.float64)
    assert lin.weight.shape == (3, 4) and lin.weight.dtype is ct.float64
    assert lin.weight.device.type == "cpu"
    with pytest.raises(RuntimeError, match="support a 'device' arg"):
        skip_init(lambda: nn.Linear(1, 1))


def test_clip_grad_norm_is_the_deprecated_spelling():
    p = nn.Parameter(ct.ones(4))
    p.grad = ct.full((4,), 3.0)
    with pytest.warns(FutureWarning, match="clip_grad_norm_"):
        total = nn.utils.clip_grad_norm([p], 1.0)
    assert total.item() == 6.0
    np.testing.assert_allclose(p.grad.numpy(), np.full(4, 0.5), rtol=1e-5)


def test_fork_rng_restores_the_stream():
    ct.manual_seed(0)
    with ct.random.fork_rng():
        ct.rand(5)
    after = ct.rand(3).numpy()
    ct.manual_seed(0)
    np.testing.assert_array_equal(ct.rand(3).numpy(), after)
    with ct.random.fork_rng(enabled=False):
        ct.rand(1)
    assert not np.array_equal(ct.rand(3).numpy(), after)
