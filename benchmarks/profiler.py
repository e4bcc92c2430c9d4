"""Profiler and anomaly-detector overhead, coretorch against PyTorch, in one run.

    .venv/bin/python benchmarks/profiler.py [--quick]

Reports (issue 6's targets in brackets):
- no profiler active: `a + b` through the real dispatcher vs the same dispatcher with its
  RecordFunction site stripped out (no measurable difference); and the cost of a RecordFunction
  with one no-op callback;
- profile(record_shapes=True) around a training step of a tiny MLP (32-64-10, batch 32)
  [<= 1.5x] and of a big MLP (784-2048-2048-10, batch 256) [<= 1.05x], per step inside a long
  session and with setup (a session of one step);
- detect_anomaly() on the same steps [tiny <= 1.5x, big <= 1.1x].
Each ratio is the best time of the profiled step over the best time of the plain step, measured
in interleaved rounds (on a busy machine, the best of several rounds is the stable statistic):
100 steps per round for the tiny MLP, one step per round, in 25 rounds, for the big one (whose
steps the machine's memory traffic slows by up to 10% at random).
"""
from __future__ import annotations

import argparse
import contextlib
import inspect
import os
import statistics
import sys
import textwrap
import time
import types
import warnings

import coretorch as ct
from coretorch import record_function as rf_mod
from coretorch.dispatch import operator as op_mod
from coretorch_profiler import detect_anomaly, profile

TINY = (32, [32, 64, 10])
BIG = (256, [784, 2048, 2048, 10])


@contextlib.contextmanager
def quiet_stderr():
    """Silence the process's stderr (file descriptor 2) for the block."""
    sys.stderr.flush()
    saved = os.dup(2)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 2)
    try:
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)


def best_time(fn, repeat: int, number: int) -> float:
    """Best over `repeat` runs of the mean time of `number` calls (seconds)."""
    fn()
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - t) / number)
    return best


def interleaved_min(f, g, repeat: int, number: int) -> tuple[float, float]:
    """Best mean time of `number` calls of f and of g, measured in alternation (a shared
    machine's drift hits both alike)."""
    f(), g()
    best_f = best_g = float("inf")
    for _ in range(repeat):
        for fn, which in ((f, 0), (g, 1)):
            t = time.perf_counter()
            for _ in range(number):
                fn()
            dt = (time.perf_counter() - t) / number
            if which == 0:
                best_f = min(best_f, dt)
            else:
                best_g = min(best_g, dt)
    return best_f, best_g


# ---- no profiler active --------------------------------------------------------------------

def _call_without_record_function():
    """Operator.__call__ as it would be without its RecordFunction site (built from the real
    source, so the comparison stays true as the dispatcher changes)."""
    src = textwrap.dedent(inspect.getsource(op_mod.Operator.__call__))
    lines = src.splitlines()
    i = next(n for n, ln in enumerate(lines) if "if _rf_state.active:" in ln)
    indent = len(lines[i]) - len(lines[i].lstrip())
    j = i + 1
    while j < len(lines) and len(lines[j]) - len(lines[j].lstrip()) > indent:
        j += 1
    ns: dict = {}
    exec("\n".join(lines[:i] + lines[j:]), vars(op_mod), ns)  # noqa: S102
    return ns["__call__"]


def bench_dispatch(quick: bool) -> list[tuple[str, float, float | None]]:
    import torch
    rep, num = (5, 2000) if quick else (15, 20000)
    a, b = ct.ones(4), ct.ones(4)
    add = ct.ops.aten.add
    stripped = types.MethodType(_call_without_record_function(), add)
    t_with, t_without = interleaved_min(lambda: add(a, b), lambda: stripped(a, b), rep, num)
    t_plain = t_cb = float("inf")
    for _ in range(rep):
        t_plain = min(t_plain, best_time(lambda: add(a, b), 1, num))
        handle = rf_mod.add_global_callback(lambda rf: None, lambda rf, s: None)
        try:
            t_cb = min(t_cb, best_time(lambda: add(a, b), 1, num))
        finally:
            rf_mod.remove_callback(handle)
    ta, tb = torch.ones(4), torch.ones(4)
    t_torch = best_time(lambda: torch.add(ta, tb), rep, num)
    return [("add, no profiler: with / without RecordFunction site", t_with / t_without, None),
            ("add with one no-op RecordFunction callback", t_cb / t_plain, None),
            (f"  (absolute: coretorch add {t_with * 1e6:.2f} us, torch add "
             f"{t_torch * 1e6:.2f} us)", float("nan"), None)]


# ---- training steps --------------------------------------------------------------------------

def mlp_step(lib, batch: int, sizes: list[int]):
    """One SGD training step of an MLP of `sizes` on a fixed batch, built with `lib`
    (coretorch or torch: the same API)."""
    nn = lib.nn
    layers = []
    for i in range(len(sizes) - 1):
        layers.append(nn.Linear(sizes[i], sizes[i + 1]))
        if i < len(sizes) - 2:
            layers.append(nn.ReLU())
    model = nn.Sequential(*layers)
    opt = lib.optim.SGD(model.parameters(), lr=0.01)
    x = lib.randn(batch, sizes[0])
    y = lib.randint(0, sizes[-1], (batch,))

    def step():
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
    return step


def _ratios(step, prof_ctx, anomaly_ctx, rep: int, num: int) -> tuple[float, float, float]:
    """(profiled per step in a session, profiled with setup, anomaly) over plain: the best of
    `rep` interleaved rounds of `num` steps each (the machine's drift hits all alike). The first
    step of each round and session is not timed: a training loop's steady state is measured."""
    def timed(n: int, fn) -> float:
        t = time.perf_counter()
        for _ in range(n):
            fn()
        return (time.perf_counter() - t) / n

    def one_step_session():
        with prof_ctx():
            step()

    step()
    best = [float("inf")] * 4
    for _ in range(rep):
        step()
        best[0] = min(best[0], timed(num, step))
        with prof_ctx():
            step()
            best[1] = min(best[1], timed(num, step))
        best[2] = min(best[2], timed(max(1, num // 4), one_step_session))
        with anomaly_ctx():
            step()
            best[3] = min(best[3], timed(num, step))
    plain = best[0]
    return best[1] / plain, best[2] / plain, best[3] / plain


def bench_steps(quick: bool) -> list[tuple[str, float, float | None]]:
    import torch
    import torch.profiler as tp
    out = []
    for label, (batch, sizes), target_p, target_a in (("tiny MLP 32-64-10, batch 32", TINY,
                                                       1.5, 1.5),
                                                      ("big MLP 784-2048-2048-10, batch 256",
                                                       BIG, 1.05, 1.1)):
        rep, num = ((3, 20) if quick else (7, 100)) if sizes is TINY[1] else \
            ((3, 1) if quick else (25, 1))
        ours = _ratios(mlp_step(ct, batch, sizes),
                       lambda: profile(record_shapes=True),
                       lambda: detect_anomaly(), rep, num)

        def torch_prof():
            stack = contextlib.ExitStack()
            stack.enter_context(quiet_stderr())  # kineto logs two lines per session there
            stack.enter_context(tp.profile(activities=[tp.ProfilerActivity.CPU],
                                           record_shapes=True))
            return stack

        def torch_anomaly():
            stack = contextlib.ExitStack()
            stack.enter_context(warnings.catch_warnings())
            warnings.simplefilter("ignore")
            stack.enter_context(torch.autograd.detect_anomaly())
            return stack
        theirs = _ratios(mlp_step(torch, batch, sizes), torch_prof, torch_anomaly, rep, num)
        out.append((f"{label}: profile(record_shapes) per step [<= {target_p}x]", ours[0],
                    theirs[0]))
        out.append((f"{label}: profile(record_shapes) with setup", ours[1], theirs[1]))
        out.append((f"{label}: detect_anomaly [<= {target_a}x]", ours[2], theirs[2]))
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="fewer repetitions (a smoke run)")
    args = p.parse_args()
    rows = bench_dispatch(args.quick) + bench_steps(args.quick)
    width = max(len(r[0]) for r in rows)
    print(f"{'measurement':<{width}}  {'coretorch':>10}  {'torch':>8}")
    for name, ours, theirs in rows:
        o = "" if ours != ours else f"{ours:9.3f}x"
        t = "" if theirs is None else f"{theirs:7.2f}x"
        print(f"{name:<{width}}  {o:>10}  {t:>8}")


if __name__ == "__main__":
    main()
