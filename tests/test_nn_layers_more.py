"""Convolution, resampling, normalization, padding, pooling, dropout, activation, distance and
embedding layers against PyTorch (float64 values and gradients), their PyTorch-specific rules
(dropout ranks and warnings, running statistics, max_norm), plus recorded values that run
without PyTorch."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from nn_oracle import (
    close,
    expected,
    grads_close,
    load_from_torch,
    seeded,
    to_ct,
    to_np,
    torch_or_skip,
)

import coretorch as ct
import coretorch.nn as nn
import coretorch.nn.functional as F


def _check_fn(fn_c, fn_t, *shapes, seed=0, int_args=(), **kwargs):
    """fn_c and fn_t on the same float64 inputs: values and input gradients agree."""
    torch = torch_or_skip()
    g = torch.Generator().manual_seed(seed)
    xs = [torch.randn(*s, dtype=torch.float64, generator=g).requires_grad_() for s in shapes]
    xc = [to_ct(x, True) for x in xs]
    out_t = fn_t(*xs, *int_args, **kwargs)
    out_c = fn_c(*xc, *[to_ct(a) if hasattr(a, "detach") else a for a in int_args], **kwargs)
    close(out_c, out_t)
    w = torch.randn(out_t.shape, dtype=torch.float64, generator=g)
    (out_t * w).sum().backward()
    (out_c * to_ct(w)).sum().backward()
    for a, b in zip(xc, xs):
        close(a.grad, b.grad, atol=1e-11)
    return out_c


def _check_module(ours, theirs, *shapes, seed=0, **call):
    torch = torch_or_skip()
    load_from_torch(ours, theirs)
    out = _check_fn(lambda *x: ours(*x, **call), lambda *x: theirs(*x, **call), *shapes, seed=seed)
    grads_close(ours.parameters(), theirs.parameters())
    assert repr(ours) == repr(theirs)
    return out, torch


# ---- convolutions ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "n,stride,padding,out_pad,dilation,groups",
    [
        (1, 1, 0, 0, 1, 1),
        (1, 3, 2, 1, 2, 2),
        (2, 2, 1, 1, 1, 1),
        (2, (2, 3), (0, 2), (1, 0), (2, 1), 2),
        (2, 4, 3, 2, 3, 1),
        (3, 2, 1, 1, 1, 2),
    ],
)
def test_conv_transpose_matches_torch(n, stride, padding, out_pad, dilation, groups):
    torch = torch_or_skip()
    k = 3 if n < 3 else 2
    spatial = (5, 4, 3)[:n]
    fn_t = getattr(torch.nn.functional, f"conv_transpose{n}d")
    fn_c = getattr(F, f"conv_transpose{n}d")
    args = (stride, padding, out_pad, groups, dilation)
    _check_fn(
        lambda x, w, b: fn_c(x, w, b, *args),
        lambda x, w, b: fn_t(x, w, b, *args),
        (2, 4) + spatial,
        (4, 6 // groups) + (k,) * n,
        (6,),
    )


@pytest.mark.parametrize(
    "stride,padding,dilation,groups",
    [(1, 0, 1, 1), (2, 1, 1, 2), (1, "same", 2, 1), (2, (1, 0, 2), (1, 2, 1), 1)],
)
def test_conv3d_matches_torch(stride, padding, dilation, groups):
    torch = torch_or_skip()
    _check_fn(
        lambda x, w, b: F.conv3d(x, w, b, stride, padding, dilation, groups),
        lambda x, w, b: torch.nn.functional.conv3d(x, w, b, stride, padding, dilation, groups),
        (2, 4, 6, 7, 5),
        (6, 4 // groups, 3, 2, 3),
        (6,),
    )


def test_conv_layers_match_torch():
    torch = torch_or_skip()
    _check_module(
        nn.ConvTranspose2d(
            4, 6, 3, stride=2, padding=1, output_padding=1, groups=2, dtype=ct.float64
        ),
        torch.nn.ConvTranspose2d(
            4, 6, 3, stride=2, padding=1, output_padding=1, groups=2, dtype=torch.float64
        ),
        (2, 4, 5, 5),
    )
    _check_module(
        nn.ConvTranspose1d(3, 2, 4, stride=2, bias=False, dtype=ct.float64),
        torch.nn.ConvTranspose1d(3, 2, 4, stride=2, bias=False, dtype=torch.float64),
        (2, 3, 6),
    )
    _check_module(
        nn.Conv3d(2, 3, (2, 3, 3), padding=1, padding_mode="reflect", dtype=ct.float64),
        torch.nn.Conv3d(2, 3, (2, 3, 3), padding=1, padding_mode="reflect", dtype=torch.float64),
        (1, 2, 4, 5, 5),
    )
    up = nn.ConvTranspose2d(3, 2, 3, stride=2, padding=1)
    assert tuple(up(ct.randn(1, 3, 4, 4), output_size=[8, 8]).shape) == (1, 2, 8, 8)
    assert tuple(up.weight.shape) == (3, 2, 3, 3)
    with pytest.raises(ValueError, match="requested an output size of"):
        up(ct.randn(1, 3, 4, 4), output_size=[10, 10])
    with pytest.raises(ValueError, match='Only "zeros" padding mode'):
        nn.ConvTranspose2d(3, 2, 3, padding_mode="reflect")
    with pytest.raises(RuntimeError, match="output padding must be smaller"):
        F.conv_transpose2d(ct.randn(1, 3, 4, 4), ct.randn(3, 2, 3, 3), stride=2, output_padding=2)


# ---- resampling and rearrangement --------------------------------------------------------------


@pytest.mark.parametrize(
    "shape,kw",
    [
        ((2, 3, 5), dict(scale_factor=2.5, mode="nearest")),
        ((2, 3, 4, 5), dict(size=(7, 3), mode="nearest")),
        ((2, 3, 4, 5), dict(scale_factor=2, mode="nearest")),
        ((2, 3, 4, 5), dict(size=(7, 9), mode="nearest-exact")),
        ((2, 3, 6), dict(scale_factor=1.5, mode="linear", align_corners=True)),
        ((2, 3, 4, 5), dict(size=(7, 3), mode="bilinear")),
        ((2, 3, 4, 5), dict(scale_factor=(1.7, 0.6), mode="bilinear")),
        ((2, 3, 4, 5), dict(scale_factor=1.7, mode="bilinear", recompute_scale_factor=True)),
        ((1, 2, 4, 5), dict(size=(9, 6), mode="bicubic")),
        ((1, 2, 4, 5), dict(scale_factor=1.5, mode="bicubic", align_corners=True)),
        ((1, 2, 3, 4, 5), dict(size=(4, 6, 3), mode="trilinear")),
        ((1, 2, 6, 9), dict(size=(4, 4), mode="area")),
    ],
)
def test_interpolate_matches_torch(shape, kw):
    torch = torch_or_skip()
    _check_fn(
        lambda x: F.interpolate(x, **kw), lambda x: torch.nn.functional.interpolate(x, **kw), shape
    )


def test_upsample_pixel_shuffle_layers():
    torch = torch_or_skip()
    for ours, theirs, shape in [
        (
            nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False),
            torch.nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False),
            (1, 2, 3, 3),
        ),
        (
            nn.UpsamplingNearest2d(size=(5, 4)),
            torch.nn.UpsamplingNearest2d(size=(5, 4)),
            (1, 2, 3, 3),
        ),
        (
            nn.UpsamplingBilinear2d(scale_factor=2),
            torch.nn.UpsamplingBilinear2d(scale_factor=2),
            (1, 2, 3, 3),
        ),
        (nn.PixelShuffle(2), torch.nn.PixelShuffle(2), (2, 8, 3, 4)),
        (nn.PixelUnshuffle(2), torch.nn.PixelUnshuffle(2), (2, 3, 4, 6)),
        (nn.ChannelShuffle(3), torch.nn.ChannelShuffle(3), (2, 6, 2, 2)),
    ]:
        _check_module(ours, theirs, shape)
    with pytest.raises(ValueError, match="align_corners option can only be set"):
        F.interpolate(ct.randn(1, 1, 2, 2), scale_factor=2, align_corners=True)
    with pytest.raises(NotImplementedError, match="bilinear mode needs 4D input"):
        F.interpolate(ct.randn(1, 1, 2), scale_factor=2, mode="bilinear")
    with pytest.raises(RuntimeError, match="divisible by the square of upscale_factor"):
        F.pixel_shuffle(ct.randn(1, 3, 2, 2), 2)


# ---- normalization -----------------------------------------------------------------------------


def test_instance_norm_running_stats_match_torch():
    torch = torch_or_skip()
    for cls, shape in (
        ("InstanceNorm1d", (3, 4, 6)),
        ("InstanceNorm2d", (2, 4, 3, 5)),
        ("InstanceNorm2d", (4, 3, 5)),
    ):
        kw = dict(affine=True, track_running_stats=True, momentum=0.3)
        ours = getattr(nn, cls)(4, dtype=ct.float64, **kw)
        theirs = getattr(torch.nn, cls)(4, dtype=torch.float64, **kw)
        _check_module(ours, theirs, shape)
        close(ours.running_mean, theirs.running_mean)
        close(ours.running_var, theirs.running_var)
        ours.eval()
        theirs.eval()
        _check_module(ours, theirs, shape, seed=3)
    plain_c, plain_t = (
        nn.InstanceNorm2d(3, dtype=ct.float64),
        torch.nn.InstanceNorm2d(3, dtype=torch.float64),
    )
    _check_module(plain_c, plain_t, (2, 3, 4, 4))
    assert plain_c.running_mean is None
    with pytest.raises(ValueError, match="more than 1 spatial element"):
        F.instance_norm(ct.randn(2, 3, 1, 1))


def test_local_response_norm_matches_torch():
    torch = torch_or_skip()
    _check_module(
        nn.LocalResponseNorm(3, alpha=0.2, beta=0.6, k=2.0),
        torch.nn.LocalResponseNorm(3, alpha=0.2, beta=0.6, k=2.0),
        (2, 5, 3, 4),
    )
    _check_module(nn.LocalResponseNorm(2), torch.nn.LocalResponseNorm(2), (2, 5, 7))


# ---- padding, pooling --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name,padding,shape",
    [
        ("ReflectionPad1d", (2, 1), (2, 3, 5)),
        ("ReflectionPad2d", 1, (1, 2, 3, 4)),
        ("ReplicationPad1d", 3, (3, 5)),
        ("ReplicationPad2d", (1, 0, 2, 3), (1, 2, 3, 4)),
        ("ZeroPad1d", (1, 2), (2, 3, 4)),
        ("ZeroPad2d", (1, -1, 2, 0), (1, 2, 3, 4)),
        ("CircularPad2d", (1, 2, 0, 1), (1, 2, 3, 4)),
        ("ReflectionPad3d", 1, (1, 2, 3, 3, 3)),
    ],
)
def test_padding_layers_match_torch(name, padding, shape):
    torch = torch_or_skip()
    _check_module(getattr(nn, name)(padding), getattr(torch.nn, name)(padding), shape)


def test_constant_pad_and_rank_errors():
    torch = torch_or_skip()
    _check_module(
        nn.ConstantPad2d((1, 2, 0, 1), 3.5), torch.nn.ConstantPad2d((1, 2, 0, 1), 3.5), (2, 3, 4)
    )
    with pytest.raises(ValueError, match="expected 2D or 3D input"):
        nn.ReflectionPad1d(1)(ct.randn(1, 2, 3, 4))


@pytest.mark.parametrize(
    "name,output_size,shape",
    [
        ("adaptive_max_pool1d", 3, (2, 3, 7)),
        ("adaptive_max_pool2d", (2, 3), (2, 3, 5, 7)),
        ("adaptive_max_pool2d", (None, 4), (3, 5, 9)),
        ("adaptive_max_pool2d", 1, (2, 2, 4, 4)),
    ],
)
def test_adaptive_max_pool_matches_torch(name, output_size, shape):
    torch = torch_or_skip()
    fc, ft = getattr(F, name), getattr(torch.nn.functional, name)
    _check_fn(lambda x: fc(x, output_size), lambda x: ft(x, output_size), shape)
    x = torch.randn(*shape, dtype=torch.float64)
    _, idx_t = ft(x, output_size, return_indices=True)
    _, idx_c = fc(to_ct(x), output_size, return_indices=True)
    assert idx_c.tolist() == idx_t.tolist()
    layer = getattr(nn, "AdaptiveMaxPool" + name[-2:].upper().replace("D", "d"))(output_size)
    close(layer(to_ct(x)), ft(x, output_size))


def test_max_unpool_matches_torch():
    torch = torch_or_skip()
    x = torch.randn(2, 3, 6, 7, dtype=torch.float64)
    values, idx = torch.nn.functional.max_pool2d(x, 2, 2, return_indices=True)
    vc = to_ct(values, True)
    out_c = nn.MaxUnpool2d(2, 2)(vc, to_ct(idx), output_size=(6, 7))
    out_t = torch.nn.MaxUnpool2d(2, 2)(values, idx, output_size=(6, 7))
    close(out_c, out_t)
    out_c.sum().backward()
    assert float(vc.grad.sum()) == vc.numel()
    v1, i1 = torch.nn.functional.max_pool1d(x[0], 3, 2, return_indices=True)
    close(
        F.max_unpool1d(to_ct(v1), to_ct(i1), 3, 2), torch.nn.functional.max_unpool1d(v1, i1, 3, 2)
    )
    with pytest.raises(ValueError, match="invalid output_size"):
        F.max_unpool2d(to_ct(values), to_ct(idx), 2, 2, output_size=(9, 9))


# ---- dropout -----------------------------------------------------------------------------------


def _warnings(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = fn()
    return out, [str(w.message) for w in caught]


def _channels_all_or_nothing(out: np.ndarray, x: np.ndarray, scale: float) -> None:
    flat_out = out.reshape(out.shape[0], out.shape[1], -1)
    flat_x = x.reshape(x.shape[0], x.shape[1], -1)
    for o, xi in zip(
        flat_out.reshape(-1, flat_out.shape[-1]), flat_x.reshape(-1, flat_x.shape[-1])
    ):
        assert np.allclose(o, 0) or np.allclose(o, xi * scale)


def test_dropout2d_on_3d_input_follows_torch():
    x = ct.randn(4, 6, 5) + 3
    out, msgs = _warnings(lambda: F.dropout2d(x, 0.5, True))
    assert any("assuming that channel-wise 1D dropout behavior is desired" in m for m in msgs)
    _channels_all_or_nothing(out.numpy(), x.numpy(), 2.0)
    out, msgs = _warnings(lambda: nn.Dropout2d(0.5)(ct.randn(4, 6) + 3))
    assert any("Received a 2-D input to dropout2d" in m for m in msgs)
    out, msgs = _warnings(lambda: nn.Dropout2d(0.5)(ct.randn(2, 3, 4, 4)))
    assert not msgs
    assert _warnings(lambda: nn.Dropout2d(0.5).eval()(x))[0] is x


def test_dropout3d_and_alpha_dropout():
    x = ct.randn(2, 8, 2, 3, 2) + 3
    out = nn.Dropout3d(0.5)(x).numpy()
    _channels_all_or_nothing(out, x.numpy(), 2.0)
    un = nn.Dropout3d(0.5)(x[0]).numpy()
    _channels_all_or_nothing(un[None], x.numpy()[:1], 2.0)
    assert float(nn.Dropout3d(1.0)(x).abs().sum()) == 0
    p = 0.3
    alpha = 1.7580993408473766
    a = 1 / np.sqrt((alpha**2 * p + 1) * (1 - p))
    big = ct.randn(200000, dtype=ct.float64)
    out = F.alpha_dropout(big, p, True).numpy()
    xs = big.numpy()
    kept = np.isclose(out, a * xs + alpha * a * p)
    dropped = np.isclose(out, alpha * a * (p - 1))
    assert np.all(kept | dropped)
    assert abs(dropped.mean() - p) < 0.01
    assert abs(out.mean()) < 0.02 and abs(out.std() - 1) < 0.02
    assert nn.AlphaDropout(0.5).eval()(big) is big
    xf = ct.randn(3, 10, 4, dtype=ct.float64)
    feat = F.feature_alpha_dropout(xf, 0.5, True).numpy()
    a = 1 / np.sqrt((alpha**2 * 0.5 + 1) * 0.5)
    for row, xr in zip(feat.reshape(30, 4), xf.numpy().reshape(30, 4)):
        assert np.allclose(row, alpha * a * (0.5 - 1)) or np.allclose(row, a * xr + alpha * a * 0.5)
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1"):
        F.dropout3d(x, 1.5)


# ---- activations, distances ------------------------------------------------------------------


def test_prelu_softmax2d_distances_match_torch():
    torch = torch_or_skip()
    _check_module(
        nn.PReLU(3, init=0.1, dtype=ct.float64),
        torch.nn.PReLU(3, init=0.1, dtype=torch.float64),
        (2, 3, 4),
    )
    _check_module(nn.PReLU(dtype=ct.float64), torch.nn.PReLU(dtype=torch.float64), (5,))
    _check_module(nn.Softmax2d(), torch.nn.Softmax2d(), (2, 3, 2, 2))
    _check_module(
        nn.CosineSimilarity(dim=-1, eps=1e-6),
        torch.nn.CosineSimilarity(dim=-1, eps=1e-6),
        (4, 5),
        (1, 5),
    )
    for p in (2.0, 1.0, 3.0, float("inf")):
        _check_module(
            nn.PairwiseDistance(p=p, keepdim=True),
            torch.nn.PairwiseDistance(p=p, keepdim=True),
            (4, 5),
            (4, 5),
        )
    _check_fn(lambda x: F.pdist(x, 2), lambda x: torch.nn.functional.pdist(x, 2), (5, 3))
    zero = ct.zeros(2, 3, dtype=ct.float64, requires_grad=True)
    F.cosine_similarity(zero, ct.ones(2, 3, dtype=ct.float64)).sum().backward()
    assert np.isfinite(zero.grad.numpy()).all()
    with pytest.raises(RuntimeError, match="Mismatch of parameter numbers"):
        F.prelu(ct.randn(3), ct.rand(3))


# ---- embeddings --------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_matches_torch(mode):
    torch = torch_or_skip()
    theirs = torch.nn.EmbeddingBag(10, 3, mode=mode, padding_idx=2, dtype=torch.float64)
    ours = nn.EmbeddingBag(10, 3, mode=mode, padding_idx=2, dtype=ct.float64)
    load_from_torch(ours, theirs)
    flat = torch.tensor([1, 2, 4, 5, 4, 3, 2, 9, 0])
    offsets = torch.tensor([0, 2, 2, 5])
    out_t = theirs(flat, offsets)
    out_c = ours(to_ct(flat), to_ct(offsets))
    close(out_c, out_t)
    w = torch.randn(out_t.shape, dtype=torch.float64)
    (out_t * w).sum().backward()
    (out_c * to_ct(w)).sum().backward()
    grads_close(ours.parameters(), theirs.parameters())
    batch = torch.tensor([[1, 3, 3], [2, 2, 2]])
    close(ours(to_ct(batch)), theirs(batch))
    last = torch.tensor([0, 3, 9])
    close(
        F.embedding_bag(to_ct(flat), ours.weight, to_ct(last), mode=mode, include_last_offset=True),
        torch.nn.functional.embedding_bag(
            flat, theirs.weight, last, mode=mode, include_last_offset=True
        ),
    )


def test_embedding_bag_per_sample_weights_and_errors():
    torch = torch_or_skip()
    weight = torch.randn(6, 2, dtype=torch.float64, requires_grad=True)
    psw = torch.rand(5, dtype=torch.float64, requires_grad=True)
    idx, off = torch.tensor([0, 5, 1, 1, 3]), torch.tensor([0, 3])
    out_t = torch.nn.functional.embedding_bag(idx, weight, off, mode="sum", per_sample_weights=psw)
    wc, pc = to_ct(weight, True), to_ct(psw, True)
    out_c = F.embedding_bag(to_ct(idx), wc, to_ct(off), mode="sum", per_sample_weights=pc)
    close(out_c, out_t)
    out_t.sum().backward()
    out_c.sum().backward()
    close(wc.grad, weight.grad)
    close(pc.grad, psw.grad)
    with pytest.raises(NotImplementedError, match="only supported for mode='sum'"):
        F.embedding_bag(to_ct(idx), wc, to_ct(off), mode="mean", per_sample_weights=pc)
    with pytest.raises(ValueError, match="offsets has to be None"):
        F.embedding_bag(ct.tensor([[0, 1]]), wc, ct.tensor([0]))


def test_embedding_max_norm_renormalizes_like_torch():
    torch = torch_or_skip()
    for make_c, make_t, args in [
        (
            lambda: nn.Embedding(6, 3, max_norm=1.0, norm_type=1.0, dtype=ct.float64),
            lambda: torch.nn.Embedding(6, 3, max_norm=1.0, norm_type=1.0, dtype=torch.float64),
            (torch.tensor([[0, 2], [2, 5]]),),
        ),
        (
            lambda: nn.EmbeddingBag(6, 3, max_norm=0.5, dtype=ct.float64),
            lambda: torch.nn.EmbeddingBag(6, 3, max_norm=0.5, dtype=torch.float64),
            (torch.tensor([[0, 2], [2, 5]]),),
        ),
    ]:
        ours, theirs = make_c(), make_t()
        load_from_torch(ours, theirs)
        out_t = theirs(*args)
        out_c = ours(*(to_ct(a) for a in args))
        close(out_c, out_t)
        close(ours.weight, theirs.weight)


# ---- recorded from PyTorch (runs without it) ---------------------------------------------------


def test_recorded_conv_transpose_and_interpolate():
    rec = expected()
    out = F.conv_transpose2d(
        ct.tensor(seeded((1, 4, 3, 3), 9)),
        ct.tensor(seeded((4, 3, 3, 2), 10)),
        None,
        stride=2,
        padding=1,
        output_padding=1,
        groups=2,
        dilation=2,
    )
    np.testing.assert_allclose(
        to_np(out), rec["conv_transpose2d"]["output"], rtol=1e-12, atol=1e-12
    )
    x = ct.tensor(seeded((1, 2, 3, 4), 11))
    got = {
        "bilinear": F.interpolate(x, scale_factor=1.7, mode="bilinear"),
        "bicubic_corners": F.interpolate(x, size=(5, 7), mode="bicubic", align_corners=True),
        "nearest": F.interpolate(x, size=(4, 7), mode="nearest"),
    }
    for key, value in got.items():
        np.testing.assert_allclose(to_np(value), rec["interpolate"][key], rtol=1e-12, atol=1e-12)
