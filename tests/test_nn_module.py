"""nn.Module: registration, iterators, modes, to(), zero_grad, apply, state_dict, hooks, repr."""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest

import coretorch as ct
import coretorch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 3)
        self.bn = nn.BatchNorm1d(3)
        self.fc2 = nn.Linear(3, 2, bias=False)
        self.scale = nn.Parameter(ct.ones(1))
        self.register_buffer("steps", ct.zeros((), dtype=ct.int64))
        self.register_buffer("scratch", ct.zeros(2), persistent=False)

    def forward(self, x):
        return self.fc2(self.bn(self.fc1(x))) * self.scale


def test_registration_and_named_iterators():
    m = Net()
    names = [n for n, _ in m.named_parameters()]
    assert names == ["scale", "fc1.weight", "fc1.bias", "bn.weight", "bn.bias", "fc2.weight"]
    assert [n for n, _ in m.named_buffers()] == [
        "steps",
        "scratch",
        "bn.running_mean",
        "bn.running_var",
        "bn.num_batches_tracked",
    ]
    assert [n for n, _ in m.named_children()] == ["fc1", "bn", "fc2"]
    assert [n for n, _ in m.named_modules()] == ["", "fc1", "bn", "fc2"]
    assert len(list(m.parameters())) == 6
    assert len(list(m.parameters(recurse=False))) == 1
    assert all(p.requires_grad for p in m.parameters())
    assert m.get_submodule("fc1") is m.fc1
    assert m.get_parameter("fc1.weight") is m.fc1.weight
    assert m.get_buffer("bn.running_mean") is m.bn.running_mean
    # reassigning: a Parameter moves out of buffers/modules; None keeps the slot
    m.fc2 = None
    assert "fc2" in m._modules and m.fc2 is None
    with pytest.raises(TypeError, match="cannot assign 'int' as parameter 'scale'"):
        m.scale = 3
    with pytest.raises(TypeError, match="cannot assign 'str' as buffer 'steps'"):
        m.steps = "x"
    with pytest.raises(KeyError, match="attribute 'fc1' already exists"):
        m.register_buffer("fc1", ct.zeros(1))
    with pytest.raises(AttributeError, match="'Net' object has no attribute 'nope'"):
        m.nope
    del m.scale
    assert "scale" not in dict(m.named_parameters())


def test_shared_parameters_are_listed_once():
    lin = nn.Linear(2, 2)
    seq = nn.Sequential(lin, nn.ReLU(), lin)
    assert len(list(seq.parameters())) == 2
    assert len(list(seq.named_parameters(remove_duplicate=False))) == 4
    assert [n for n, _ in seq.named_modules()] == ["", "0", "1"]


def test_parameter_basics():
    p = nn.Parameter(ct.zeros(2, 3))
    assert isinstance(p, ct.Tensor) and p.requires_grad and p.is_leaf
    assert repr(p).startswith("Parameter containing:\ntensor(")
    q = nn.Parameter(ct.zeros(2), requires_grad=False)
    assert not q.requires_grad
    c = copy.deepcopy(p)
    assert isinstance(c, nn.Parameter) and c is not p and c.requires_grad
    with pytest.raises(TypeError, match="expected data to be a Tensor"):
        nn.Parameter([1.0, 2.0])


def test_deepcopy_module():
    m = Net()
    c = copy.deepcopy(m)
    assert isinstance(c.fc1.weight, nn.Parameter) and c.fc1.weight is not m.fc1.weight
    assert c.bn.running_mean is not m.bn.running_mean
    for (n, a), (_, b) in zip(m.state_dict().items(), c.state_dict().items()):
        np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=n)
    with ct.no_grad():
        c.fc1.weight.fill_(0)
    assert m.fc1.weight.detach().numpy().any()


def test_train_eval_and_apply():
    m = Net()
    assert m.training and m.bn.training
    m.eval()
    assert not m.training and not m.bn.training and not m.fc1.training
    m.train()
    assert m.bn.training
    seen = []
    m.apply(lambda mod: seen.append(type(mod).__name__))
    assert seen == ["Linear", "BatchNorm1d", "Linear", "Net"]
    with pytest.raises(ValueError, match="training mode is expected to be boolean"):
        m.train("yes")


def test_to_dtype_and_device_keeps_parameter_identity():
    m = Net()
    w = m.fc1.weight
    before = w.detach().numpy().copy()
    m.to(ct.float64)
    assert m.fc1.weight is w and isinstance(w, nn.Parameter) and w.requires_grad
    assert w.dtype is ct.float64
    np.testing.assert_allclose(w.detach().numpy(), before, rtol=1e-7)
    assert m.steps.dtype is ct.int64  # only floating point tensors change dtype
    assert m.bn.running_var.dtype is ct.float64
    m.to("meta")
    assert w.device.type == "meta" and m.bn.running_mean.device.type == "meta"
    with pytest.raises(NotImplementedError, match="Cannot copy out of meta tensor"):
        m.to("cpu")
    m.to_empty(device="cpu")
    m.to(device="cpu", dtype=ct.float32)
    assert w is m.fc1.weight and w.device.type == "cpu" and w.dtype is ct.float32
    with pytest.raises(TypeError, match="floating point dtypes"):
        m.to(ct.int32)
    m.double()
    assert m.fc2.weight.dtype is ct.float64


def test_zero_grad_and_requires_grad_():
    m = nn.Linear(2, 2)
    m.weight.grad = ct.ones(2, 2)
    m.zero_grad(set_to_none=False)
    np.testing.assert_array_equal(m.weight.grad.numpy(), np.zeros((2, 2)))
    m.zero_grad()
    assert m.weight.grad is None
    m.requires_grad_(False)
    assert not m.weight.requires_grad and not m.bias.requires_grad


def test_state_dict_and_load_state_dict():
    a, b = Net(), Net()
    sd = a.state_dict()
    assert list(sd) == [
        "scale",
        "steps",
        "fc1.weight",
        "fc1.bias",
        "bn.weight",
        "bn.bias",
        "bn.running_mean",
        "bn.running_var",
        "bn.num_batches_tracked",
        "fc2.weight",
    ]
    assert "scratch" not in sd  # non-persistent
    assert not sd["fc1.weight"].requires_grad  # detached
    res = b.load_state_dict(sd)
    assert res.missing_keys == [] and res.unexpected_keys == []
    np.testing.assert_array_equal(b.fc1.weight.detach().numpy(), a.fc1.weight.detach().numpy())
    assert b.fc1.weight.requires_grad

    bad = dict(sd)
    del bad["fc1.bias"]
    bad["extra.weight"] = ct.zeros(1)
    bad["fc2.nope"] = ct.zeros(1)
    with pytest.raises(RuntimeError) as e:
        b.load_state_dict(bad)
    msg = str(e.value)
    assert 'Missing key(s) in state_dict: "fc1.bias"' in msg
    assert 'Unexpected key(s) in state_dict: "extra.weight", "fc2.nope"' in msg
    assert msg.startswith("Error(s) in loading state_dict for Net:")
    res = b.load_state_dict(bad, strict=False)
    assert res.missing_keys == ["fc1.bias"]
    assert res.unexpected_keys == ["extra.weight", "fc2.nope"]

    wrong = dict(sd)
    wrong["fc1.weight"] = ct.zeros(5, 4)
    with pytest.raises(
        RuntimeError,
        match=r"size mismatch for fc1.weight: copying a param with "
        r"shape .*\[5, 4\].* from checkpoint, the shape in "
        r"current model is .*\[3, 4\]",
    ):
        b.load_state_dict(wrong, strict=False)


def test_load_state_dict_assign():
    a, b = nn.Linear(2, 3), nn.Linear(2, 3)
    b.load_state_dict(a.state_dict(), assign=True)
    assert isinstance(b.weight, nn.Parameter) and b.weight.requires_grad
    np.testing.assert_array_equal(b.weight.detach().numpy(), a.weight.detach().numpy())


def test_forward_hooks():
    m = nn.Identity()
    calls = []

    def pre(mod, args):
        calls.append("pre")
        return (args[0] + 1,)

    def post(mod, args, out):
        calls.append("post")
        return out * 10

    h1 = m.register_forward_pre_hook(pre)
    h2 = m.register_forward_hook(post)
    out = m(ct.tensor([1.0]))
    assert out.tolist() == [20.0] and calls == ["pre", "post"]
    h1.remove()
    h2.remove()
    assert m(ct.tensor([1.0])).tolist() == [1.0]

    def pre_kw(mod, args, kwargs):
        return args, {}

    seen = []
    m2 = nn.Linear(1, 1)
    m2.register_forward_pre_hook(lambda mod, args: seen.append("first"))
    m2.register_forward_pre_hook(lambda mod, args: seen.append("prepended"), prepend=True)
    m2.register_forward_hook(
        lambda mod, args, kwargs, out: seen.append(sorted(kwargs)), with_kwargs=True
    )
    m2(ct.zeros(1, 1))
    assert seen == ["prepended", "first", []]
    with m2.register_forward_pre_hook(pre_kw, with_kwargs=True):
        pass
    assert len(m2._forward_pre_hooks) == 2


def test_always_call_forward_hook_runs_on_error():
    class Boom(nn.Module):
        def forward(self, x):
            raise ValueError("boom")

    m = Boom()
    got = []
    m.register_forward_hook(lambda mod, args, out: got.append(out), always_call=True)
    with pytest.raises(ValueError, match="boom"):
        m(1)
    assert got == [None]


def test_missing_forward():
    with pytest.raises(NotImplementedError, match='missing the required "forward" function'):
        nn.Module()(1)


def test_containers():
    seq = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
    assert len(seq) == 3 and isinstance(seq[1], nn.ReLU) and isinstance(seq[-1], nn.Linear)
    sub = seq[1:]
    assert isinstance(sub, nn.Sequential) and len(sub) == 2
    seq.append(nn.Sigmoid())
    assert list(seq._modules) == ["0", "1", "2", "3"]
    del seq[1]
    assert list(seq._modules) == ["0", "1", "2"] and isinstance(seq[1], nn.Linear)
    seq.insert(1, nn.Tanh())
    assert isinstance(seq[1], nn.Tanh)
    with pytest.raises(IndexError):
        seq[10]
    from collections import OrderedDict

    named = nn.Sequential(OrderedDict(a=nn.ReLU(), b=nn.Tanh()))
    assert [n for n, _ in named.named_children()] == ["a", "b"]

    ml = nn.ModuleList([nn.Linear(1, 1)])
    ml.append(nn.ReLU())
    ml.extend([nn.Tanh()])
    ml += [nn.Sigmoid()]
    assert len(ml) == 4 and isinstance(ml[-1], nn.Sigmoid)
    assert len(list(ml.parameters())) == 2
    md = nn.ModuleDict({"a": nn.Linear(1, 1), "b": nn.ReLU()})
    md["c"] = nn.Tanh()
    assert list(md.keys()) == ["a", "b", "c"] and "a" in md and len(md) == 3
    assert md.pop("b").__class__ is nn.ReLU and list(md) == ["a", "c"]


def _torch_nn():
    torch = pytest.importorskip("torch")
    return torch.nn


def test_repr_matches_pytorch():
    tnn = _torch_nn()
    pairs = [
        (nn.Linear(3, 4), tnn.Linear(3, 4)),
        (nn.Linear(3, 4, bias=False), tnn.Linear(3, 4, bias=False)),
        (nn.Conv2d(1, 4, 3), tnn.Conv2d(1, 4, 3)),
        (
            nn.Conv2d(2, 4, (3, 5), stride=2, padding=1, dilation=2, groups=2, bias=False),
            tnn.Conv2d(2, 4, (3, 5), stride=2, padding=1, dilation=2, groups=2, bias=False),
        ),
        (
            nn.Conv2d(1, 4, 3, padding="same", padding_mode="reflect"),
            tnn.Conv2d(1, 4, 3, padding="same", padding_mode="reflect"),
        ),
        (nn.Conv1d(2, 3, 5, padding=2), tnn.Conv1d(2, 3, 5, padding=2)),
        (nn.BatchNorm1d(3), tnn.BatchNorm1d(3)),
        (
            nn.BatchNorm2d(3, momentum=None, affine=False),
            tnn.BatchNorm2d(3, momentum=None, affine=False),
        ),
        (nn.LayerNorm(5), tnn.LayerNorm(5)),
        (
            nn.LayerNorm((2, 3), elementwise_affine=False),
            tnn.LayerNorm((2, 3), elementwise_affine=False),
        ),
        (nn.GroupNorm(2, 4), tnn.GroupNorm(2, 4)),
        (nn.Embedding(10, 3, padding_idx=0), tnn.Embedding(10, 3, padding_idx=0)),
        (nn.Dropout(0.2), tnn.Dropout(0.2)),
        (nn.ReLU(), tnn.ReLU()),
        (nn.ReLU(inplace=True), tnn.ReLU(inplace=True)),
        (nn.LeakyReLU(0.2, True), tnn.LeakyReLU(0.2, True)),
        (nn.GELU("tanh"), tnn.GELU("tanh")),
        (nn.SiLU(), tnn.SiLU()),
        (nn.Tanh(), tnn.Tanh()),
        (nn.Sigmoid(), tnn.Sigmoid()),
        (nn.Softmax(dim=1), tnn.Softmax(dim=1)),
        (nn.LogSoftmax(dim=-1), tnn.LogSoftmax(dim=-1)),
        (nn.MaxPool2d(2), tnn.MaxPool2d(2)),
        (nn.AvgPool2d(3, 1, 1), tnn.AvgPool2d(3, 1, 1)),
        (nn.AdaptiveAvgPool2d((1, 1)), tnn.AdaptiveAvgPool2d((1, 1))),
        (nn.Flatten(), tnn.Flatten()),
        (nn.Unflatten(1, (2, 2)), tnn.Unflatten(1, (2, 2))),
        (nn.Identity(), tnn.Identity()),
        (nn.MultiheadAttention(8, 2), tnn.MultiheadAttention(8, 2)),
        (nn.CrossEntropyLoss(), tnn.CrossEntropyLoss()),
        (nn.MSELoss(), tnn.MSELoss()),
        (nn.Sequential(nn.Linear(2, 2), nn.ReLU()), tnn.Sequential(tnn.Linear(2, 2), tnn.ReLU())),
        (
            nn.ModuleList([nn.Linear(2, 2) for _ in range(3)] + [nn.ReLU()]),
            tnn.ModuleList([tnn.Linear(2, 2) for _ in range(3)] + [tnn.ReLU()]),
        ),
        (nn.ModuleDict({"a": nn.ReLU()}), tnn.ModuleDict({"a": tnn.ReLU()})),
    ]
    for ours, theirs in pairs:
        assert repr(ours) == repr(theirs)


def _weight_bound_check(w, bound):
    a = w.detach().numpy()
    assert a.min() >= -bound - 1e-7 and a.max() <= bound + 1e-7
    # a uniform sample over the range, not a constant
    assert a.max() - a.min() > bound


def test_default_initializations():
    ct.manual_seed(0)
    lin = nn.Linear(50, 40)
    # kaiming_uniform_(a=sqrt(5)) gives U(-1/sqrt(fan_in), 1/sqrt(fan_in))
    _weight_bound_check(lin.weight, 1 / math.sqrt(50))
    _weight_bound_check(lin.bias, 1 / math.sqrt(50))
    conv = nn.Conv2d(3, 16, 5)
    fan_in = 3 * 5 * 5
    _weight_bound_check(conv.weight, 1 / math.sqrt(fan_in))
    _weight_bound_check(conv.bias, 1 / math.sqrt(fan_in))
    bn = nn.BatchNorm2d(4)
    assert bn.weight.tolist() == [1.0] * 4 and bn.bias.tolist() == [0.0] * 4
    assert bn.running_var.tolist() == [1.0] * 4 and int(bn.num_batches_tracked) == 0
    emb = nn.Embedding(1000, 8, padding_idx=3)
    w = emb.weight.detach().numpy()
    assert np.all(w[3] == 0)
    assert abs(w.std() - 1.0) < 0.05 and abs(w.mean()) < 0.05
    mha = nn.MultiheadAttention(16, 4)
    _weight_bound_check(mha.in_proj_weight, math.sqrt(6.0 / (16 + 48)))
    assert mha.in_proj_bias.tolist() == [0.0] * 48


def test_init_functions():
    from coretorch.nn import init

    assert init.calculate_gain("relu") == math.sqrt(2.0)
    assert init.calculate_gain("leaky_relu", 0.2) == math.sqrt(2.0 / 1.04)
    assert init.calculate_gain("tanh") == 5.0 / 3
    with pytest.raises(ValueError, match="Unsupported nonlinearity"):
        init.calculate_gain("wat")
    t = ct.empty(300, 200)
    init.kaiming_normal_(t, mode="fan_out", nonlinearity="relu")
    assert abs(float(t.numpy().std()) - math.sqrt(2.0 / 300)) < 0.005
    init.xavier_normal_(t)
    assert abs(float(t.numpy().std()) - math.sqrt(2.0 / 500)) < 0.005
    init.trunc_normal_(t, std=1.0, a=-0.5, b=0.5)
    assert t.numpy().min() >= -0.5 and t.numpy().max() <= 0.5
    init.constant_(t, 0.25)
    assert np.all(t.numpy() == 0.25)
    e = ct.empty(3, 4)
    init.eye_(e)
    np.testing.assert_array_equal(e.numpy(), np.eye(3, 4))
    o = ct.empty(6, 4)
    init.orthogonal_(o)
    np.testing.assert_allclose(o.numpy().T @ o.numpy(), np.eye(4), atol=1e-5)
    d = ct.empty(2, 2, 3, 3)
    init.dirac_(d)
    assert d.numpy()[0, 0, 1, 1] == 1 and d.numpy().sum() == 2
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        init.xavier_uniform_(ct.empty(3))
    g1, g2 = ct.Generator().manual_seed(5), ct.Generator().manual_seed(5)
    a, b = ct.empty(4), ct.empty(4)
    init.uniform_(a, generator=g1)
    init.uniform_(b, generator=g2)
    assert a.tolist() == b.tolist()


def test_one_element_entry_loads_into_a_0d_buffer_as_pytorch():
    bn = ct.nn.BatchNorm1d(3)
    state = {k: v.clone() for k, v in bn.state_dict().items()}
    state["num_batches_tracked"] = ct.tensor([7])  # safetensors' numpy API gives 0-d as (1,)
    bn.load_state_dict(state)
    assert bn.num_batches_tracked.shape == () and bn.num_batches_tracked.item() == 7
    state["running_mean"] = ct.zeros(1)  # only 0-d targets take a (1,) entry
    with pytest.raises(RuntimeError, match="size mismatch for running_mean"):
        bn.load_state_dict(state)
