"""nn.functional against PyTorch: forward values and input gradients for every function built
here (losses, normalization, pooling, padding, attention, activations, dropout statistics)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import coretorch as ct
import coretorch.nn.functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional

RNG = np.random.default_rng(1234)


def _arr(*shape, dtype=np.float32, low=None, high=None):
    if low is not None:
        return RNG.uniform(low, high, size=shape).astype(dtype)
    return RNG.standard_normal(shape).astype(dtype)


class Const:
    """An input passed to both libraries as a tensor that does not require grad."""

    def __init__(self, a):
        self.a = a


def _compare(fn_ct, fn_t, inputs, *, grad=True, rtol=1e-5, atol=1e-6, kw_ct=None, kw_t=None):
    """Run fn on both libraries; inputs: list of numpy arrays (float ones get gradients) or
    non-array values passed through. Compares outputs and the gradients of sum(out * w)."""
    ct_in, t_in = [], []
    for a in inputs:
        if isinstance(a, np.ndarray):
            req = grad and a.dtype.kind == "f"
            c = ct.tensor(a)
            t = torch.tensor(a)
            if req:
                c.requires_grad_(True)
                t.requires_grad_(True)
            ct_in.append(c)
            t_in.append(t)
        elif isinstance(a, Const):
            ct_in.append(ct.tensor(a.a))
            t_in.append(torch.tensor(a.a))
        else:
            ct_in.append(a)
            t_in.append(a)
    out_c = fn_ct(*ct_in, **(kw_ct or {}))
    out_t = fn_t(*t_in, **(kw_t or {}))
    if isinstance(out_t, tuple):
        out_c, out_t = out_c[0], out_t[0]
    np.testing.assert_allclose(out_c.detach().numpy(), out_t.detach().numpy(), rtol=rtol, atol=atol)
    if grad and out_t.requires_grad:
        w = _arr(*out_t.shape) if out_t.dim() else np.float32(1.3)
        (out_c * ct.tensor(w)).sum().backward()
        (out_t * torch.tensor(w)).sum().backward()
        for c, t in zip(ct_in, t_in):
            if isinstance(t, torch.Tensor) and t.requires_grad:
                assert c.grad is not None
                np.testing.assert_allclose(
                    c.grad.numpy(), t.grad.numpy(), rtol=rtol * 10, atol=atol * 10
                )
    return out_c


# ---- losses -----------------------------------------------------------------------------------


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_regression_losses(reduction):
    a, b = _arr(4, 5), _arr(4, 5)
    for name in ("mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss"):
        _compare(
            getattr(F, name),
            getattr(TF, name),
            [a, b],
            kw_ct=dict(reduction=reduction),
            kw_t=dict(reduction=reduction),
        )
    _compare(F.smooth_l1_loss, TF.smooth_l1_loss, [a, b], kw_ct=dict(beta=0.5), kw_t=dict(beta=0.5))
    _compare(F.smooth_l1_loss, TF.smooth_l1_loss, [a, b], kw_ct=dict(beta=0.0), kw_t=dict(beta=0.0))
    _compare(F.huber_loss, TF.huber_loss, [a, b], kw_ct=dict(delta=0.3), kw_t=dict(delta=0.3))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("ignore", [False, True])
@pytest.mark.parametrize("smoothing", [0.0, 0.2])
def test_cross_entropy_class_indices(reduction, weighted, ignore, smoothing):
    logits = _arr(6, 4)
    target = np.array([0, 3, 1, 1, 2, 3], dtype=np.int64)
    if ignore:
        target[2] = -100
        target[4] = -100
    weight = _arr(4, low=0.5, high=2.0) if weighted else None
    kw = dict(reduction=reduction, label_smoothing=smoothing)
    _compare(
        lambda x, t, w: F.cross_entropy(x, t, w, **kw),
        lambda x, t, w: TF.cross_entropy(x, t, w, **kw),
        [logits, target, Const(weight)] if weighted else [logits, target, None],
        rtol=1e-5,
    )


def test_cross_entropy_spatial_unbatched_and_custom_ignore():
    logits = _arr(2, 3, 4, 5)
    target = RNG.integers(0, 3, size=(2, 4, 5)).astype(np.int64)
    target[0, 1, 2] = 2
    for kw in (
        dict(),
        dict(ignore_index=2),
        dict(reduction="none", ignore_index=1),
        dict(label_smoothing=0.1, ignore_index=0),
    ):
        _compare(
            lambda x, t: F.cross_entropy(x, t, **kw),
            lambda x, t: TF.cross_entropy(x, t, **kw),
            [logits, target],
        )
    _compare(F.cross_entropy, TF.cross_entropy, [_arr(5), np.array(3, dtype=np.int64)])


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_probabilities(reduction):
    logits = _arr(5, 4)
    probs = np.exp(_arr(5, 4))
    probs = (probs / probs.sum(1, keepdims=True)).astype(np.float32)
    weight = _arr(4, low=0.5, high=2.0)
    for smoothing in (0.0, 0.3):
        kw = dict(reduction=reduction, label_smoothing=smoothing)
        _compare(
            lambda x, p: F.cross_entropy(x, p, **kw),
            lambda x, p: TF.cross_entropy(x, p, **kw),
            [logits, probs],
        )
        _compare(
            lambda x, p, w: F.cross_entropy(x, p, w, **kw),
            lambda x, p, w: TF.cross_entropy(x, p, w, **kw),
            [logits, probs, Const(weight)],
        )


def test_nll_loss():
    logp = np.log(_arr(6, 5, low=0.05, high=1.0))
    target = np.array([0, 4, 2, 2, 1, 3], dtype=np.int64)
    weight = _arr(5, low=0.5, high=2.0)
    for kw in (dict(), dict(reduction="sum"), dict(reduction="none"), dict(ignore_index=2)):
        _compare(
            lambda x, t: F.nll_loss(x, t, **kw),
            lambda x, t: TF.nll_loss(x, t, **kw),
            [logp, target],
        )
        _compare(
            lambda x, t, w: F.nll_loss(x, t, w, **kw),
            lambda x, t, w: TF.nll_loss(x, t, w, **kw),
            [logp, target, Const(weight)],
        )


def test_loss_errors():
    x = ct.randn(3, 4)
    with pytest.raises(
        ValueError,
        match=r"Expected input batch_size \(3\) to match target "
        r"batch_size \(2\)",
    ):
        F.cross_entropy(x, ct.tensor([1, 2]))
    with pytest.raises(ValueError, match="is not a valid value for reduction"):
        F.mse_loss(x, x, reduction="avg")
    with pytest.raises(RuntimeError, match="integer dtype"):
        F.nll_loss(x, ct.tensor([1.0, 2.0, 0.0]))
    with pytest.raises(IndexError, match="Target 9 is out of bounds"):
        F.cross_entropy(x, ct.tensor([1, 2, 9]))
    with pytest.warns(UserWarning, match="different to the input size"):
        F.mse_loss(x, ct.randn(4))


def test_binary_cross_entropy():
    p = _arr(4, 3, low=0.02, high=0.98)
    t = _arr(4, 3, low=0.0, high=1.0)
    w = _arr(4, 3, low=0.5, high=1.5)
    for red in ("mean", "sum", "none"):
        _compare(
            lambda a, b: F.binary_cross_entropy(a, b, reduction=red),
            lambda a, b: TF.binary_cross_entropy(a, b, reduction=red),
            [p, t],
        )
        _compare(
            lambda a, b, c: F.binary_cross_entropy(a, b, c, reduction=red),
            lambda a, b, c: TF.binary_cross_entropy(a, b, c, reduction=red),
            [p, t, Const(w)],
        )
    # log clamped at -100 for probabilities of exactly 0 and 1
    edge = np.array([0.0, 1.0, 0.5], dtype=np.float32)
    tgt = np.array([1.0, 0.0, 1.0], dtype=np.float32)
    _compare(F.binary_cross_entropy, TF.binary_cross_entropy, [edge, tgt], grad=False)


def test_binary_cross_entropy_with_logits_is_stable():
    x = (_arr(5, 3) * 30).astype(np.float32)
    x[0, 0], x[1, 1] = 200.0, -200.0
    t = _arr(5, 3, low=0.0, high=1.0)
    pw = _arr(3, low=0.5, high=3.0)
    w = _arr(5, 3, low=0.5, high=1.5)
    for red in ("mean", "sum", "none"):
        out = _compare(
            lambda a, b: F.binary_cross_entropy_with_logits(a, b, reduction=red),
            lambda a, b: TF.binary_cross_entropy_with_logits(a, b, reduction=red),
            [x, t],
            rtol=1e-5,
            atol=1e-5,
        )
        assert np.all(np.isfinite(out.detach().numpy()))
        _compare(
            lambda a, b, c, d: F.binary_cross_entropy_with_logits(
                a, b, c, pos_weight=d, reduction=red
            ),
            lambda a, b, c, d: TF.binary_cross_entropy_with_logits(
                a, b, c, pos_weight=d, reduction=red
            ),
            [x, t, Const(w), Const(pw)],
            rtol=1e-5,
            atol=1e-5,
        )


def test_kl_div():
    inp = np.log(_arr(3, 4, low=0.1, high=1.0))
    tgt = _arr(3, 4, low=0.1, high=1.0)
    for kw in (
        dict(reduction="batchmean"),
        dict(reduction="sum"),
        dict(reduction="none"),
        dict(reduction="batchmean", log_target=True),
    ):
        t_in = np.log(tgt) if kw.get("log_target") else tgt
        _compare(
            lambda a, b: F.kl_div(a, b, **kw),
            lambda a, b: TF.kl_div(a, b, **kw),
            [inp, t_in.astype(np.float32)],
        )


# ---- normalization ----------------------------------------------------------------------------


def test_layer_norm_and_group_norm():
    x = _arr(3, 4, 5)
    w, b = _arr(4, 5), _arr(4, 5)
    _compare(
        lambda a, c, d: F.layer_norm(a, (4, 5), c, d),
        lambda a, c, d: TF.layer_norm(a, (4, 5), c, d),
        [x, w, b],
        rtol=1e-4,
        atol=1e-5,
    )
    _compare(
        lambda a: F.layer_norm(a, [5], eps=1e-3),
        lambda a: TF.layer_norm(a, [5], eps=1e-3),
        [x],
        rtol=1e-4,
        atol=1e-5,
    )
    x4 = _arr(2, 6, 3, 3)
    gw, gb = _arr(6), _arr(6)
    _compare(
        lambda a, c, d: F.group_norm(a, 3, c, d),
        lambda a, c, d: TF.group_norm(a, 3, c, d),
        [x4, gw, gb],
        rtol=1e-4,
        atol=1e-5,
    )
    with pytest.raises(RuntimeError, match="normalized_shape"):
        F.layer_norm(ct.randn(2, 3), (4,))
    with pytest.raises(RuntimeError, match="divisible by num_groups"):
        F.group_norm(ct.randn(2, 5), 2)


def test_batch_norm_training_and_eval():
    x = _arr(8, 3, 4, 4)
    w, b = _arr(3), _arr(3)
    rm_c, rv_c = ct.zeros(3), ct.ones(3)
    rm_t, rv_t = torch.zeros(3), torch.ones(3)
    _compare(
        lambda a, c, d: F.batch_norm(a, rm_c, rv_c, c, d, training=True, momentum=0.3),
        lambda a, c, d: TF.batch_norm(a, rm_t, rv_t, c, d, training=True, momentum=0.3),
        [x, w, b],
        rtol=1e-4,
        atol=1e-5,
    )
    np.testing.assert_allclose(rm_c.numpy(), rm_t.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(rv_c.numpy(), rv_t.numpy(), rtol=1e-5, atol=1e-6)
    _compare(
        lambda a, c, d: F.batch_norm(a, rm_c, rv_c, c, d, training=False),
        lambda a, c, d: TF.batch_norm(a, rm_t, rv_t, c, d, training=False),
        [x, w, b],
        rtol=1e-4,
        atol=1e-5,
    )
    x2 = _arr(5, 3)
    _compare(
        lambda a: F.batch_norm(a, None, None, training=True),
        lambda a: TF.batch_norm(a, None, None, training=True),
        [x2],
        rtol=1e-4,
        atol=1e-5,
    )


def test_normalize():
    x = _arr(4, 6)
    _compare(F.normalize, TF.normalize, [x], rtol=1e-5)
    _compare(lambda a: F.normalize(a, p=1, dim=0), lambda a: TF.normalize(a, p=1, dim=0), [x])


# ---- pooling, padding, misc ---------------------------------------------------------------------


def test_adaptive_avg_pool():
    x = _arr(2, 3, 7, 9)
    for size in ((1, 1), (7, 3), (3, 4), 5, (None, 2), (2, 9)):
        _compare(
            lambda a: F.adaptive_avg_pool2d(a, size),
            lambda a: TF.adaptive_avg_pool2d(a, size),
            [x],
            rtol=1e-5,
        )
    _compare(
        lambda a: F.adaptive_avg_pool2d(a, 2),
        lambda a: TF.adaptive_avg_pool2d(a, 2),
        [_arr(3, 6, 4)],
    )
    _compare(
        lambda a: F.adaptive_avg_pool1d(a, 3),
        lambda a: TF.adaptive_avg_pool1d(a, 3),
        [_arr(2, 3, 10)],
    )


def test_pool_1d_forms():
    x = _arr(2, 3, 11)
    _compare(lambda a: F.max_pool1d(a, 3, 2, 1), lambda a: TF.max_pool1d(a, 3, 2, 1), [x])
    _compare(lambda a: F.avg_pool1d(a, 4, 3), lambda a: TF.avg_pool1d(a, 4, 3), [x])
    c_vals, c_idx = F.max_pool1d(ct.tensor(x), 2, return_indices=True)
    t_vals, t_idx = TF.max_pool1d(torch.tensor(x), 2, return_indices=True)
    np.testing.assert_array_equal(c_idx.numpy(), t_idx.numpy())


@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
def test_pad(mode):
    x = _arr(2, 3, 5, 6)
    # PyTorch pads 4-D inputs in the non-constant modes only with 4 numbers
    all_pads = (
        ((1, 2), (2, 0, 1, 3), (0, 0, 2, 1))
        if mode == "constant"
        else ((2, 0, 1, 3), (0, 0, 2, 1), (1, 1, 1, 1))
    )
    for pads in all_pads:
        kw = dict(mode=mode)
        if mode == "constant":
            kw["value"] = 1.5
        _compare(lambda a: F.pad(a, pads, **kw), lambda a: TF.pad(a, pads, **kw), [x])
    _compare(
        lambda a: F.pad(a, (1, 2), mode=mode),
        lambda a: TF.pad(a, (1, 2), mode=mode),
        [_arr(2, 3, 5)],
    )
    if mode == "constant":
        _compare(lambda a: F.pad(a, (-1, 2, 1, -2)), lambda a: TF.pad(a, (-1, 2, 1, -2)), [x])
        _compare(
            lambda a: F.pad(a, (1, 1, 1, 1, 1, 1)), lambda a: TF.pad(a, (1, 1, 1, 1, 1, 1)), [x]
        )


def test_one_hot_and_embedding():
    idx = np.array([[0, 3], [2, 1]], dtype=np.int64)
    c = F.one_hot(ct.tensor(idx))
    t = TF.one_hot(torch.tensor(idx))
    assert c.dtype is ct.int64 and c.tolist() == t.tolist()
    assert F.one_hot(ct.tensor(idx), 6).shape == (2, 2, 6)
    with pytest.raises(RuntimeError, match="smaller than num_classes"):
        F.one_hot(ct.tensor(idx), 3)
    with pytest.raises(RuntimeError, match="LongTensor"):
        F.one_hot(ct.tensor([1.0]))
    w = _arr(5, 3)
    _compare(
        lambda i, a: F.embedding(i, a, padding_idx=1),
        lambda i, a: TF.embedding(i, a, padding_idx=1),
        [np.array([[1, 4], [1, 0]]), w],
    )


def test_activations():
    x = _arr(3, 7) * 3
    for name in (
        "relu",
        "relu6",
        "silu",
        "mish",
        "elu",
        "selu",
        "celu",
        "sigmoid",
        "tanh",
        "hardtanh",
        "hardsigmoid",
        "hardswish",
        "logsigmoid",
        "softsign",
        "tanhshrink",
        "softplus",
    ):
        _compare(getattr(F, name), getattr(TF, name), [x], rtol=1e-5, atol=1e-5)
    _compare(lambda a: F.leaky_relu(a, 0.2), lambda a: TF.leaky_relu(a, 0.2), [x])
    for approx in ("none", "tanh"):
        _compare(
            lambda a: F.gelu(a, approximate=approx),
            lambda a: TF.gelu(a, approximate=approx),
            [x],
            rtol=1e-5,
            atol=1e-5,
        )
    _compare(lambda a: F.threshold(a, 0.5, -1.0), lambda a: TF.threshold(a, 0.5, -1.0), [x])
    _compare(lambda a: F.glu(a, 0), lambda a: TF.glu(a, 0), [_arr(4, 3)])
    for name in ("softmax", "log_softmax", "softmin"):
        _compare(
            lambda a: getattr(F, name)(a, dim=1),
            lambda a: getattr(TF, name)(a, dim=1),
            [x],
            rtol=1e-5,
        )
    with pytest.warns(UserWarning, match="Implicit dimension choice"):
        F.softmax(ct.tensor(x))


def test_dropout_statistics_and_modes():
    x = ct.ones(200, 100)
    ct.manual_seed(0)
    y = F.dropout(x, 0.3)
    a = y.numpy()
    kept = a != 0
    assert abs(kept.mean() - 0.7) < 0.01
    np.testing.assert_allclose(a[kept], 1 / 0.7, rtol=1e-6)
    assert F.dropout(x, 0.3, training=False) is x
    assert np.all(F.dropout(x, 1.0).numpy() == 0)
    z = ct.ones(50, 40, 3, 3)
    m = F.dropout2d(z, 0.5).numpy()
    per_channel = m.reshape(50, 40, 9)
    assert np.all((per_channel == 0).all(-1) | (per_channel == 2.0).all(-1))
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1"):
        F.dropout(x, 1.5)
    ct.manual_seed(3)
    a1 = F.dropout(x, 0.5).numpy()
    ct.manual_seed(3)
    assert np.array_equal(a1, F.dropout(x, 0.5).numpy())
    g = ct.ones(4, 4).requires_grad_()
    out = F.dropout(g, 0.5)
    out.sum().backward()
    np.testing.assert_array_equal(g.grad.numpy(), out.detach().numpy())


# ---- attention --------------------------------------------------------------------------------


def test_scaled_dot_product_attention():
    q, k, v = _arr(2, 3, 5, 4), _arr(2, 3, 6, 4), _arr(2, 3, 6, 4)
    _compare(
        F.scaled_dot_product_attention,
        TF.scaled_dot_product_attention,
        [q, k, v],
        rtol=1e-5,
        atol=1e-5,
    )
    mask = RNG.random((5, 6)) > 0.3
    mask[:, 0] = True
    _compare(
        lambda a, b, c: F.scaled_dot_product_attention(a, b, c, ct.tensor(mask)),
        lambda a, b, c: TF.scaled_dot_product_attention(a, b, c, torch.tensor(mask)),
        [q, k, v],
        rtol=1e-5,
        atol=1e-5,
    )
    q2 = _arr(2, 6, 4)
    _compare(
        lambda a: F.scaled_dot_product_attention(a, a, a, is_causal=True, scale=0.3),
        lambda a: TF.scaled_dot_product_attention(a, a, a, is_causal=True, scale=0.3),
        [q2],
        rtol=1e-5,
        atol=1e-5,
    )


def _mha_pair(batch_first, **kw):
    import coretorch.nn as nn

    ct.manual_seed(0)
    ours = nn.MultiheadAttention(8, 2, batch_first=batch_first, **kw)
    theirs = torch.nn.MultiheadAttention(8, 2, batch_first=batch_first, **kw)
    sd = {k: torch.tensor(v.numpy()) for k, v in ours.state_dict().items()}
    theirs.load_state_dict(sd)
    return ours, theirs


@pytest.mark.parametrize("batch_first", [False, True])
def test_multihead_attention_matches_torch(batch_first):
    ours, theirs = _mha_pair(batch_first)
    shape_q = (2, 5, 8) if batch_first else (5, 2, 8)
    shape_k = (2, 6, 8) if batch_first else (6, 2, 8)
    q, kv = _arr(*shape_q), _arr(*shape_k)
    kpm = np.zeros((2, 6), dtype=bool)
    kpm[0, 4:] = True
    attn_mask = np.zeros((5, 6), dtype=bool)
    attn_mask[1, 2] = True
    float_mask = _arr(5, 6)
    for kw in (
        dict(),
        dict(key_padding_mask=kpm),
        dict(attn_mask=attn_mask),
        dict(key_padding_mask=kpm, attn_mask=float_mask),
        dict(need_weights=True, average_attn_weights=False),
    ):
        kc = {k: ct.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kw.items()}
        kt = {k: torch.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kw.items()}
        oc, wc = ours(ct.tensor(q), ct.tensor(kv), ct.tensor(kv), **kc)
        ot, wt = theirs(torch.tensor(q), torch.tensor(kv), torch.tensor(kv), **kt)
        np.testing.assert_allclose(oc.detach().numpy(), ot.detach().numpy(), rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(wc.detach().numpy(), wt.detach().numpy(), rtol=1e-4, atol=1e-5)
    # self-attention, need_weights=False, and gradients to the parameters
    x = _arr(*shape_q)
    xc, xt = ct.tensor(x), torch.tensor(x)
    oc, wc = ours(xc, xc, xc, need_weights=False)
    ot, _ = theirs(xt, xt, xt, need_weights=False)
    assert wc is None
    np.testing.assert_allclose(oc.detach().numpy(), ot.detach().numpy(), rtol=1e-4, atol=1e-5)
    oc.sum().backward()
    ot.sum().backward()
    np.testing.assert_allclose(
        ours.in_proj_weight.grad.numpy(), theirs.in_proj_weight.grad.numpy(), rtol=1e-4, atol=1e-5
    )
    np.testing.assert_allclose(
        ours.out_proj.weight.grad.numpy(), theirs.out_proj.weight.grad.numpy(), rtol=1e-4, atol=1e-5
    )


def test_multihead_attention_variants():
    for kw in (
        dict(add_bias_kv=True),
        dict(add_zero_attn=True),
        dict(kdim=5, vdim=3),
        dict(bias=False),
    ):
        ours, theirs = _mha_pair(False, **kw)
        q = _arr(4, 2, 8)
        k = _arr(3, 2, kw.get("kdim", 8))
        v = _arr(3, 2, kw.get("vdim", 8))
        oc, wc = ours(ct.tensor(q), ct.tensor(k), ct.tensor(v))
        ot, wt = theirs(torch.tensor(q), torch.tensor(k), torch.tensor(v))
        np.testing.assert_allclose(oc.detach().numpy(), ot.detach().numpy(), rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(wc.detach().numpy(), wt.detach().numpy(), rtol=1e-4, atol=1e-5)
    ours, theirs = _mha_pair(False)
    u = _arr(4, 8)  # unbatched
    oc, wc = ours(ct.tensor(u), ct.tensor(u), ct.tensor(u))
    ot, wt = theirs(torch.tensor(u), torch.tensor(u), torch.tensor(u))
    np.testing.assert_allclose(oc.detach().numpy(), ot.detach().numpy(), rtol=1e-4, atol=1e-5)
    assert wc.shape == wt.shape == (4, 4)
    with pytest.raises(RuntimeError, match="2D attn_mask"):
        ours(
            ct.tensor(u).unsqueeze(1),
            ct.tensor(u).unsqueeze(1),
            ct.tensor(u).unsqueeze(1),
            attn_mask=ct.zeros(3, 3),
        )


def test_linear_conv_functional():
    x, w, b = _arr(3, 5), _arr(4, 5), _arr(4)
    _compare(F.linear, TF.linear, [x, w, b])
    img, k, kb = _arr(2, 4, 7, 7), _arr(6, 2, 3, 3), _arr(6)
    _compare(
        lambda a, c, d: F.conv2d(a, c, d, stride=2, padding=1, groups=2),
        lambda a, c, d: TF.conv2d(a, c, d, stride=2, padding=1, groups=2),
        [img, k, kb],
        rtol=1e-4,
        atol=1e-5,
    )
    _compare(
        lambda a, c: F.conv1d(a, c, padding="same"),
        lambda a, c: TF.conv1d(a, c, padding="same"),
        [_arr(2, 3, 9), _arr(4, 3, 3)],
        rtol=1e-4,
        atol=1e-5,
    )
    _compare(
        F.bilinear,
        TF.bilinear,
        [_arr(3, 4), _arr(3, 5), _arr(2, 4, 5), _arr(2)],
        rtol=1e-4,
        atol=1e-5,
    )
    assert math.isclose(float(F.linear(ct.ones(1, 2), ct.ones(1, 2))), 2.0)
