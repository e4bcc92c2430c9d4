"""Optimizers: trajectories against PyTorch (when installed) and against the published update
formulas written out in numpy; the Optimizer base (groups, state_dict, zero_grad)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import coretorch as ct
import coretorch.nn as nn
import coretorch.optim as optim

STEPS = 6
SHAPES = [(3, 4), (5,)]


def _init_values():
    rng = np.random.default_rng(0)
    return [rng.standard_normal(s).astype(np.float32) for s in SHAPES]


def _grad_for(values: np.ndarray, step: int, i: int) -> np.ndarray:
    """A deterministic gradient that depends on the parameter (so trajectories interact)."""
    return (np.sin(values * (1.0 + 0.1 * step)) + 0.05 * (i + 1) * step).astype(np.float32)


def _run_coretorch(cls, kwargs, steps=STEPS):
    params = [nn.Parameter(ct.tensor(v)) for v in _init_values()]
    opt = cls(params, **kwargs)
    for s in range(steps):
        for i, p in enumerate(params):
            p.grad = ct.tensor(_grad_for(p.detach().numpy(), s, i))
        opt.step()
    return [p.detach().numpy().copy() for p in params], opt


def _run_torch(name, kwargs, steps=STEPS):
    torch = pytest.importorskip("torch")
    params = [torch.nn.Parameter(torch.tensor(v)) for v in _init_values()]
    opt = getattr(torch.optim, name)(params, foreach=False, **kwargs)
    for s in range(steps):
        for i, p in enumerate(params):
            p.grad = torch.tensor(_grad_for(p.detach().numpy(), s, i))
        opt.step()
    return [p.detach().numpy().copy() for p in params]


CONFIGS = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9)),
    ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.3, weight_decay=0.01)),
    ("SGD", dict(lr=0.05, momentum=0.8, nesterov=True, weight_decay=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.5, maximize=True)),
    ("Adam", dict(lr=0.01)),
    ("Adam", dict(lr=0.01, betas=(0.8, 0.9), weight_decay=0.1, amsgrad=True)),
    ("Adam", dict(lr=0.02, maximize=True, eps=1e-6)),
    ("AdamW", dict(lr=0.01)),
    ("AdamW", dict(lr=0.01, weight_decay=0.5, amsgrad=True)),
    ("RMSprop", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, alpha=0.9, momentum=0.5, centered=True, weight_decay=0.1)),
    ("RMSprop", dict(lr=0.01, maximize=True, momentum=0.3)),
    ("Adagrad", dict(lr=0.1)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.1, weight_decay=0.1, initial_accumulator_value=0.5)),
    ("Adagrad", dict(lr=0.1, maximize=True, eps=1e-6)),
]


@pytest.mark.parametrize(
    "name,kwargs", CONFIGS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CONFIGS)]
)
def test_trajectory_matches_torch(name, kwargs):
    ours, _ = _run_coretorch(getattr(optim, name), kwargs)
    theirs = _run_torch(name, kwargs)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


# ---- the published formulas, in float64 numpy -----------------------------------------------


def _reference(name, kw, steps=STEPS):
    params = [v.astype(np.float64) for v in _init_values()]
    state = [dict() for _ in params]
    for s in range(steps):
        for i, p in enumerate(params):
            g = _grad_for(p.astype(np.float32), s, i).astype(np.float64)
            st = state[i]
            if kw.get("maximize"):
                g = -g
            if name == "SGD":
                g = g + kw.get("weight_decay", 0) * p
                m = kw.get("momentum", 0)
                if m:
                    buf = (
                        g.copy()
                        if "buf" not in st
                        else m * st["buf"] + (1 - kw.get("dampening", 0)) * g
                    )
                    st["buf"] = buf
                    g = g + m * buf if kw.get("nesterov") else buf
                p = p - kw["lr"] * g
            elif name in ("Adam", "AdamW"):
                b1, b2 = kw.get("betas", (0.9, 0.999))
                t = st["t"] = st.get("t", 0) + 1
                wd = kw.get("weight_decay", 0 if name == "Adam" else 1e-2)
                if name == "AdamW":
                    p = p * (1 - kw["lr"] * wd)
                else:
                    g = g + wd * p
                m = st["m"] = b1 * st.get("m", 0) + (1 - b1) * g
                v = st["v"] = b2 * st.get("v", 0) + (1 - b2) * g * g
                if kw.get("amsgrad"):
                    v = st["vmax"] = np.maximum(st.get("vmax", 0), v)
                denom = np.sqrt(v) / math.sqrt(1 - b2**t) + kw.get("eps", 1e-8)
                p = p - kw["lr"] / (1 - b1**t) * m / denom
            elif name == "RMSprop":
                a = kw.get("alpha", 0.99)
                g = g + kw.get("weight_decay", 0) * p
                v = st["v"] = a * st.get("v", 0) + (1 - a) * g * g
                if kw.get("centered"):
                    ga = st["ga"] = a * st.get("ga", 0) + (1 - a) * g
                    avg = np.sqrt(v - ga * ga)
                else:
                    avg = np.sqrt(v)
                avg = avg + kw.get("eps", 1e-8)
                mom = kw.get("momentum", 0)
                if mom:
                    buf = st["buf"] = mom * st.get("buf", 0) + g / avg
                    p = p - kw["lr"] * buf
                else:
                    p = p - kw["lr"] * g / avg
            elif name == "Adagrad":
                t = st["t"] = st.get("t", 0) + 1
                g = g + kw.get("weight_decay", 0) * p
                clr = kw["lr"] / (1 + (t - 1) * kw.get("lr_decay", 0))
                acc = st["sum"] = st.get("sum", kw.get("initial_accumulator_value", 0)) + g * g
                p = p - clr * g / (np.sqrt(acc) + kw.get("eps", 1e-10))
            params[i] = p
    return params


@pytest.mark.parametrize(
    "name,kwargs", CONFIGS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CONFIGS)]
)
def test_trajectory_matches_published_formula(name, kwargs):
    ours, _ = _run_coretorch(getattr(optim, name), kwargs)
    for a, b in zip(ours, _reference(name, kwargs)):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


# ---- base class -------------------------------------------------------------------------------


def test_param_groups_and_defaults():
    a, b = nn.Parameter(ct.zeros(2)), nn.Parameter(ct.zeros(3))
    opt = optim.SGD([{"params": [a]}, {"params": b, "lr": 0.5}], lr=0.1, momentum=0.9)
    assert opt.param_groups[0]["lr"] == 0.1 and opt.param_groups[1]["lr"] == 0.5
    assert opt.param_groups[1]["momentum"] == 0.9 and opt.param_groups[1]["params"] == [b]
    c = nn.Parameter(ct.zeros(1))
    opt.add_param_group({"params": [c], "weight_decay": 0.1})
    assert len(opt.param_groups) == 3 and opt.param_groups[2]["lr"] == 0.1
    with pytest.raises(ValueError, match="some parameters appear in more than one parameter group"):
        opt.add_param_group({"params": [a]})
    with pytest.raises(ValueError, match="empty parameter list"):
        optim.SGD([], lr=0.1)
    with pytest.raises(TypeError, match="iterable of Tensors or dicts"):
        optim.SGD(a, lr=0.1)
    with pytest.raises(ValueError, match="Invalid learning rate"):
        optim.Adam([a], lr=-1)
    with pytest.raises(
        ValueError, match="Nesterov momentum requires a momentum and zero dampening"
    ):
        optim.SGD([a], lr=0.1, nesterov=True)
    with pytest.raises(TypeError, match="ordering of tensors in sets"):
        optim.SGD([{"params": {a}}], lr=0.1)
    named = optim.Adam([("w", a), ("v", b)])
    assert named.param_groups[0]["param_names"] == ["w", "v"]
    assert "Parameter Group 0" in repr(opt) and "momentum: 0.9" in repr(opt)


def test_zero_grad():
    p = nn.Parameter(ct.ones(2))
    opt = optim.SGD([p], lr=0.1)
    p.grad = ct.ones(2)
    opt.zero_grad(set_to_none=False)
    assert p.grad.tolist() == [0.0, 0.0]
    opt.zero_grad()
    assert p.grad is None
    opt.step()  # no grad: nothing happens
    assert p.tolist() == [1.0, 1.0]


def test_step_runs_under_no_grad_and_closure():
    p = nn.Parameter(ct.ones(2))
    opt = optim.SGD([p], lr=0.5)
    p.grad = ct.ones(2)

    def closure():
        assert ct.is_grad_enabled()
        return 3.0

    assert opt.step(closure) == 3.0
    assert p.tolist() == [0.5, 0.5] and p.is_leaf and p.requires_grad


def test_state_dict_round_trip_continues_identically():
    _, opt = _run_coretorch(optim.Adam, dict(lr=0.01, amsgrad=True), steps=3)
    sd = opt.state_dict()
    assert set(sd["state"]) == {0, 1}
    assert set(sd["state"][0]) == {"step", "exp_avg", "exp_avg_sq", "max_exp_avg_sq"}
    assert sd["param_groups"][0]["params"] == [0, 1]
    assert float(sd["state"][0]["step"]) == 3.0

    params = opt.param_groups[0]["params"]
    clones = [nn.Parameter(p.detach().clone()) for p in params]
    opt2 = optim.Adam(clones, lr=0.5)
    opt2.load_state_dict(sd)
    assert opt2.param_groups[0]["lr"] == 0.01 and opt2.param_groups[0]["params"] == clones
    for o, ps in ((opt, params), (opt2, clones)):
        for i, p in enumerate(ps):
            p.grad = ct.tensor(_grad_for(p.detach().numpy(), 3, i))
        o.step()
    for a, b in zip(params, clones):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    # the loaded state is a copy, not shared with the source optimizer
    assert opt2.state[clones[0]]["exp_avg"] is not opt.state[params[0]]["exp_avg"]

    with pytest.raises(ValueError, match="doesn't match the size of optimizer's group"):
        optim.Adam([clones[0]]).load_state_dict(sd)
    with pytest.raises(ValueError, match="different number of parameter groups"):
        optim.Adam([{"params": [clones[0]]}, {"params": [clones[1]]}]).load_state_dict(sd)


def test_state_dict_matches_torch_layout():
    torch = pytest.importorskip("torch")
    tp = [torch.nn.Parameter(torch.zeros(2)), torch.nn.Parameter(torch.zeros(3))]
    topt = torch.optim.SGD(tp, lr=0.1, momentum=0.9)
    for p in tp:
        p.grad = torch.ones_like(p)
    topt.step()
    cp = [nn.Parameter(ct.zeros(2)), nn.Parameter(ct.zeros(3))]
    copt = optim.SGD(cp, lr=0.1, momentum=0.9)
    for p in cp:
        p.grad = ct.ones_like(p)
    copt.step()
    tsd, csd = topt.state_dict(), copt.state_dict()
    assert tsd["param_groups"] == csd["param_groups"]
    assert set(tsd["state"]) == set(csd["state"])
    assert set(tsd["state"][0]) == set(csd["state"][0])


def test_adam_state_matches_torch_keys():
    torch = pytest.importorskip("torch")
    tp = torch.nn.Parameter(torch.zeros(2))
    topt = torch.optim.Adam([tp], amsgrad=True)
    tp.grad = torch.ones(2)
    topt.step()
    cp = nn.Parameter(ct.zeros(2))
    copt = optim.Adam([cp], amsgrad=True)
    cp.grad = ct.ones(2)
    copt.step()
    assert set(topt.state_dict()["state"][0]) == set(copt.state_dict()["state"][0])
    assert topt.state_dict()["param_groups"] == copt.state_dict()["param_groups"]
