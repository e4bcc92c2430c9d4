"""PyTorch's trajectories on fixed problems, for the optimizer, scheduler and SWA tests.

Every function here takes the library as its first argument (``torch`` or ``coretorch``: the
APIs are the same), so the tests drive coretorch through exactly the code that produced the
recorded values. Record (PyTorch installed) with::

    .venv/bin/python tests/data/record_optim.py

which rewrites ``tests/data/optim_expected.json`` next to this file.
"""

from __future__ import annotations

import json
import pathlib
import sys

import numpy as np

HERE = pathlib.Path(__file__).parent
EXPECTED = HERE / "optim_expected.json"

# ---- the problem: a small tanh regression with an L2 term ------------------------------------

STEPS = 8


def problem_arrays() -> dict[str, np.ndarray]:
    """Initial weights w (3, 4) and v (4,), inputs x (6, 3) and targets y (6,)."""
    rng = np.random.default_rng(1234)
    return {
        "w": rng.standard_normal((3, 4)),
        "v": rng.standard_normal(4),
        "x": rng.standard_normal((6, 3)),
        "y": rng.standard_normal(6),
    }


def make_problem(lib, dtype_name: str):
    """(params, loss function) of the problem in `lib` with dtype "float32" or "float64"."""
    dtype = getattr(lib, dtype_name)
    a = problem_arrays()
    params = [
        lib.nn.Parameter(lib.tensor(a["w"], dtype=dtype)),
        lib.nn.Parameter(lib.tensor(a["v"], dtype=dtype)),
    ]
    x, y = lib.tensor(a["x"], dtype=dtype), lib.tensor(a["y"], dtype=dtype)

    def loss_fn():
        w, v = params
        out = lib.tanh(x @ w) @ v
        return ((out - y) ** 2).mean() + 0.01 * (w**2).sum()

    return params, loss_fn


# ---- optimizers ------------------------------------------------------------------------------

OPTIMIZER_CASES = {
    "Adadelta": ("Adadelta", {}),
    "Adadelta-wd-max": (
        "Adadelta",
        dict(lr=0.5, rho=0.8, eps=1e-5, weight_decay=0.1, maximize=True),
    ),
    "Adamax": ("Adamax", {}),
    "Adamax-wd": ("Adamax", dict(lr=0.05, betas=(0.8, 0.95), weight_decay=0.2)),
    "NAdam": ("NAdam", {}),
    "NAdam-wd": ("NAdam", dict(lr=0.05, weight_decay=0.1, momentum_decay=0.01)),
    "NAdam-decoupled": ("NAdam", dict(lr=0.05, weight_decay=0.1, decoupled_weight_decay=True)),
    "RAdam": ("RAdam", {}),
    "RAdam-rectified": ("RAdam", dict(lr=0.05, betas=(0.9, 0.6), weight_decay=0.1)),
    "RAdam-decoupled": (
        "RAdam",
        dict(
            lr=0.05, betas=(0.5, 0.7), weight_decay=0.1, decoupled_weight_decay=True, maximize=True
        ),
    ),
    "ASGD": ("ASGD", {}),
    "ASGD-averaging": ("ASGD", dict(lr=0.1, lambd=0.01, alpha=0.5, t0=3, weight_decay=0.05)),
    "Rprop": ("Rprop", {}),
    "Rprop-bounds": (
        "Rprop",
        dict(lr=0.05, etas=(0.3, 1.5), step_sizes=(0.01, 0.08), maximize=True),
    ),
    "Adam": ("Adam", dict(lr=0.05, amsgrad=True, weight_decay=0.1)),
    "RMSprop": ("RMSprop", dict(lr=0.01, centered=True, momentum=0.5)),
}

LBFGS_CASES = {
    "LBFGS": {},
    "LBFGS-strong-wolfe": dict(line_search_fn="strong_wolfe"),
    "LBFGS-short-history": dict(lr=0.5, max_iter=4, history_size=2),
    "LBFGS-wolfe-short": dict(max_iter=5, history_size=3, line_search_fn="strong_wolfe"),
}
LBFGS_STEPS = 3


def snapshot(params) -> list[list[float]]:
    return [p.detach().reshape(-1).tolist() for p in params]


def run_optimizer(lib, case: str, dtype_name: str = "float64") -> dict:
    """Train the problem for STEPS steps; the losses before each step and the final weights."""
    name, kwargs = OPTIMIZER_CASES[case]
    params, loss_fn = make_problem(lib, dtype_name)
    opt = getattr(lib.optim, name)(params, **kwargs)
    losses = []
    for _ in range(STEPS):
        opt.zero_grad()
        loss = loss_fn()
        loss.backward()
        losses.append(loss.item())
        opt.step()
    return {"losses": losses, "params": snapshot(params)}


def run_lbfgs(lib, case: str, dtype_name: str = "float64") -> dict:
    """LBFGS_STEPS closure steps; the losses they return, evaluation counts, final weights."""
    params, loss_fn = make_problem(lib, dtype_name)
    opt = lib.optim.LBFGS(params, **LBFGS_CASES[case])

    def closure():
        opt.zero_grad()
        loss = loss_fn()
        loss.backward()
        return loss

    losses = [opt.step(closure).item() for _ in range(LBFGS_STEPS)]
    state = opt.state[params[0]]
    return {
        "losses": losses,
        "params": snapshot(params),
        "func_evals": state["func_evals"],
        "n_iter": state["n_iter"],
        "final_loss": loss_fn().item(),
    }


# ---- learning-rate schedules ----------------------------------------------------------------

EPOCHS = 30

SCHEDULER_CASES = {
    "ConstantLR": lambda m, o: m.ConstantLR(o, factor=0.25, total_iters=4),
    "LinearLR": lambda m, o: m.LinearLR(o, start_factor=0.1, end_factor=0.9, total_iters=7),
    "PolynomialLR": lambda m, o: m.PolynomialLR(o, total_iters=12, power=2.0),
    "MultiplicativeLR": lambda m, o: m.MultiplicativeLR(o, lambda e: 0.9 if e % 2 else 1.05),
    "CosineAnnealingWarmRestarts": lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=4),
    "CosineAnnealingWarmRestarts-mult": lambda m, o: m.CosineAnnealingWarmRestarts(
        o, T_0=3, T_mult=2, eta_min=0.001
    ),
    "CyclicLR-triangular": lambda m, o: m.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=4),
    "CyclicLR-triangular2": lambda m, o: m.CyclicLR(
        o, base_lr=[0.01, 0.02], max_lr=0.2, step_size_up=3, step_size_down=5, mode="triangular2"
    ),
    "CyclicLR-exp_range": lambda m, o: m.CyclicLR(
        o,
        base_lr=0.01,
        max_lr=0.1,
        step_size_up=5,
        mode="exp_range",
        gamma=0.95,
        base_momentum=0.7,
        max_momentum=0.95,
    ),
    "CyclicLR-scale_fn": lambda m, o: m.CyclicLR(
        o,
        base_lr=0.01,
        max_lr=0.1,
        step_size_up=2,
        scale_fn=lambda x: 1 / (1 + x),
        scale_mode="iterations",
        cycle_momentum=False,
    ),
    "SequentialLR": lambda m, o: m.SequentialLR(
        o,
        [
            m.LinearLR(o, start_factor=0.2, total_iters=4),
            m.ExponentialLR(o, gamma=0.8),
            m.StepLR(o, step_size=3, gamma=0.5),
        ],
        milestones=[5, 12],
    ),
    "ChainedScheduler": lambda m, o: m.ChainedScheduler(
        [
            m.ConstantLR(o, factor=0.5, total_iters=6),
            m.ExponentialLR(o, gamma=0.9),
            m.CosineAnnealingLR(o, T_max=10),
        ]
    ),
    "SWALR-cos": lambda m, o: _swa(m).SWALR(o, swa_lr=0.05, anneal_epochs=6),
    "SWALR-linear": lambda m, o: _swa(m).SWALR(
        o, swa_lr=[0.05, 0.5], anneal_epochs=4, anneal_strategy="linear"
    ),
    "SWALR-no-anneal": lambda m, o: _swa(m).SWALR(o, swa_lr=0.02, anneal_epochs=0),
}
# schedules stepped with an explicit (fractional) epoch: step i passes epoch i / 3
FRACTIONAL_CASES = {"CosineAnnealingWarmRestarts-mult"}
MOMENTUM_CASES = {"CyclicLR-triangular", "CyclicLR-triangular2", "CyclicLR-exp_range"}


def _swa(scheduler_module):
    return sys.modules[scheduler_module.__name__.rsplit(".", 1)[0] + ".swa_utils"]


def run_scheduler(lib, case: str) -> dict:
    """Two param groups (lr 0.1 and 0.3, SGD with momentum 0.9); the lrs (and momenta) after
    construction and after each of EPOCHS steps."""
    params = [lib.nn.Parameter(lib.zeros(2)), lib.nn.Parameter(lib.zeros(1))]
    opt = lib.optim.SGD(
        [{"params": [params[0]]}, {"params": [params[1]], "lr": 0.3}], lr=0.1, momentum=0.9
    )
    sched = SCHEDULER_CASES[case](lib.optim.lr_scheduler, opt)
    lrs, momenta = [list(sched.get_last_lr())], [[g["momentum"] for g in opt.param_groups]]
    for epoch in range(1, EPOCHS + 1):
        opt.step()
        if case in FRACTIONAL_CASES:
            sched.step(epoch / 3)
        else:
            sched.step()
        lrs.append(list(sched.get_last_lr()))
        momenta.append([g["momentum"] for g in opt.param_groups])
    out = {"lrs": lrs}
    if case in MOMENTUM_CASES:
        out["momenta"] = momenta
    return out


# ---- stochastic weight averaging -------------------------------------------------------------

SWA_CASES = {
    "swa": {},
    "swa-buffers": dict(use_buffers=True),
    "ema-multi": dict(multi_avg_fn="ema"),
    "ema": dict(avg_fn="ema"),
}


def _swa_model(lib):
    a = np.random.default_rng(7)
    model = lib.nn.Sequential(
        lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4), lib.nn.Tanh(), lib.nn.Linear(4, 2)
    ).double()
    with lib.no_grad():
        for p in model.parameters():
            p.copy_(lib.tensor(a.standard_normal(tuple(p.shape)), dtype=lib.float64))
    batches = [lib.tensor(a.standard_normal((5, 3)), dtype=lib.float64) for _ in range(4)]
    targets = [lib.tensor(a.standard_normal((5, 2)), dtype=lib.float64) for _ in range(4)]
    return model, batches, targets


def run_swa(lib, case: str) -> dict:
    """SGD on a Linear-BatchNorm-Tanh-Linear model, averaging the weights after each of 6
    steps; then update_bn on the averaged model over the batches. The averaged weights and
    buffers, and the averaged model's output on the first batch."""
    swa_utils = sys.modules[lib.optim.__name__ + ".swa_utils"]
    kwargs = dict(SWA_CASES[case])
    if kwargs.get("multi_avg_fn") == "ema":
        kwargs["multi_avg_fn"] = swa_utils.get_ema_multi_avg_fn(0.8)
    if kwargs.get("avg_fn") == "ema":
        kwargs["avg_fn"] = swa_utils.get_ema_avg_fn(0.7)
    model, batches, targets = _swa_model(lib)
    averaged = swa_utils.AveragedModel(model, **kwargs)
    opt = lib.optim.SGD(model.parameters(), lr=0.1)
    for i in range(6):
        opt.zero_grad()
        loss = ((model(batches[i % 4]) - targets[i % 4]) ** 2).mean()
        loss.backward()
        opt.step()
        averaged.update_parameters(model)
    before_bn = {k: v.reshape(-1).tolist() for k, v in averaged.state_dict().items()}
    swa_utils.update_bn([(b, t) for b, t in zip(batches, targets)], averaged)
    after_bn = {k: v.reshape(-1).tolist() for k, v in averaged.state_dict().items()}
    averaged.eval()
    with lib.no_grad():
        out = averaged(batches[0]).reshape(-1).tolist()
    return {"before_bn": before_bn, "after_bn": after_bn, "output": out}


def record() -> dict:
    import torch

    torch.set_default_dtype(torch.float32)
    out = {
        "torch_version": torch.__version__.split("+")[0],
        "optimizers": {c: run_optimizer(torch, c) for c in OPTIMIZER_CASES},
        "optimizers_float32": {c: run_optimizer(torch, c, "float32") for c in OPTIMIZER_CASES},
        "lbfgs": {c: run_lbfgs(torch, c) for c in LBFGS_CASES},
        "schedulers": {c: run_scheduler(torch, c) for c in SCHEDULER_CASES},
        "swa": {c: run_swa(torch, c) for c in SWA_CASES},
    }
    return out


def dumps(recorded: dict) -> str:
    """JSON with one case per line (reviewable diffs, exact float round trip)."""
    lines = []
    for section, value in recorded.items():
        if isinstance(value, dict):
            cases = ",\n".join(f"  {json.dumps(k)}: {json.dumps(v)}" for k, v in value.items())
            lines.append(f" {json.dumps(section)}: {{\n{cases}\n }}")
        else:
            lines.append(f" {json.dumps(section)}: {json.dumps(value)}")
    return "{\n" + ",\n".join(lines) + "\n}\n"


if __name__ == "__main__":
    EXPECTED.write_text(dumps(record()))
    print(f"wrote {EXPECTED}")
