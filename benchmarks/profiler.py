"""Profiler and anomaly-detector overhead, coretorch against PyTorch, in one run.

    .venv/bin/python benchmarks/profiler.py [--quick]

Reports (targets in brackets):
- a training step of the digits CNN of examples/train_digits.py (batch 32, AdamW), per step
  inside a long session: profile() [<= 1.10x], profile with record_shapes, profile_memory,
  with_stack and with_flops [<= 1.35x], with_stack [<= 1.20x], with_modules [<= 1.15x],
  detect_anomaly() [<= 1.30x]; PyTorch's profiler and anomaly mode on the same model beside;
- building the HTML report of a 30-step trace read back from its file, and the diff of two
  such traces [each < 1 s];
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
import os
import sys
import tempfile
import time
import warnings

import coretorch as ct
from coretorch import record_function as rf_mod
from coretorch_profiler import detect_anomaly, diff, load_trace, profile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))
from train_digits import build_model  # noqa: E402

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


def _entry_without_record_function(op):
    """The op's generated entry point as it would be without its RecordFunction site (built from
    the real generated source, so the comparison stays true as the dispatcher changes)."""
    lines = op.entry_source.splitlines()
    i = next(n for n, ln in enumerate(lines) if ln.strip().startswith("if _rf.active:"))
    indent = len(lines[i]) - len(lines[i].lstrip())
    j = i + 1
    while j < len(lines) and len(lines[j]) - len(lines[j].lstrip()) > indent:
        j += 1
    ns: dict = {}
    exec("\n".join(lines[:i] + lines[j:]), op.entry.__globals__, ns)  # noqa: S102
    fn = ns[op.entry.__name__]
    fn.__kwdefaults__ = op.entry.__kwdefaults__
    return fn


def bench_dispatch(quick: bool) -> list[tuple[str, float, float | None]]:
    import torch

    rep, num = (5, 2000) if quick else (15, 20000)
    a, b = ct.ones(4), ct.ones(4)
    add = ct.add
    stripped = _entry_without_record_function(ct.ops.aten.add)
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
    return [
        ("add, no profiler: with / without RecordFunction site", t_with / t_without, None),
        ("add with one no-op RecordFunction callback", t_cb / t_plain, None),
        (
            f"  (absolute: coretorch add {t_with * 1e6:.2f} us, torch add {t_torch * 1e6:.2f} us)",
            float("nan"),
            None,
        ),
    ]


def torch_profile(**kw):
    """A factory of PyTorch profiler sessions (CPU activity) with options `kw`."""
    import torch.profiler as tp

    def make():
        stack = contextlib.ExitStack()
        stack.enter_context(quiet_stderr())  # kineto logs two lines per session there
        stack.enter_context(tp.profile(activities=[tp.ProfilerActivity.CPU], **kw))
        return stack

    return make


def torch_anomaly():
    """A PyTorch anomaly-detection session, its warning silenced."""
    import torch

    stack = contextlib.ExitStack()
    stack.enter_context(warnings.catch_warnings())
    warnings.simplefilter("ignore")
    stack.enter_context(torch.autograd.detect_anomaly())
    return stack


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

    out = []
    for label, (batch, sizes), target_p, target_a in (
        ("tiny MLP 32-64-10, batch 32", TINY, 1.5, 1.5),
        ("big MLP 784-2048-2048-10, batch 256", BIG, 1.05, 1.1),
    ):
        rep, num = (
            ((3, 20) if quick else (7, 100)) if sizes is TINY[1] else ((3, 1) if quick else (25, 1))
        )
        ours = _ratios(
            mlp_step(ct, batch, sizes),
            lambda: profile(record_shapes=True),
            lambda: detect_anomaly(),
            rep,
            num,
        )

        theirs = _ratios(
            mlp_step(torch, batch, sizes),
            torch_profile(record_shapes=True),
            torch_anomaly,
            rep,
            num,
        )
        out.append(
            (f"{label}: profile(record_shapes) per step [<= {target_p}x]", ours[0], theirs[0])
        )
        out.append((f"{label}: profile(record_shapes) with setup", ours[1], theirs[1]))
        out.append((f"{label}: detect_anomaly [<= {target_a}x]", ours[2], theirs[2]))
    return out


# ---- the digits CNN: every profiler option -------------------------------------------------


def cnn_step(lib):
    """One AdamW step of the digits CNN on a fixed batch of 32, built with `lib`."""
    lib.manual_seed(0)
    model = build_model(lib.nn)
    opt = lib.optim.AdamW(model.parameters(), lr=1e-3)
    x, y = lib.randn(32, 1, 8, 8), lib.randint(0, 10, (32,))

    def step():
        opt.zero_grad()
        lib.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()

    return step


ALL = dict(record_shapes=True, profile_memory=True, with_stack=True, with_flops=True)
CNN_ROWS = (
    ("profile()", {}, 1.10),
    ("profile(record_shapes, memory, stack, flops)", ALL, 1.35),
    ("profile(with_stack=True)", {"with_stack": True}, 1.20),
    ("profile(with_modules=True)", {"with_modules": True}, 1.15),
)


def _steady_ratios(step, contexts: dict, rep: int, num: int) -> dict[str, float]:
    """{name: best per-step time under that context / best plain time}, measured in
    interleaved rounds of `num` steps (the first step of each session is not timed)."""
    best = {k: float("inf") for k in ["plain", *contexts]}
    step()
    for _ in range(rep):
        for name in best:
            with contexts[name]() if name != "plain" else contextlib.nullcontext():
                step()
                t = time.perf_counter()
                for _ in range(num):
                    step()
                best[name] = min(best[name], (time.perf_counter() - t) / num)
    return {k: v / best["plain"] for k, v in best.items() if k != "plain"} | {
        "plain_ms": best["plain"] * 1e3
    }


def bench_cnn(quick: bool) -> list[tuple[str, float, float | None]]:
    import torch

    # 30 rounds of 10 steps: the best round of each context is stable to ~1% here (9 rounds of
    # 20 moved it by 3-4% from run to run)
    rep, num = (3, 5) if quick else (30, 10)
    ours = {label: (lambda kw=kw: profile(**kw)) for label, kw, _ in CNN_ROWS}
    ours["detect_anomaly()"] = detect_anomaly
    r_ours = _steady_ratios(cnn_step(ct), ours, rep, num)

    theirs = {label: torch_profile(**kw) for label, kw, _ in CNN_ROWS}
    theirs["detect_anomaly()"] = torch_anomaly
    r_theirs = _steady_ratios(cnn_step(torch), theirs, rep, num)
    rows = [
        (f"digits CNN step: {label} [<= {target}x]", r_ours[label], r_theirs[label])
        for label, _, target in CNN_ROWS
    ]
    rows.append(
        (
            "digits CNN step: detect_anomaly() [<= 1.3x]",
            r_ours["detect_anomaly()"],
            r_theirs["detect_anomaly()"],
        )
    )
    rows.append(
        (
            f"  (absolute: coretorch step {r_ours['plain_ms']:.2f} ms, torch step "
            f"{r_theirs['plain_ms']:.2f} ms)",
            float("nan"),
            None,
        )
    )
    return rows


def bench_report(quick: bool) -> list[tuple[str, float, float | None]]:
    """Seconds to build the report (and the diff) of 30-step traces read back from files."""
    step = cnn_step(ct)
    step()
    folder = tempfile.mkdtemp()
    paths = []
    for n in range(2):
        with profile(with_modules=True, **ALL) as prof:
            for _ in range(30):
                step()
        paths.append(prof.export_chrome_trace(os.path.join(folder, f"t{n}.json.gz")))
    reps = 1 if quick else 3
    t_report = t_diff = float("inf")
    for _ in range(reps):
        t = time.perf_counter()
        load_trace(paths[0]).export_html(os.path.join(folder, "report.html"))
        t_report = min(t_report, time.perf_counter() - t)
        t = time.perf_counter()
        diff(paths[0], paths[1]).table()
        t_diff = min(t_diff, time.perf_counter() - t)
    return [
        ("30-step CNN trace: load + HTML report, seconds [< 1]", t_report, None),
        ("two 30-step CNN traces: load + diff table, seconds [< 1]", t_diff, None),
    ]


WIDTH = 86


def _print(rows: list[tuple[str, float, float | None]]) -> None:
    for name, ours, theirs in rows:
        unit = "s" if "seconds" in name else "x"
        o = "" if ours != ours else f"{ours:9.3f}{unit}"
        t = "" if theirs is None else f"{theirs:7.2f}x"
        print(f"{name:<{WIDTH}}  {o:>10}  {t:>8}", flush=True)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="fewer repetitions (a smoke run)")
    args = p.parse_args()
    print(f"{'measurement':<{WIDTH}}  {'coretorch':>10}  {'torch':>8}", flush=True)
    for bench in (bench_dispatch, bench_cnn, bench_report, bench_steps):
        _print(bench(args.quick))


if __name__ == "__main__":
    main()
