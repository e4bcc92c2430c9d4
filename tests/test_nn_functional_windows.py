"""nn.functional window, sampling and shrink functions and their layers: values and gradients
against PyTorch (skipped without it), plus the properties of the random ones."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest

import coretorch as ct
import coretorch.nn as cnn
import coretorch.nn.functional as F

RNG = np.random.default_rng(7)


def _close(a, b, atol=1e-10) -> None:
    a = a if isinstance(a, tuple) else (a,)
    b = b if isinstance(b, tuple) else (b,)
    for x, y in zip(a, b):
        assert tuple(x.shape) == tuple(y.shape)
        np.testing.assert_allclose(x.detach().numpy(), y.detach().numpy(), atol=atol)


def _value_and_grads(fn_ct, fn_torch, *arrays, atol=1e-10):
    """Compare fn(*arrays) and the gradients of a random projection of it."""
    torch = pytest.importorskip("torch")
    cs = [ct.tensor(a, requires_grad=True) for a in arrays]
    ts = [torch.tensor(a, requires_grad=True) for a in arrays]
    c, t = fn_ct(*cs), fn_torch(*ts)
    _close(c, t, atol)
    w = RNG.standard_normal(tuple(t.shape))
    (c * ct.tensor(w)).sum().backward()
    (t * torch.tensor(w)).sum().backward()
    for a, b in zip(cs, ts):
        if b.grad is not None and a.grad is not None:
            np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), atol=atol)


@pytest.mark.parametrize(
    "mode,padding_mode,align_corners",
    [
        (m, p, a)
        for m, p, a in itertools.product(
            ("bilinear", "nearest", "bicubic"), ("zeros", "border", "reflection"), (False, True)
        )
    ],
)
def test_grid_sample_2d_matches_torch(mode, padding_mode, align_corners):
    import_torch = pytest.importorskip("torch")
    x = RNG.standard_normal((2, 3, 5, 6))
    grid = RNG.uniform(-1.3, 1.3, (2, 4, 3, 2))
    _value_and_grads(
        lambda a, g: F.grid_sample(a, g, mode, padding_mode, align_corners),
        lambda a, g: import_torch.nn.functional.grid_sample(
            a, g, mode, padding_mode, align_corners
        ),
        x,
        grid,
        atol=1e-12,
    )


@pytest.mark.parametrize(
    "mode,padding_mode",
    list(itertools.product(("bilinear", "nearest"), ("zeros", "border", "reflection"))),
)
def test_grid_sample_3d_matches_torch(mode, padding_mode):
    torch = pytest.importorskip("torch")
    x = RNG.standard_normal((1, 2, 3, 4, 5))
    grid = RNG.uniform(-1.2, 1.2, (1, 2, 3, 2, 3))
    _value_and_grads(
        lambda a, g: F.grid_sample(a, g, mode, padding_mode, True),
        lambda a, g: torch.nn.functional.grid_sample(a, g, mode, padding_mode, True),
        x,
        grid,
        atol=1e-12,
    )


def test_grid_sample_refuses_like_torch():
    x, g = ct.zeros(1, 1, 3, 3), ct.zeros(1, 2, 2, 2)
    with pytest.raises(ValueError, match="expected mode to be 'bilinear', 'nearest' or"):
        F.grid_sample(x, g, mode="area", align_corners=False)
    with pytest.raises(ValueError, match="expected padding_mode to be 'zeros'"):
        F.grid_sample(x, g, padding_mode="wrap", align_corners=False)
    with pytest.warns(UserWarning, match="align_corners=False since 1.3.0"):
        F.grid_sample(x, g)


def test_affine_grid_then_grid_sample_identity():
    """The identity transform samples every pixel centre exactly."""
    x = ct.tensor(RNG.standard_normal((2, 3, 4, 5)))
    theta = ct.tensor(np.tile(np.eye(2, 3), (2, 1, 1)))
    grid = F.affine_grid(theta, (2, 3, 4, 5), align_corners=False)
    _close(F.grid_sample(x, grid, align_corners=False), x, atol=1e-12)


@pytest.mark.parametrize("size", [(2, 3, 4, 5), (2, 1, 3, 4, 2)])
def test_affine_grid_matches_torch(size):
    torch = pytest.importorskip("torch")
    d = len(size) - 2
    theta = RNG.standard_normal((2, d, d + 1))
    for ac in (False, True):
        _value_and_grads(
            lambda t: F.affine_grid(t, size, ac),
            lambda t: torch.nn.functional.affine_grid(t, size, ac),
            theta,
        )


@pytest.mark.parametrize(
    "kw", [dict(kernel_size=2), dict(kernel_size=(2, 3), dilation=(2, 1), padding=1, stride=(1, 2))]
)
def test_unfold_fold_match_torch(kw):
    torch = pytest.importorskip("torch")
    x = RNG.standard_normal((2, 3, 6, 7))
    _value_and_grads(lambda a: F.unfold(a, **kw), lambda a: torch.nn.functional.unfold(a, **kw), x)
    cols = torch.nn.functional.unfold(torch.tensor(x), **kw).numpy()
    _value_and_grads(
        lambda a: F.fold(a, (6, 7), **kw), lambda a: torch.nn.functional.fold(a, (6, 7), **kw), cols
    )


def test_fold_of_unfold_counts_overlaps():
    """fold(unfold(x)) multiplies each pixel by the number of blocks covering it."""
    x = ct.ones(1, 1, 4, 4)
    out = F.fold(F.unfold(x, 2, stride=1), (4, 4), 2, stride=1)
    want = np.array([[1, 2, 2, 1], [2, 4, 4, 2], [2, 4, 4, 2], [1, 2, 2, 1]], dtype=np.float32)
    np.testing.assert_array_equal(out.numpy()[0, 0], want)


@pytest.mark.parametrize(
    "name,args,kwargs",
    [
        ("max_pool3d", (2,), dict(stride=1, padding=1, return_indices=True)),
        ("max_pool3d_with_indices", (3,), dict(stride=2, padding=1, ceil_mode=True)),
        ("avg_pool3d", (3,), dict(stride=2, padding=1, count_include_pad=False)),
        ("adaptive_avg_pool3d", ((2, None, 3),), {}),
        ("adaptive_max_pool3d", (3,), dict(return_indices=True)),
        ("lp_pool3d", (2.0, 2), {}),
    ],
)
def test_3d_pools_match_torch(name, args, kwargs):
    torch = pytest.importorskip("torch")
    x = np.abs(RNG.standard_normal((2, 2, 4, 5, 6))) + 0.1
    _value_and_grads(
        lambda a: _first(getattr(F, name)(a, *args, **kwargs)),
        lambda a: _first(getattr(torch.nn.functional, name)(a, *args, **kwargs)),
        x,
    )
    _close(
        getattr(F, name)(ct.tensor(x), *args, **kwargs),
        getattr(torch.nn.functional, name)(torch.tensor(x), *args, **kwargs),
    )


def _first(res):
    return res[0] if isinstance(res, tuple) else res


def test_1d_2d_with_indices_and_lp_pool1d_match_torch():
    torch = pytest.importorskip("torch")
    TF = torch.nn.functional
    x = RNG.standard_normal((2, 3, 9))
    _close(
        F.max_pool1d_with_indices(ct.tensor(x), 3, 2, 1),
        TF.max_pool1d_with_indices(torch.tensor(x), 3, 2, 1),
    )
    x2 = RNG.standard_normal((2, 3, 6, 7))
    _close(
        F.max_pool2d_with_indices(ct.tensor(x2), 2), TF.max_pool2d_with_indices(torch.tensor(x2), 2)
    )
    _close(F.lp_pool1d(ct.tensor(np.abs(x)), 3.0, 2), TF.lp_pool1d(torch.tensor(np.abs(x)), 3.0, 2))


def test_max_unpool3d_inverts_max_pool3d_like_torch():
    torch = pytest.importorskip("torch")
    x = torch.tensor(RNG.standard_normal((1, 2, 4, 4, 6)))
    v, i = torch.nn.functional.max_pool3d(x, 2, return_indices=True)
    got = F.max_unpool3d(ct.tensor(v.numpy()), ct.tensor(i.numpy()), 2)
    _close(got, torch.nn.functional.max_unpool3d(v, i, 2))


@pytest.mark.parametrize("n", [2, 3])
def test_fractional_max_pool_matches_torch(n):
    torch = pytest.importorskip("torch")
    TF = torch.nn.functional
    x = RNG.standard_normal((2, 3) + (9, 8, 7)[:n])
    samples = RNG.random((2, 3, n))
    fn, tfn = (
        (F.fractional_max_pool2d, TF.fractional_max_pool2d)
        if n == 2
        else (F.fractional_max_pool3d, TF.fractional_max_pool3d)
    )
    kw = dict(output_size=(4, 3, 4)[:n], return_indices=True)
    got = fn(ct.tensor(x), 2, _random_samples=ct.tensor(samples), **kw)
    want = tfn(torch.tensor(x), 2, _random_samples=torch.tensor(samples), **kw)
    _close(got, want)
    ratio = fn(ct.tensor(x), 2, output_ratio=(0.5,) * n)
    assert tuple(ratio.shape) == (2, 3) + tuple(int(s * 0.5) for s in x.shape[2:])
    with pytest.raises(ValueError, match="requires specifying either an output_size"):
        fn(ct.tensor(x), 2)


@pytest.mark.parametrize(
    "mode,dims",
    [
        ("nearest", 3),
        ("nearest-exact", 3),
        ("area", 3),
        ("trilinear", 3),
        ("bilinear", 2),
        ("bicubic", 2),
        ("linear", 1),
        ("area", 1),
    ],
)
def test_interpolate_matches_torch(mode, dims):
    torch = pytest.importorskip("torch")
    x = RNG.standard_normal((2, 2) + (4, 5, 6)[:dims])
    cases = [
        dict(size=(3, 7, 9)[:dims]),
        dict(scale_factor=1.7),
        dict(scale_factor=(0.6, 2.3, 1.4)[:dims], recompute_scale_factor=True),
    ]
    corners = (False, True) if mode in ("linear", "bilinear", "bicubic", "trilinear") else (None,)
    for kw, ac in itertools.product(cases, corners):
        _close(
            F.interpolate(ct.tensor(x), mode=mode, align_corners=ac, **kw),
            torch.nn.functional.interpolate(torch.tensor(x), mode=mode, align_corners=ac, **kw),
        )


def test_shrinks_and_inplace_activations():
    x = ct.tensor([-2.0, -0.4, 0.0, 0.3, 1.5])
    np.testing.assert_allclose(F.hardshrink(x).numpy(), [-2.0, 0, 0, 0, 1.5])
    np.testing.assert_allclose(F.softshrink(x, 0.5).numpy(), [-1.5, 0, 0, 0, 1.0])
    with pytest.raises(RuntimeError, match="lambda must be greater or equal to 0"):
        F.softshrink(x, -1.0)
    y = x.clone()
    assert F.threshold_(y, 0.0, -9.0) is y
    np.testing.assert_allclose(y.numpy(), [-9, -9, -9, 0.3, 1.5])
    y = x.clone()
    F.selu_(y)
    np.testing.assert_allclose(y.numpy(), F.selu(x).numpy())
    y = x.clone()
    F.celu_(y, 0.5)
    np.testing.assert_allclose(y.numpy(), F.celu(x, 0.5).numpy())


def test_rrelu_training_slopes_lie_in_bounds_and_eval_is_leaky_relu():
    x = -ct.rand(1000) - 0.1
    out = F.rrelu(x, 0.1, 0.3, training=True)
    slopes = (out / x).numpy()
    assert slopes.min() >= 0.1 and slopes.max() <= 0.3 and slopes.std() > 0.01
    np.testing.assert_allclose(F.rrelu(x, 0.1, 0.3).numpy(), (x * 0.2).numpy(), rtol=1e-6)
    y = x.clone()
    F.rrelu_(y, training=True)
    assert (y.numpy() != x.numpy()).all()
    m = cnn.RReLU(0.1, 0.3)
    m.eval()
    np.testing.assert_allclose(m(x).numpy(), (x * 0.2).numpy(), rtol=1e-6)


def test_gumbel_softmax_soft_and_hard():
    logits = ct.tensor(RNG.standard_normal((64, 5)), requires_grad=True)
    soft = F.gumbel_softmax(logits, tau=0.5)
    np.testing.assert_allclose(soft.sum(-1).detach().numpy(), 1.0, rtol=1e-10)
    hard = F.gumbel_softmax(logits, hard=True)
    h = hard.detach().numpy()
    assert set(np.unique(h)) == {0.0, 1.0} and (h.sum(-1) == 1).all()
    (hard * ct.tensor(RNG.standard_normal((64, 5)))).sum().backward()
    assert logits.grad is not None and np.abs(logits.grad.numpy()).sum() > 0
    # the sampled class follows the logits: a dominant logit wins almost always
    peaked = ct.tensor(np.tile([8.0, 0, 0, 0], (200, 1)))
    assert F.gumbel_softmax(peaked, hard=True).numpy()[:, 0].mean() > 0.95


LAYERS = [
    ("Hardshrink", (0.3,), (3, 4)),
    ("Softshrink", (), (3, 4)),
    ("RReLU", (0.1, 0.3), (3, 4)),
    ("MaxPool3d", (3, 2, 1), (1, 2, 5, 5, 5)),
    ("AvgPool3d", (2,), (1, 2, 4, 4, 4)),
    ("AdaptiveAvgPool3d", ((2, None, 3),), (1, 2, 4, 4, 5)),
    ("AdaptiveMaxPool3d", (2,), (1, 2, 4, 4, 5)),
    ("LPPool1d", (2, 3), (1, 2, 7)),
    ("LPPool2d", (2, 2), (1, 2, 4, 5)),
    ("LPPool3d", (2, 2), (1, 2, 4, 4, 4)),
    ("Unfold", ((2, 3),), (1, 2, 5, 6)),
    ("Fold", ((4, 5), (2, 2)), (1, 8, 12)),
    ("BatchNorm3d", (2,), (3, 2, 2, 3, 2)),
    ("SyncBatchNorm", (2,), (3, 2, 4)),
    ("CrossMapLRN2d", (3, 0.1, 0.75, 2), (2, 5, 3, 3)),
    ("CrossMapLRN2d", (4,), (1, 6, 2, 2)),
]


@pytest.mark.parametrize(
    "name,args,shape", LAYERS, ids=[f"{c[0]}{i}" for i, c in enumerate(LAYERS)]
)
def test_layers_match_torch(name, args, shape):
    torch = pytest.importorskip("torch")
    ours, theirs = getattr(cnn, name)(*args), getattr(torch.nn, name)(*args)
    train = name in ("BatchNorm3d", "SyncBatchNorm")
    ours.train(train)
    theirs.train(train)
    x = np.abs(RNG.standard_normal(shape)).astype(np.float32) + 0.1
    _close(ours(ct.tensor(x)), theirs(torch.tensor(x)), atol=1e-5)
    assert repr(ours).replace("coretorch.", "torch.") == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())


def test_fractional_and_unpool_layers():
    m = cnn.FractionalMaxPool2d(2, output_ratio=0.5)
    assert tuple(m(ct.randn(1, 2, 8, 8)).shape) == (1, 2, 4, 4)
    out, idx = cnn.FractionalMaxPool3d(2, output_size=3, return_indices=True)(
        ct.randn(1, 2, 6, 6, 6)
    )
    assert tuple(out.shape) == tuple(idx.shape) == (1, 2, 3, 3, 3)
    with pytest.raises(ValueError, match="only one of output_size and output_ratio"):
        cnn.FractionalMaxPool2d(2, output_size=3, output_ratio=0.5)
    x = ct.randn(1, 1, 4, 4, 4)
    v, i = cnn.MaxPool3d(2, return_indices=True)(x)
    back = cnn.MaxUnpool3d(2)(v, i)
    assert tuple(back.shape) == (1, 1, 4, 4, 4)
    assert float(back.sum()) == pytest.approx(float(v.sum()), rel=1e-6)


def test_parameter_containers():
    pl = cnn.ParameterList([ct.randn(2, 3), cnn.Parameter(ct.randn(4))])
    assert all(isinstance(p, cnn.Parameter) for p in pl)
    assert list(pl.state_dict()) == ["0", "1"] and len(list(pl.parameters())) == 2
    pl.append(ct.zeros(1))
    assert len(pl) == 3 and isinstance(pl[-1], cnn.Parameter)
    pd = cnn.ParameterDict({"a": ct.randn(2), "b": cnn.Parameter(ct.randn(3))})
    pd["c"] = ct.zeros(1)
    del pd["a"]
    assert list(pd.state_dict()) == ["b", "c"] and "a" not in pd and len(pd) == 2
    holder = cnn.Module()
    holder.params = pd
    assert [n for n, _ in holder.named_parameters()] == ["params.b", "params.c"]
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        cnn.NLLLoss2d()
    assert any("NLLLoss2d has been deprecated" in str(x.message) for x in w)


def test_convert_sync_batchnorm_keeps_parameters():
    bn = cnn.BatchNorm2d(3)
    model = cnn.Sequential(cnn.Conv2d(2, 3, 1), bn)
    converted = cnn.SyncBatchNorm.convert_sync_batchnorm(model)
    assert isinstance(converted[1], cnn.SyncBatchNorm)
    assert converted[1].weight is bn.weight and converted[1].running_mean is bn.running_mean


def test_adaptive_log_softmax_matches_torch():
    torch = pytest.importorskip("torch")
    ours = cnn.AdaptiveLogSoftmaxWithLoss(8, 20, [4, 10], div_value=2.0, head_bias=True)
    theirs = torch.nn.AdaptiveLogSoftmaxWithLoss(8, 20, [4, 10], div_value=2.0, head_bias=True)
    state = {k: v.detach().numpy() for k, v in theirs.state_dict().items()}
    assert list(ours.state_dict()) == list(state)
    ours.load_state_dict({k: ct.tensor(v) for k, v in state.items()})
    x = RNG.standard_normal((6, 8)).astype(np.float32)
    target = np.array([0, 3, 5, 9, 12, 19])
    a = ours(ct.tensor(x), ct.tensor(target))
    b = theirs(torch.tensor(x), torch.tensor(target))
    _close(a.output, b.output, atol=1e-5)
    _close(a.loss, b.loss, atol=1e-5)
    _close(ours.log_prob(ct.tensor(x)), theirs.log_prob(torch.tensor(x)), atol=1e-5)
    np.testing.assert_array_equal(
        ours.predict(ct.tensor(x)).numpy(), theirs.predict(torch.tensor(x)).numpy()
    )
    a.loss.backward()
    b.loss.backward()
    np.testing.assert_allclose(
        ours.tail[1][0].weight.grad.numpy(), theirs.tail[1][0].weight.grad.numpy(), atol=1e-5
    )
    single = ours(ct.tensor(x[0]), ct.tensor(target[0]))
    assert single.output.dim() == 0
    with pytest.raises(RuntimeError, match="Target values should be in"):
        ours(ct.tensor(x), ct.tensor(np.array([0, 1, 2, 3, 4, 20])))
    with pytest.raises(ValueError, match="cutoffs should be a sequence of unique"):
        cnn.AdaptiveLogSoftmaxWithLoss(8, 20, [10, 4])


@pytest.mark.parametrize(
    "kw",
    [dict(), dict(reduction="sum", label_smoothing=0.1), dict(reduction="none", ignore_index=2)],
)
def test_linear_cross_entropy_matches_torch(kw):
    torch = pytest.importorskip("torch")
    x = RNG.standard_normal((5, 4))
    w = RNG.standard_normal((6, 4))
    b = RNG.standard_normal(6)
    t = np.array([0, 2, 5, 1, 2])
    _value_and_grads(
        lambda a, ww, bb: F.linear_cross_entropy(a, ww, ct.tensor(t), linear_bias=bb, **kw),
        lambda a, ww, bb: torch.nn.functional.linear_cross_entropy(
            a, ww, torch.tensor(t), linear_bias=bb, **kw
        ),
        x,
        w,
        b,
    )


def test_linear_cross_entropy_layer_k_dim_matches_torch():
    torch = pytest.importorskip("torch")
    ours = cnn.LinearCrossEntropyLoss(4, 3, out_features=(2,), bias=True)
    theirs = torch.nn.LinearCrossEntropyLoss(4, 3, out_features=(2,), bias=True)
    state = {k: v.detach().numpy() for k, v in theirs.state_dict().items()}
    assert list(ours.state_dict()) == list(state)
    ours.load_state_dict({k: ct.tensor(v) for k, v in state.items()})
    x = RNG.standard_normal((5, 4)).astype(np.float32)
    t = RNG.integers(0, 3, (5, 2))
    _close(ours(ct.tensor(x), ct.tensor(t)), theirs(torch.tensor(x), torch.tensor(t)), atol=1e-5)
    assert repr(ours).replace("coretorch.", "torch.") == repr(theirs)
    opts = cnn.LinearCrossEntropyOptions(batch_chunk_size=2)
    flat = cnn.LinearCrossEntropyLoss(4, 3, options=opts)
    assert float(flat(ct.tensor(x), ct.tensor(t[:, 0]))) > 0
