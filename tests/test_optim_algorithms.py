"""Adadelta, Adamax, NAdam, RAdam, ASGD, Rprop, LBFGS and SparseAdam: trajectories on a fixed
problem against PyTorch's, both recorded (tests/data/record_optim.py wrote them) and live when
PyTorch is installed; constructor defaults, argument checks, state_dict layout."""

from __future__ import annotations

import copy
import importlib.util
import inspect
import json
import pathlib

import numpy as np
import pytest

import coretorch as ct
import coretorch.nn as nn
import coretorch.optim as optim

DATA = pathlib.Path(__file__).parent / "data"
_spec = importlib.util.spec_from_file_location("record_optim", DATA / "record_optim.py")
rec = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(rec)
EXPECTED = json.loads((DATA / "optim_expected.json").read_text())

NEW = ["Adadelta", "Adamax", "NAdam", "RAdam", "ASGD", "Rprop", "LBFGS", "SparseAdam"]


def _assert_run_close(ours: dict, theirs: dict, rtol: float, atol: float) -> None:
    np.testing.assert_allclose(ours["losses"], theirs["losses"], rtol=rtol, atol=atol)
    for a, b in zip(ours["params"], theirs["params"]):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


@pytest.mark.parametrize("case", sorted(rec.OPTIMIZER_CASES))
def test_float64_trajectory_matches_recorded_torch(case):
    ours = rec.run_optimizer(ct, case)
    _assert_run_close(ours, EXPECTED["optimizers"][case], rtol=1e-11, atol=1e-13)


@pytest.mark.parametrize("case", sorted(rec.OPTIMIZER_CASES))
def test_float32_trajectory_matches_recorded_torch(case):
    ours = rec.run_optimizer(ct, case, "float32")
    _assert_run_close(ours, EXPECTED["optimizers_float32"][case], rtol=2e-5, atol=2e-6)


# The long runs (60 and 75 iterations) amplify rounding: moving PyTorch's own starting point by
# one part in 1e15 moves its final weights by 6e-8 and 3e-7. The short runs stay within 1e-13.
LBFGS_RTOL = {"LBFGS": 1e-5, "LBFGS-strong-wolfe": 1e-5}


@pytest.mark.parametrize("case", sorted(rec.LBFGS_CASES))
def test_lbfgs_matches_recorded_torch(case):
    ours, theirs = rec.run_lbfgs(ct, case), EXPECTED["lbfgs"][case]
    rtol = LBFGS_RTOL.get(case, 1e-11)
    _assert_run_close(ours, theirs, rtol=rtol, atol=rtol / 100)
    assert (ours["func_evals"], ours["n_iter"]) == (theirs["func_evals"], theirs["n_iter"])
    assert ours["final_loss"] == pytest.approx(theirs["final_loss"], rel=rtol)


@pytest.mark.parametrize("case", ["NAdam-decoupled", "Rprop-bounds", "ASGD-averaging"])
def test_trajectory_matches_live_torch(case):
    torch = pytest.importorskip("torch")
    _assert_run_close(
        rec.run_optimizer(ct, case), rec.run_optimizer(torch, case), rtol=1e-11, atol=1e-13
    )


def test_lbfgs_strong_wolfe_matches_live_torch():
    torch = pytest.importorskip("torch")
    ours, theirs = (rec.run_lbfgs(lib, "LBFGS-wolfe-short") for lib in (ct, torch))
    _assert_run_close(ours, theirs, rtol=1e-11, atol=1e-13)
    assert ours["func_evals"] == theirs["func_evals"]


def test_lbfgs_minimizes_rosenbrock():
    # the classic test of a quasi-Newton method: from (-1.5, 2) to the minimum at (1, 1)
    xy = nn.Parameter(ct.tensor([-1.5, 2.0], dtype=ct.float64))
    opt = optim.LBFGS(
        [xy],
        line_search_fn="strong_wolfe",
        max_iter=100,
        tolerance_grad=1e-12,
        tolerance_change=1e-14,
    )

    def closure():
        opt.zero_grad()
        x, y = xy[0], xy[1]
        loss = (1 - x) ** 2 + 100 * (y - x * x) ** 2
        loss.backward()
        return loss

    for _ in range(3):
        opt.step(closure)
    np.testing.assert_allclose(xy.detach().numpy(), [1.0, 1.0], atol=1e-8)


def test_lbfgs_errors_and_state_layout():
    a, b = nn.Parameter(ct.ones(2)), nn.Parameter(ct.ones(3))
    with pytest.raises(ValueError, match="LBFGS doesn't support per-parameter options"):
        optim.LBFGS([{"params": [a]}, {"params": [b]}])
    opt = optim.LBFGS([a, b], line_search_fn="backtracking", max_iter=2)

    def closure():
        opt.zero_grad()
        loss = (a * a).sum() + (b * b * b * b).sum()
        loss.backward()
        return loss

    with pytest.raises(RuntimeError, match="only 'strong_wolfe' is supported"):
        opt.step(closure)
    opt = optim.LBFGS([a, b], max_iter=3)
    assert opt.defaults["max_eval"] == 3 * 5 // 4
    opt.step(closure)
    sd = opt.state_dict()
    assert set(sd["state"]) == {0}
    assert set(sd["state"][0]) == {
        "func_evals",
        "n_iter",
        "d",
        "t",
        "old_dirs",
        "old_stps",
        "ro",
        "H_diag",
        "prev_flat_grad",
        "prev_loss",
        "al",
    }
    with pytest.raises(RuntimeError, match="requires a closure"):
        opt.step(None)
    with pytest.raises(TypeError, match="closure"):
        opt.step()


def test_sparse_adam_refuses_dense_gradients():
    p = nn.Parameter(ct.ones(3))
    opt = optim.SparseAdam([p])
    p.grad = ct.ones(3)
    with pytest.raises(
        RuntimeError,
        match="SparseAdam does not support dense gradients, please consider Adam instead",
    ):
        opt.step()
    with pytest.raises(ValueError, match="Invalid learning rate: 0.0"):
        optim.SparseAdam([p], lr=0.0)
    with pytest.raises(ValueError, match="Invalid epsilon value: 0.0"):
        optim.SparseAdam([p], eps=0.0)


@pytest.mark.parametrize("name", NEW)
def test_signature_and_defaults_match_torch(name):
    torch = pytest.importorskip("torch")
    ours, theirs = getattr(optim, name), getattr(torch.optim, name)
    sig_ours = inspect.signature(ours.__init__).parameters
    sig_theirs = inspect.signature(theirs.__init__).parameters
    assert list(sig_ours) == list(sig_theirs)
    for key, param in sig_theirs.items():
        assert sig_ours[key].kind == param.kind, key
        assert sig_ours[key].default == param.default, key
    cp, tp = nn.Parameter(ct.zeros(2)), torch.nn.Parameter(torch.zeros(2))
    assert getattr(optim, name)([cp]).defaults == theirs([tp]).defaults


@pytest.mark.parametrize("name", ["Adadelta", "Adamax", "NAdam", "RAdam", "ASGD", "Rprop"])
def test_state_dict_layout_matches_torch(name):
    torch = pytest.importorskip("torch")
    cp = [nn.Parameter(ct.ones(2)), nn.Parameter(ct.ones(3))]
    tp = [torch.nn.Parameter(torch.ones(2)), torch.nn.Parameter(torch.ones(3))]
    copt = getattr(optim, name)([{"params": [cp[0]]}, {"params": [cp[1]], "lr": 0.5}])
    topt = getattr(torch.optim, name)([{"params": [tp[0]]}, {"params": [tp[1]], "lr": 0.5}])
    for ps in (cp, tp):
        for p in ps:
            p.grad = p.detach() * 0.5
    copt.step()
    topt.step()
    csd, tsd = copt.state_dict(), topt.state_dict()
    assert csd["param_groups"] == tsd["param_groups"]
    for i in (0, 1):
        assert list(csd["state"][i]) == list(tsd["state"][i])
        for key, value in tsd["state"][i].items():
            assert csd["state"][i][key].shape == tuple(value.shape), key
            assert (
                str(csd["state"][i][key].dtype).split(".")[-1] == str(value.dtype).split(".")[-1]
            ), key
            np.testing.assert_allclose(csd["state"][i][key].numpy(), value.numpy(), rtol=1e-6)


def _round_trip(lib, case: str) -> list:
    """Three steps, a state_dict into a fresh optimizer over copies of the weights, three more
    steps of both; the two sets of weights."""
    name, kwargs = rec.OPTIMIZER_CASES[case]
    params, loss_fn = rec.make_problem(lib, "float64")
    opt = getattr(lib.optim, name)(params, **kwargs)
    clones, clone_loss = rec.make_problem(lib, "float64")
    opt2 = getattr(lib.optim, name)(clones)

    def step(o, loss):
        o.zero_grad()
        loss().backward()
        o.step()

    for _ in range(3):
        step(opt, loss_fn)
    with lib.no_grad():
        for c, p in zip(clones, params):
            c.copy_(p)
    # a deep copy: PyTorch's loaded state would otherwise share tensors with `opt`'s
    opt2.load_state_dict(copy.deepcopy(opt.state_dict()))
    for _ in range(3):
        step(opt, loss_fn)
        step(opt2, clone_loss)
    return [p.detach().numpy().copy() for p in params + clones]


@pytest.mark.parametrize("case", ["Adamax-wd", "Rprop-bounds", "RAdam-decoupled", "Adadelta"])
def test_state_dict_round_trip_continues_identically(case):
    out = _round_trip(ct, case)
    for a, b in zip(out[:2], out[2:]):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("case", ["NAdam-wd", "ASGD-averaging"])
def test_state_dict_round_trip_casts_scalar_state_as_torch(case):
    # loading casts every state tensor but "step" to the parameter's dtype, so NAdam's
    # mu_product and ASGD's eta and mu continue in float64: PyTorch's run changes the same way
    torch = pytest.importorskip("torch")
    for a, b in zip(_round_trip(ct, case), _round_trip(torch, case)):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


ERRORS = [
    ("Adadelta", dict(lr=-1), "Invalid learning rate: -1"),
    ("Adadelta", dict(rho=1.5), "Invalid rho value: 1.5"),
    ("Adadelta", dict(eps=-1), "Invalid epsilon value: -1"),
    ("Adadelta", dict(weight_decay=-1), "Invalid weight_decay value: -1"),
    ("Adamax", dict(betas=(1.0, 0.9)), "Invalid beta parameter at index 0: 1.0"),
    ("Adamax", dict(betas=(0.9, -0.1)), "Invalid beta parameter at index 1: -0.1"),
    ("NAdam", dict(momentum_decay=-1), "Invalid momentum_decay value: -1"),
    ("RAdam", dict(eps=-1), "Invalid epsilon value: -1"),
    ("ASGD", dict(weight_decay=-0.5), "Invalid weight_decay value: -0.5"),
    ("Rprop", dict(etas=(1.2, 0.5)), "Invalid eta values: 1.2, 0.5"),
    ("LBFGS", dict(lr=-0.1), "Invalid learning rate: -0.1"),
    ("RAdam", dict(differentiable=True), "not supported by coretorch"),
]


@pytest.mark.parametrize(
    "name,kwargs,message", ERRORS, ids=[f"{e[0]}-{i}" for i, e in enumerate(ERRORS)]
)
def test_argument_errors(name, kwargs, message):
    p = nn.Parameter(ct.ones(2))
    with pytest.raises((ValueError, NotImplementedError), match=message):
        getattr(optim, name)([p], **kwargs)


@pytest.mark.parametrize("name,kwargs,message", ERRORS[:-1])
def test_argument_errors_are_torch_messages(name, kwargs, message):
    torch = pytest.importorskip("torch")
    with pytest.raises(ValueError, match=message):
        getattr(torch.optim, name)([torch.nn.Parameter(torch.ones(2))], **kwargs)


def test_step_hooks_and_closure_run_for_new_optimizers():
    p = nn.Parameter(ct.ones(2))
    opt = optim.NAdam([p])
    seen = []
    opt.register_step_pre_hook(lambda o, args, kwargs: seen.append("pre"))
    opt.register_step_post_hook(lambda o, args, kwargs: seen.append("post"))

    def closure():
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss

    assert opt.step(closure).item() == 2.0
    assert seen == ["pre", "post"] and p.detach().numpy().max() < 1.0
