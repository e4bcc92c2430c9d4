"""coretorch.compile against PyTorch eager (CPU), in one run: the targets of the capture-and-replay
work. Each row times PyTorch eager, coretorch eager and coretorch compiled in turns (a loaded
machine slows all alike) and prints medians and ratios to PyTorch eager.

    .venv/bin/python benchmarks/compile.py [--repeat N] [--quick] [--threads N]

Rows (target ratio to PyTorch eager, compiled):
- MLP 32-64-10 step, batch 32, SGD momentum                      (<= 0.8x)
- 100-link elementwise chain on 4 floats, forward + backward     (<= 0.1x)
- LeNet CNN step, batch 64                                        (<= 1.0x)
- the digits CNN of examples/train_digits.py, one epoch (AdamW)   (<= 1.0x)
- first (capturing) call: seconds, and as a multiple of one eager step (<= 1 s and <= 3x)

Both libraries use their default thread pools (one thread per core) unless ``--threads N`` caps
both. Without PyTorch installed the coretorch times are printed alone.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import warnings
from collections.abc import Callable

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))

from train import _limit_threads, _median_time
from train_digits import build_model, digits_arrays, make_step

import coretorch as ct

try:
    import torch
except ImportError:  # the comparison is optional
    torch = None


def _train_step(lib, model, opt) -> Callable:
    return make_step(model, opt, lib.nn.CrossEntropyLoss())


def _data(lib, x_shape: tuple, classes: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    x = lib.tensor(rng.standard_normal(x_shape).astype(np.float32))
    return x, lib.tensor(rng.integers(0, classes, size=x_shape[0]))


def mlp(lib):
    """MLP 32-64-10, batch 32, SGD momentum: (step, args)."""
    lib.manual_seed(0)
    nn = lib.nn
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10))
    return _train_step(lib, model, lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)), _data(
        lib, (32, 32), 10
    )


def lenet(lib):
    """LeNet-sized CNN on a 64 x 1 x 28 x 28 batch, SGD momentum: (step, args)."""
    lib.manual_seed(0)
    nn = lib.nn
    model = nn.Sequential(
        nn.Conv2d(1, 32, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(3136, 128),
        nn.ReLU(),
        nn.Linear(128, 10),
    )
    return _train_step(lib, model, lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)), _data(
        lib, (64, 1, 28, 28), 10
    )


def chain(lib, links: int = 100):
    """`links` elementwise ops on 4 floats, then sum and backward: (step, args)."""
    w = lib.ones(4, requires_grad=True)
    ops = (lambda t: t * 1.001, lambda t: t + 0.5, lambda t: t.sin(), lambda t: t - 0.25)

    def step(x):
        w.grad = None
        y = w * x
        for i in range(links):
            y = ops[i % 4](y)
        y.sum().backward()
        return w.grad

    return step, (lib.full((4,), 0.5),)


def digits_epoch(lib, batch: int = 32):
    """One epoch of examples/train_digits.py's CNN with AdamW: (epoch, (batches,))."""
    lib.manual_seed(0)
    pixels, labels = digits_arrays()
    x = lib.tensor(pixels).reshape(-1, 1, 8, 8)[:1437]
    y = lib.tensor(labels)[:1437]
    model = build_model(lib.nn)
    step = _train_step(lib, model, lib.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=1e-4))
    batches = [(x[i : i + batch], y[i : i + batch]) for i in range(0, len(y), batch)]

    def epoch(step_fn):
        for xb, yb in batches:
            step_fn(xb, yb)

    return epoch, step


def _interleaved(fns: list[Callable], repeat: int, warmup: int = 3) -> list[float]:
    """Median wall time of each of `fns`, run in turns."""
    for _ in range(warmup):
        for f in fns:
            f()
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(repeat):
        for f, ts in zip(fns, times):
            t = time.perf_counter()
            f()
            ts.append(time.perf_counter() - t)
    return [statistics.median(ts) for ts in times]


def _row(name: str, make: Callable, repeat: int, target: float) -> None:
    step, args = make(ct)
    eager_step, eager_args = make(ct)
    compiled = ct.compile(step, fuse=False)
    fns = [lambda: eager_step(*eager_args), lambda: compiled(*args)]
    if torch is not None:
        tstep, targs = make(torch)
        fns.append(lambda: tstep(*targs))
    t = _interleaved(fns, repeat)
    line = f"{name:<44s} eager {t[0] * 1e6:9.0f} µs  compiled {t[1] * 1e6:9.0f} µs"
    if torch is not None:
        line += (
            f"  torch {t[2] * 1e6:9.0f} µs  eager {t[0] / t[2]:5.2f}x  compiled "
            f"{t[1] / t[2]:5.2f}x (target <= {target}x)"
        )
    print(line)


def _digits_row(repeat: int) -> None:
    ep, step = digits_epoch(ct)
    ep_e, step_e = digits_epoch(ct)
    compiled = ct.compile(step, fuse=False)
    fns = [lambda: ep_e(step_e), lambda: ep(compiled)]
    if torch is not None:
        tep, tstep = digits_epoch(torch)
        fns.append(lambda: tep(tstep))
    t = _interleaved(fns, repeat, warmup=1)
    line = (
        f"{'digits CNN epoch (AdamW, batch 32)':<44s} eager {t[0]:9.3f} s   compiled {t[1]:9.3f} s "
    )
    if torch is not None:
        line += (
            f"  torch {t[2]:9.3f} s   eager {t[0] / t[2]:5.2f}x  compiled "
            f"{t[1] / t[2]:5.2f}x (target <= 1.0x)"
        )
    print(line)


def _first_call(name: str, make: Callable, trials: int = 5) -> None:
    """The capturing call's wall and CPU time (on a loaded machine the wall time of a few
    milliseconds is mostly other processes' time slices), against one eager step's, for
    `trials` fresh compiled functions, each capturing once: the process's first (the cold
    case a user meets: main() runs these rows before any other) and the median of all."""
    step, args = make(ct)
    walls, cpus = [], []
    for _ in range(trials):
        compiled = ct.compile(step, fuse=False)
        compiled(*args)  # the eager warm-up call
        w, c = time.perf_counter(), time.process_time()
        compiled(*args)  # records
        walls.append(time.perf_counter() - w)
        cpus.append(time.process_time() - c)
    eager = _median_time(lambda: step(*args), 5)
    c = time.process_time()
    for _ in range(5):
        step(*args)
    eager_cpu = (time.process_time() - c) / 5
    wall, cpu = statistics.median(walls), statistics.median(cpus)
    print(
        f"first (capturing) call, {name:<16s} first {walls[0]:6.3f} s = {walls[0] / eager:5.2f}x, "
        f"median of {trials} {wall:6.3f} s = {wall / eager:5.2f}x (CPU {cpu / eager_cpu:4.2f}x) "
        "one eager step (target <= 1 s and <= 3x)"
    )


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--repeat", type=int, default=30, help="timed rounds per row")
    p.add_argument("--quick", action="store_true", help="fewer rounds, no digits epoch")
    p.add_argument("--threads", type=int, help="cap coretorch and PyTorch at this many threads")
    a = p.parse_args(argv)
    repeat = 8 if a.quick else a.repeat
    # the digits epoch's last, smaller batch records a second variant: expected, not news
    warnings.filterwarnings("ignore", category=ct.compile.CompileWarning)
    if a.threads:
        _limit_threads(a.threads, torch)
    threads = f"{ct.get_num_threads()} coretorch threads" + (
        f", {torch.get_num_threads()} PyTorch threads" if torch is not None else ""
    )
    print(
        f"coretorch.compile benchmark (median of {repeat}; {threads}; load average "
        f"{os.getloadavg()[0]:.1f}){'' if torch is not None else ' - PyTorch not installed'}"
    )
    # first: a capture later in the run would find the capture path warmed by the other rows
    _first_call("MLP 32-64-10", mlp)
    _first_call("LeNet", lenet)
    _row("MLP 32-64-10 step, batch 32", mlp, repeat * 10, 0.8)
    _row("100-link elementwise chain fwd+bwd, 4 floats", chain, repeat * 3, 0.1)
    _row("LeNet CNN step, batch 64", lenet, repeat, 1.0)
    if not a.quick:
        _digits_row(max(3, repeat // 10))


if __name__ == "__main__":
    main()
