"""coretorch.autocast against torch.autocast on cpu (bfloat16): the dtype each op returns and the
values of a small model, plus nesting, threads, the decorator form and the weight cast cache."""

import threading
import warnings

import numpy as np
import pytest

import coretorch as ct
import coretorch.nn.functional as F


def _pair(shape, seed, dtype="float32"):
    a = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    return a


# (name, fn(lib, F, *tensors), input shapes): run under both autocasts, dtypes must agree
CASES = [
    ("mm", lambda m, F, a, b: m.mm(a, b), [(3, 4), (4, 5)]),
    ("matmul", lambda m, F, a, b: a @ b, [(2, 3, 4), (4, 5)]),
    ("bmm", lambda m, F, a, b: m.bmm(a, b), [(2, 3, 4), (2, 4, 5)]),
    ("addmm", lambda m, F, c, a, b: m.addmm(c, a, b), [(5,), (3, 4), (4, 5)]),
    ("linear", lambda m, F, x, w, b: F.linear(x, w, b), [(3, 4), (5, 4), (5,)]),
    ("conv1d", lambda m, F, x, w: F.conv1d(x, w), [(1, 2, 8), (3, 2, 3)]),
    (
        "conv2d",
        lambda m, F, x, w, b: F.conv2d(x, w, b, padding=1),
        [(1, 2, 5, 5), (3, 2, 3, 3), (3,)],
    ),
    ("conv3d", lambda m, F, x, w: F.conv3d(x, w), [(1, 2, 4, 4, 4), (3, 2, 2, 2, 2)]),
    ("conv_transpose2d", lambda m, F, x, w: F.conv_transpose2d(x, w), [(1, 2, 4, 4), (2, 3, 2, 2)]),
    ("prelu", lambda m, F, x, w: F.prelu(x, w), [(2, 3, 4), (3,)]),
    ("relu", lambda m, F, x: F.relu(x), [(3, 4)]),
    ("gelu", lambda m, F, x: F.gelu(x), [(3, 4)]),
    ("softmax", lambda m, F, x: F.softmax(x, -1), [(3, 4)]),
    ("log_softmax", lambda m, F, x: F.log_softmax(x, -1), [(3, 4)]),
    ("exp", lambda m, F, x: m.exp(x), [(3, 4)]),
    ("sum", lambda m, F, x: x.sum(), [(3, 4)]),
    ("layer_norm", lambda m, F, x: F.layer_norm(x, (4,)), [(3, 4)]),
    ("mse_loss", lambda m, F, a, b: F.mse_loss(a, b), [(3, 4), (3, 4)]),
    ("l1_loss", lambda m, F, a, b: F.l1_loss(a, b), [(3, 4), (3, 4)]),
    (
        "bce_logits",
        lambda m, F, a, b: F.binary_cross_entropy_with_logits(a, b.sigmoid()),
        [(3, 4), (3, 4)],
    ),
    ("kl_div", lambda m, F, a, b: F.kl_div(a, b, reduction="batchmean"), [(3, 4), (3, 4)]),
    ("cat-mixed", lambda m, F, a, b: m.cat([a @ a.t(), b]), [(3, 3), (2, 3)]),
    ("stack-low", lambda m, F, a, b: m.stack([a @ a, b @ b]), [(3, 3), (3, 3)]),
    ("add-mixed", lambda m, F, a, b: (a @ a) + b, [(3, 3), (3, 3)]),
    ("float64-untouched", lambda m, F, a, b: a.double() @ b.double(), [(3, 4), (4, 2)]),
]


@pytest.mark.parametrize("name,fn,shapes", CASES, ids=[c[0] for c in CASES])
def test_op_dtypes_and_values_match_torch_autocast(name, fn, shapes):
    torch = pytest.importorskip("torch")
    import torch.nn.functional as TF

    arrays = [_pair(s, i) for i, s in enumerate(shapes)]
    with torch.autocast("cpu", dtype=torch.bfloat16):
        want = fn(torch, TF, *[torch.from_numpy(a) for a in arrays])
    with ct.autocast("cpu", dtype=ct.bfloat16):
        got = fn(ct, F, *[ct.tensor(a) for a in arrays])
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1], name
    np.testing.assert_allclose(got.float().numpy(), want.float().numpy(), rtol=1.6e-2, atol=2e-2)


def test_nll_and_cross_entropy_run_in_float32():
    torch = pytest.importorskip("torch")
    x = _pair((4, 5), 0)
    y = np.array([0, 3, 1, 4])
    with torch.autocast("cpu"):
        tx = torch.from_numpy(x) @ torch.eye(5)
        want = [
            torch.nn.functional.cross_entropy(tx, torch.from_numpy(y)),
            torch.nn.functional.nll_loss(tx.log_softmax(1), torch.from_numpy(y)),
        ]
    with ct.autocast("cpu"):
        cx = ct.tensor(x) @ ct.eye(5)
        got = [F.cross_entropy(cx, ct.tensor(y)), F.nll_loss(cx.log_softmax(1), ct.tensor(y))]
    assert cx.dtype is ct.bfloat16
    # cross_entropy casts its bfloat16 logits to float32 first: float32 agreement; nll_loss
    # reads a bfloat16 log_softmax: bfloat16 agreement
    for g, w, rtol in zip(got, want, (1e-6, 1.6e-2)):
        assert g.dtype is ct.float32 and w.dtype == torch.float32
        assert abs(g.item() - w.item()) <= rtol * abs(w.item())


def _model(lib):
    nn = lib.nn
    return nn.ModuleDict(
        {
            "conv": nn.Conv2d(2, 4, 3, padding=1),
            "fc1": nn.Linear(4 * 6 * 6, 16),
            "fc2": nn.Linear(16, 5),
        }
    )


def _forward(lib, F, m, x, y, trace):
    h = m["conv"](x)
    trace.append(h)
    h = F.relu(h).flatten(1)
    trace.append(h)
    h = m["fc1"](h)
    trace.append(h)
    h = F.relu(h)
    trace.append(h)
    logits = m["fc2"](h)
    trace.append(logits)
    trace.append(F.softmax(logits, dim=1))
    loss = F.cross_entropy(logits, y)
    trace.append(loss)
    return loss


def test_small_model_matches_torch_op_by_op():
    torch = pytest.importorskip("torch")
    import torch.nn.functional as TF

    torch.manual_seed(0)
    tm = _model(torch)
    cm = _model(ct)
    cm.load_state_dict({k: ct.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    x = _pair((3, 2, 6, 6), 1)
    y = np.array([1, 4, 0])
    t_trace, c_trace = [], []
    with torch.autocast("cpu", dtype=torch.bfloat16):
        tloss = _forward(torch, TF, tm, torch.from_numpy(x), torch.from_numpy(y), t_trace)
    with ct.autocast("cpu", dtype=ct.bfloat16):
        closs = _forward(ct, F, cm, ct.tensor(x), ct.tensor(y), c_trace)
    assert (
        [str(t.dtype)[6:] for t in t_trace]
        == [str(c.dtype)[10:] for c in c_trace]
        == ["bfloat16"] * 6 + ["float32"]
    )
    for t, c in zip(t_trace, c_trace):
        np.testing.assert_allclose(
            c.detach().float().numpy(), t.detach().float().numpy(), rtol=1.6e-2, atol=1e-2
        )
    tloss.backward()
    closs.backward()
    for (name, tp), cp in zip(tm.named_parameters(), cm.parameters()):
        assert cp.grad.dtype is ct.float32, name  # gradients reach the float32 parameters
        np.testing.assert_allclose(
            cp.grad.numpy(), tp.grad.numpy(), rtol=5e-2, atol=5e-3, err_msg=name
        )


def test_nested_disable_and_restore():
    a = ct.randn(3, 3)
    assert not ct.is_autocast_enabled("cpu")
    with ct.autocast("cpu"):
        assert ct.is_autocast_enabled("cpu") and ct.get_autocast_dtype("cpu") is ct.bfloat16
        assert (a @ a).dtype is ct.bfloat16
        with ct.autocast("cpu", enabled=False):
            assert not ct.is_autocast_enabled("cpu")
            assert (a @ a).dtype is ct.float32
            with ct.autocast("cpu", dtype=ct.float16):
                assert (a @ a).dtype is ct.float16
        assert (a @ a).dtype is ct.bfloat16
    assert (a @ a).dtype is ct.float32 and not ct.is_autocast_enabled("cpu")


def test_state_is_thread_local():
    a = ct.randn(3, 3)
    seen = []
    with ct.autocast("cpu"):
        th = threading.Thread(
            target=lambda: seen.append(((a @ a).dtype, ct.is_autocast_enabled("cpu")))
        )
        th.start()
        th.join()
        assert (a @ a).dtype is ct.bfloat16
    assert seen == [(ct.float32, False)]


def test_decorator_and_legacy_spellings():
    a = ct.randn(2, 2)

    @ct.autocast("cpu")
    def f(x):
        return x @ x

    assert f(a).dtype is ct.bfloat16 and (a @ a).dtype is ct.float32
    with ct.amp.autocast("cpu"):
        assert (a @ a).dtype is ct.bfloat16
    with ct.cpu.amp.autocast(dtype=ct.float16):
        assert (a @ a).dtype is ct.float16
    import coretorch.cpu.amp
    import coretorch.cuda.amp  # noqa: F401

    assert coretorch.cpu.amp.autocast is ct.cpu.amp.autocast


def test_parameter_cast_is_cached_for_the_region():
    w = ct.randn(3, 3, requires_grad=True)
    x = ct.randn(3, 3)
    with ct.autocast("cpu"):
        y1, y2 = x @ w, x @ w
        # both products used the same cast of w: one ToCopy node in both graphs
        assert y1.grad_fn.next_functions[1][0] is y2.grad_fn.next_functions[1][0]
        assert len(ct.amp.state.STATE.cache) == 1
    assert len(ct.amp.state.STATE.cache) == 0
    with ct.autocast("cpu", cache_enabled=False):
        y1, y2 = x @ w, x @ w
        assert y1.grad_fn.next_functions[1][0] is not y2.grad_fn.next_functions[1][0]


def test_refusals_and_warnings():
    with pytest.raises(RuntimeError, match="unsupported autocast device_type 'tpu'"):
        ct.autocast("tpu")
    with pytest.raises(ValueError, match="device_type"):
        ct.autocast(ct.device("cpu"))
    with pytest.warns(UserWarning, match="not supported. Disabling autocast"):
        ac = ct.autocast("cpu", dtype=ct.float64)
    with ac:
        assert not ct.is_autocast_enabled("cpu")
    if not ct.cuda.is_available():
        with pytest.warns(UserWarning, match="CUDA is not available"):
            with ct.autocast("cuda"):
                assert not ct.is_autocast_enabled("cuda")


def test_out_of_region_calls_pay_no_autocast_kernel():
    a = ct.randn(2, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert (a @ a).dtype is ct.float32
    op = ct.ops.aten.mm
    assert "Autocast" in op.kernel_keys()
