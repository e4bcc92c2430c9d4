"""nn layers against PyTorch's (same weights via state_dict): outputs, gradients, running stats,
train/eval behaviour; plus meta-device shapes and nn.utils."""

from __future__ import annotations

import math

import numpy as np
import pytest

import coretorch as ct
import coretorch.nn as nn

RNG = np.random.default_rng(7)


def _arr(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def _torch():
    return pytest.importorskip("torch")


def _pair(make_ct, make_t):
    """The same layer in both libraries, torch's weights copied from ours."""
    torch = _torch()
    ours, theirs = make_ct(), make_t()
    theirs.load_state_dict({k: torch.tensor(v.numpy()) for k, v in ours.state_dict().items()})
    return ours, theirs


def _check(ours, theirs, x: np.ndarray, rtol=1e-4, atol=1e-5, grad=True):
    torch = _torch()
    xc = ct.tensor(x).requires_grad_(grad)
    xt = torch.tensor(x).requires_grad_(grad)
    oc, ot = ours(xc), theirs(xt)
    np.testing.assert_allclose(oc.detach().numpy(), ot.detach().numpy(), rtol=rtol, atol=atol)
    if grad:
        w = _arr(*ot.shape)
        (oc * ct.tensor(w)).sum().backward()
        (ot * torch.tensor(w)).sum().backward()
        np.testing.assert_allclose(xc.grad.numpy(), xt.grad.numpy(), rtol=rtol, atol=atol)
        for (n, pc), (_, pt) in zip(ours.named_parameters(), theirs.named_parameters()):
            np.testing.assert_allclose(
                pc.grad.numpy(), pt.grad.numpy(), rtol=rtol, atol=atol, err_msg=n
            )
    return oc


def test_linear_and_bilinear():
    tnn = _torch().nn
    _check(*_pair(lambda: nn.Linear(5, 3), lambda: tnn.Linear(5, 3)), _arr(4, 5))
    _check(
        *_pair(lambda: nn.Linear(5, 3, bias=False), lambda: tnn.Linear(5, 3, bias=False)),
        _arr(2, 6, 5),
    )
    ours, theirs = _pair(lambda: nn.Bilinear(3, 4, 2), lambda: tnn.Bilinear(3, 4, 2))
    a, b = _arr(5, 3), _arr(5, 4)
    torch = _torch()
    np.testing.assert_allclose(
        ours(ct.tensor(a), ct.tensor(b)).detach().numpy(),
        theirs(torch.tensor(a), torch.tensor(b)).detach().numpy(),
        rtol=1e-4,
        atol=1e-5,
    )


@pytest.mark.parametrize(
    "kw",
    [
        dict(),
        dict(stride=2, padding=1),
        dict(padding="same"),
        dict(padding="valid", dilation=2),
        dict(padding=1, groups=2, bias=False),
        dict(padding=(1, 2), padding_mode="reflect"),
        dict(padding="same", padding_mode="replicate"),
        dict(padding=1, padding_mode="circular"),
    ],
)
def test_conv2d(kw):
    tnn = _torch().nn
    ours, theirs = _pair(lambda: nn.Conv2d(4, 6, 3, **kw), lambda: tnn.Conv2d(4, 6, 3, **kw))
    _check(ours, theirs, _arr(2, 4, 9, 8))


def test_conv1d():
    tnn = _torch().nn
    for kw in (
        dict(padding=2),
        dict(stride=2),
        dict(padding="same", dilation=2),
        dict(padding=1, padding_mode="reflect"),
    ):
        ours, theirs = _pair(lambda: nn.Conv1d(3, 5, 3, **kw), lambda: tnn.Conv1d(3, 5, 3, **kw))
        _check(ours, theirs, _arr(2, 3, 11))
    with pytest.raises(ValueError, match="padding='same' is not supported for strided"):
        nn.Conv2d(1, 1, 3, stride=2, padding="same")
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        nn.Conv2d(3, 4, 3, groups=2)


def test_pooling_layers():
    tnn = _torch().nn
    x = _arr(2, 3, 9, 9)
    for ours, theirs in (
        (nn.MaxPool2d(2), tnn.MaxPool2d(2)),
        (nn.MaxPool2d(3, 2, 1, ceil_mode=True), tnn.MaxPool2d(3, 2, 1, ceil_mode=True)),
        (nn.AvgPool2d(3, 2, 1), tnn.AvgPool2d(3, 2, 1)),
        (
            nn.AvgPool2d(2, count_include_pad=False, padding=1),
            tnn.AvgPool2d(2, count_include_pad=False, padding=1),
        ),
        (nn.AdaptiveAvgPool2d((4, 2)), tnn.AdaptiveAvgPool2d((4, 2))),
        (nn.AdaptiveAvgPool2d(1), tnn.AdaptiveAvgPool2d(1)),
    ):
        _check(ours, theirs, x)
    vals, idx = nn.MaxPool2d(2, return_indices=True)(ct.tensor(x))
    tv, ti = tnn.MaxPool2d(2, return_indices=True)(_torch().tensor(x))
    np.testing.assert_array_equal(idx.numpy(), ti.numpy())


def test_batchnorm_running_stats_and_eval():
    tnn = _torch().nn
    for make_c, make_t, shape in (
        (
            lambda: nn.BatchNorm2d(3, momentum=0.2),
            lambda: tnn.BatchNorm2d(3, momentum=0.2),
            (6, 3, 4, 4),
        ),
        (lambda: nn.BatchNorm1d(4), lambda: tnn.BatchNorm1d(4), (8, 4)),
        (
            lambda: nn.BatchNorm1d(4, momentum=None),
            lambda: tnn.BatchNorm1d(4, momentum=None),
            (5, 4, 3),
        ),
        (
            lambda: nn.BatchNorm1d(4, affine=False, track_running_stats=False),
            lambda: tnn.BatchNorm1d(4, affine=False, track_running_stats=False),
            (5, 4),
        ),
    ):
        ours, theirs = _pair(make_c, make_t)
        for _ in range(3):
            _check(ours, theirs, _arr(*shape) * 2 + 1)
        for (n, a), (_, b) in zip(ours.state_dict().items(), theirs.state_dict().items()):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-6, err_msg=n)
        ours.eval()
        theirs.eval()
        _check(ours, theirs, _arr(*shape))
    with pytest.raises(ValueError, match=r"expected 4D input \(got 2D input\)"):
        nn.BatchNorm2d(3)(ct.randn(2, 3))
    with pytest.raises(ValueError, match="Expected more than 1 value per channel"):
        nn.BatchNorm1d(3)(ct.randn(1, 3))


def test_norm_layers():
    tnn = _torch().nn
    x = _arr(3, 4, 5)
    ours, theirs = _pair(lambda: nn.LayerNorm(5), lambda: tnn.LayerNorm(5))
    with ct.no_grad():
        ours.weight.copy_(ct.tensor(_arr(5)))
    theirs.load_state_dict({k: _torch().tensor(v.numpy()) for k, v in ours.state_dict().items()})
    _check(ours, theirs, x)
    _check(
        *_pair(lambda: nn.LayerNorm((4, 5), bias=False), lambda: tnn.LayerNorm((4, 5), bias=False)),
        x,
    )
    _check(*_pair(lambda: nn.GroupNorm(2, 4), lambda: tnn.GroupNorm(2, 4)), _arr(2, 4, 3, 3))
    _check(*_pair(lambda: nn.RMSNorm(5, eps=1e-6), lambda: tnn.RMSNorm(5, eps=1e-6)), x)


def test_embedding_padding_idx_gets_no_gradient():
    tnn = _torch().nn
    torch = _torch()
    ours, theirs = _pair(
        lambda: nn.Embedding(6, 3, padding_idx=2), lambda: tnn.Embedding(6, 3, padding_idx=2)
    )
    assert ours.weight[2].tolist() == [0.0, 0.0, 0.0]
    idx = np.array([[2, 0, 5], [2, 2, 1]])
    oc, ot = ours(ct.tensor(idx)), theirs(torch.tensor(idx))
    np.testing.assert_allclose(oc.detach().numpy(), ot.detach().numpy())
    oc.sum().backward()
    ot.sum().backward()
    np.testing.assert_allclose(ours.weight.grad.numpy(), theirs.weight.grad.numpy())
    assert ours.weight.grad[2].tolist() == [0.0, 0.0, 0.0]
    pre = nn.Embedding.from_pretrained(ct.ones(3, 2))
    assert not pre.weight.requires_grad and pre(ct.tensor([1])).tolist() == [[1.0, 1.0]]


def test_activation_and_shape_layers():
    tnn = _torch().nn
    x = _arr(3, 4, 2)
    for c, t in (
        (nn.ReLU(), tnn.ReLU()),
        (nn.LeakyReLU(0.1), tnn.LeakyReLU(0.1)),
        (nn.GELU(), tnn.GELU()),
        (nn.GELU("tanh"), tnn.GELU("tanh")),
        (nn.SiLU(), tnn.SiLU()),
        (nn.Tanh(), tnn.Tanh()),
        (nn.Sigmoid(), tnn.Sigmoid()),
        (nn.Softmax(1), tnn.Softmax(1)),
        (nn.LogSoftmax(-1), tnn.LogSoftmax(-1)),
        (nn.ELU(), tnn.ELU()),
        (nn.Softplus(2.0), tnn.Softplus(2.0)),
        (nn.Hardtanh(-0.5, 0.5), tnn.Hardtanh(-0.5, 0.5)),
        (nn.ReLU6(), tnn.ReLU6()),
        (nn.Mish(), tnn.Mish()),
        (nn.Hardswish(), tnn.Hardswish()),
        (nn.Flatten(), tnn.Flatten()),
        (nn.Flatten(0, 1), tnn.Flatten(0, 1)),
        (nn.Unflatten(1, (2, 2)), tnn.Unflatten(1, (2, 2))),
        (nn.Identity(), tnn.Identity()),
    ):
        _check(c, t, x)
    y = ct.tensor(x)
    assert nn.ReLU(inplace=True)(y) is y and y.numpy().min() >= 0


def test_dropout_layer_train_and_eval():
    d = nn.Dropout(0.5)
    x = ct.ones(100, 100)
    ct.manual_seed(1)
    y = d(x).numpy()
    assert set(np.unique(y)) == {0.0, 2.0}
    d.eval()
    assert d(x) is x
    with pytest.raises(ValueError, match="dropout probability"):
        nn.Dropout(-0.1)


def test_loss_modules():
    tnn = _torch().nn
    torch = _torch()
    x, t = _arr(5, 4), RNG.integers(0, 4, size=5)
    w = np.abs(_arr(4)) + 0.5
    pairs = [
        (nn.CrossEntropyLoss(), tnn.CrossEntropyLoss()),
        (
            nn.CrossEntropyLoss(weight=ct.tensor(w), label_smoothing=0.1, ignore_index=1),
            tnn.CrossEntropyLoss(weight=torch.tensor(w), label_smoothing=0.1, ignore_index=1),
        ),
        (nn.NLLLoss(reduction="sum"), tnn.NLLLoss(reduction="sum")),
    ]
    for c, tt in pairs:
        np.testing.assert_allclose(
            float(c(ct.tensor(x), ct.tensor(t))),
            float(tt(torch.tensor(x), torch.tensor(t))),
            rtol=1e-5,
        )
    y = _arr(5, 4)
    for c, tt in (
        (nn.MSELoss(), tnn.MSELoss()),
        (nn.L1Loss(reduction="sum"), tnn.L1Loss(reduction="sum")),
        (nn.SmoothL1Loss(beta=0.5), tnn.SmoothL1Loss(beta=0.5)),
        (
            nn.BCEWithLogitsLoss(pos_weight=ct.tensor(w)),
            tnn.BCEWithLogitsLoss(pos_weight=torch.tensor(w)),
        ),
    ):
        tgt = np.abs(y) / (1 + np.abs(y))
        np.testing.assert_allclose(
            float(c(ct.tensor(x), ct.tensor(tgt))),
            float(tt(torch.tensor(x), torch.tensor(tgt))),
            rtol=1e-5,
        )
    p = 1 / (1 + np.exp(-x))
    tgt = (RNG.random((5, 4)) > 0.5).astype(np.float32)
    np.testing.assert_allclose(
        float(nn.BCELoss()(ct.tensor(p), ct.tensor(tgt))),
        float(tnn.BCELoss()(torch.tensor(p), torch.tensor(tgt))),
        rtol=1e-5,
    )
    assert "weight" in dict(nn.CrossEntropyLoss(weight=ct.ones(3)).named_buffers())
    with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated"):
        assert nn.MSELoss(size_average=False).reduction == "sum"


def test_sequential_model_trains():
    """A small MLP learns XOR with SGD: the end-to-end loop works."""
    ct.manual_seed(0)
    x = ct.tensor([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
    y = ct.tensor([0, 1, 1, 0])
    model = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Linear(16, 2))
    opt = ct.optim.SGD(model.parameters(), lr=0.5, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    for _ in range(200):
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
    assert float(loss) < 0.05
    assert model(x).argmax(1).tolist() == [0, 1, 1, 0]


def test_layers_on_meta_device():
    model = nn.Sequential(
        nn.Conv2d(1, 8, 3, padding=1),
        nn.BatchNorm2d(8),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Dropout(0.25),
        nn.Flatten(),
        nn.Linear(8 * 4 * 4, 10),
    ).to("meta")
    out = model(ct.empty(5, 1, 8, 8, device="meta"))
    assert out.shape == (5, 10) and out.device.type == "meta"
    loss = nn.CrossEntropyLoss(label_smoothing=0.1)(out, ct.empty(5, dtype=ct.int64, device="meta"))
    assert loss.shape == () and loss.device.type == "meta"
    loss.backward()
    assert model[0].weight.grad.shape == (8, 1, 3, 3)
    opt = ct.optim.AdamW(model.parameters())
    opt.step()
    assert opt.state[model[0].weight]["exp_avg"].device.type == "meta"
    big = nn.Linear(4096, 4096, device="meta")
    assert big.weight.device.type == "meta" and big.weight.shape == (4096, 4096)
    att = nn.MultiheadAttention(16, 4, batch_first=True, device="meta")
    q = ct.empty(2, 7, 16, device="meta")
    o, w = att(q, q, q)
    assert o.shape == (2, 7, 16) and w.shape == (2, 7, 7)


# ---- nn.utils ---------------------------------------------------------------------------------


def _grads_model():
    m = nn.Linear(3, 2)
    m.weight.grad = ct.tensor([[3.0, 0.0, 0.0], [0.0, 4.0, 0.0]])
    m.bias.grad = ct.tensor([0.0, 12.0])
    return m


def test_clip_grad_norm():
    m = _grads_model()
    total = nn.utils.clip_grad_norm_(m.parameters(), max_norm=6.5)
    assert float(total) == pytest.approx(13.0)
    assert m.bias.grad.tolist()[1] == pytest.approx(12.0 * 6.5 / (13.0 + 1e-6))
    m = _grads_model()
    total = nn.utils.clip_grad_norm_(m.parameters(), max_norm=100.0)
    assert float(total) == pytest.approx(13.0) and m.bias.grad.tolist() == [0.0, 12.0]
    m = _grads_model()
    total = nn.utils.clip_grad_norm_(m.parameters(), 1.0, norm_type=math.inf)
    assert float(total) == 12.0
    np.testing.assert_allclose(m.weight.grad.numpy().max(), 4.0 / (12.0 + 1e-6), rtol=1e-6)
    m = _grads_model()
    total = nn.utils.clip_grad_norm_(m.parameters(), 1.0, norm_type=1)
    assert float(total) == pytest.approx(19.0)
    m.bias.grad = ct.tensor([float("nan"), 1.0])
    with pytest.raises(RuntimeError, match="non-finite"):
        nn.utils.clip_grad_norm_(m.parameters(), 1.0, error_if_nonfinite=True)
    assert float(nn.utils.clip_grad_norm_([nn.Parameter(ct.ones(1))], 1.0)) == 0.0


def test_clip_grad_norm_matches_torch():
    torch = _torch()
    grads = [_arr(3, 4), _arr(5), _arr(2, 2, 2)]
    cps = [nn.Parameter(ct.zeros(*g.shape)) for g in grads]
    tps = [torch.nn.Parameter(torch.zeros(*g.shape)) for g in grads]
    for c, t, g in zip(cps, tps, grads):
        c.grad, t.grad = ct.tensor(g), torch.tensor(g)
    for p in (2.0, 3.0, math.inf):
        tc = nn.utils.clip_grad_norm_(cps, 0.7, norm_type=p)
        tt = torch.nn.utils.clip_grad_norm_(tps, 0.7, norm_type=p)
        assert float(tc) == pytest.approx(float(tt), rel=1e-5)
        for c, t in zip(cps, tps):
            np.testing.assert_allclose(c.grad.numpy(), t.grad.numpy(), rtol=1e-5, atol=1e-7)


def test_clip_grad_value_and_vector_conversion():
    m = _grads_model()
    nn.utils.clip_grad_value_(m.parameters(), 3.5)
    assert m.weight.grad.tolist() == [[3.0, 0.0, 0.0], [0.0, 3.5, 0.0]]
    assert m.bias.grad.tolist() == [0.0, 3.5]
    vec = nn.utils.parameters_to_vector(m.parameters())
    assert vec.shape == (8,)
    np.testing.assert_array_equal(vec.detach().numpy()[:6], m.weight.detach().numpy().ravel())
    w = m.weight
    nn.utils.vector_to_parameters(ct.arange(8, dtype=ct.float32), m.parameters())
    assert m.weight is w and m.weight.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    assert m.bias.tolist() == [6.0, 7.0] and m.weight.requires_grad
    with pytest.raises(RuntimeError, match="the vector has 3 elements but the parameters have 8"):
        nn.utils.vector_to_parameters(ct.zeros(3), m.parameters())
