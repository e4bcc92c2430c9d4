"""Training-step benchmarks: coretorch against PyTorch (CPU) in one run.

    .venv/bin/python benchmarks/train.py [--repeat N] [--quick] [--threads N] [--only TEXT]
                                         [--processes]

Rows (median wall time of one full step: zero_grad, forward, cross-entropy, backward, SGD
momentum update):
- MLP 784-1024-1024-10, batch 256   (target: <= 1.2x PyTorch)
- MLP 32-64-10, batch 32             (target: <= 4x PyTorch)
- LeNet CNN (conv 1->32 and 32->64, 3x3, pad 1, max-pool, linear 3136-128-10), MNIST shapes,
  batch 64                           (target: <= 1.5x PyTorch)
- the digits CNN of examples/train_digits.py, one epoch (ratio printed)

Each row runs coretorch and PyTorch in alternation (a loaded machine slows both alike).
``--threads N`` caps both at N threads (BLAS, numba and PyTorch's pools): on a machine shared
with other work, ``--threads 1`` gives ratios that stay put from run to run, where two threads
per library on two busy cores mostly measure how their thread pools spin. ``--only TEXT`` runs
the rows whose name contains TEXT. ``--processes`` times each library in processes of its own
(three rounds, in turns; the median of the rounds' medians): with several threads per library,
two libraries in one process slow each other (the idle threads of one pool spin on the cores the
other's threads need), and which one loses depends on which ran last.

Then (the machine's load average printed):
- MLP 784-1024-1024-10, batch 256, one Adam step (target: <= 1.0x PyTorch)
- Adam.step() alone on that MLP's 1.9M parameters (target: <= 1.0x PyTorch)
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

import numpy as np
from rich.console import Console
from rich.table import Table

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))

from _results import Results, add_json_option  # noqa: E402
from _timing import alternating_medians  # noqa: E402

import coretorch as ct  # noqa: E402


def _median_time(fn, repeat: int, warmup: int = 3) -> float:
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def _mlp_step(lib, sizes: list[int], batch: int):
    """A closure running one SGD-momentum training step of an MLP in `lib` (coretorch or torch)."""
    rng = np.random.default_rng(0)
    layers = []
    for i in range(len(sizes) - 1):
        layers.append(lib.nn.Linear(sizes[i], sizes[i + 1]))
        if i < len(sizes) - 2:
            layers.append(lib.nn.ReLU())
    model = lib.nn.Sequential(*layers)
    x = lib.tensor(rng.standard_normal((batch, sizes[0])).astype(np.float32))
    y = lib.tensor(rng.integers(0, sizes[-1], size=batch))
    opt = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = lib.nn.CrossEntropyLoss()

    def step():
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()

    return step


def _lenet_step(lib):
    """A closure running one SGD-momentum step of a LeNet-sized CNN on a 64 x 1 x 28 x 28 batch."""
    nn = lib.nn
    rng = np.random.default_rng(0)
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
    x = lib.tensor(rng.standard_normal((64, 1, 28, 28)).astype(np.float32))
    y = lib.tensor(rng.integers(0, 10, size=64))
    opt = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()

    def step():
        opt.zero_grad()
        loss_fn(model(x), y).backward()
        opt.step()

    return step


def _digits_epoch(lib):
    """A closure running one epoch of the digits CNN (same architecture, data and batch size)."""
    from train_digits import build_model, digits_arrays

    pixels, labels = digits_arrays()
    x, y = pixels.reshape(-1, 1, 8, 8)[:1437], labels[:1437]
    model = build_model(lib.nn)
    F = lib.nn.functional
    xt, yt = lib.tensor(x), lib.tensor(y)
    ds = lib.utils.data.TensorDataset(xt, yt)
    dl = lib.utils.data.DataLoader(
        ds, batch_size=32, shuffle=True, generator=lib.Generator().manual_seed(0)
    )
    opt = lib.optim.AdamW(model.parameters(), lr=3e-3)

    def epoch():
        for xb, yb in dl:
            opt.zero_grad()
            loss = F.cross_entropy(model(xb), yb)
            loss.backward()
            opt.step()

    return epoch


def main() -> None:
    p = argparse.ArgumentParser(description="coretorch vs PyTorch training-step benchmarks")
    p.add_argument("--repeat", type=int, default=20, help="timed repetitions per row")
    p.add_argument("--quick", action="store_true", help="fewer repetitions")
    add_json_option(p)
    p.add_argument(
        "--threads",
        type=int,
        default=None,
        help="cap coretorch (BLAS, numba) and PyTorch at this many threads",
    )
    p.add_argument("--only", default="", help="run only the rows whose name contains this")
    p.add_argument(
        "--processes", action="store_true", help="time each library in processes of its own"
    )
    p.add_argument("--child", help=argparse.SUPPRESS)  # "LIB:ROW:N": one timing, in a child
    args = p.parse_args()
    repeat = 5 if args.quick else args.repeat
    try:
        import torch
    except ImportError:
        torch = None
    if args.threads:
        _limit_threads(args.threads, torch)
    rows = [
        (
            "MLP 784-1024-1024-10, batch 256, SGD momentum step",
            lambda lib: _mlp_step(lib, [784, 1024, 1024, 10], 256),
            repeat,
            1.2,
        ),
        (
            "MLP 32-64-10, batch 32, SGD momentum step",
            lambda lib: _mlp_step(lib, [32, 64, 10], 32),
            repeat * 10,
            4.0,
        ),
        ("LeNet CNN, batch 64, SGD momentum step", _lenet_step, repeat, 1.5),
        ("digits CNN, one epoch (45 steps, AdamW)", _digits_epoch, max(2, repeat // 5), None),
    ]
    if args.child:
        lib_name, row, n = args.child.split(":")
        lib = torch if lib_name == "torch" else ct
        lib.manual_seed(0)
        print(_median_time(rows[int(row)][1](lib), int(n)))
        return
    results = Results(
        "train.py", f"torch {torch.__version__}" if torch else "torch (not installed)"
    )
    table = Table(title="training benchmarks (median wall time)")
    for col in ("benchmark", "coretorch", "PyTorch", "ratio", "target"):
        table.add_column(col, justify="left" if col == "benchmark" else "right")
    for i, (name, make, n, target) in enumerate(rows):
        if args.only.lower() not in name.lower():
            continue
        ct.manual_seed(0)
        if torch is not None:
            torch.manual_seed(0)
            if args.processes:
                ours, theirs = _in_processes(i, n, args.threads)
            else:
                ours, theirs = alternating_medians(make(ct), make(torch), n)
            ratio = ours / theirs
            results.add(name, ours, theirs, target)
            ok = "" if target is None else ("  ok" if ratio <= target else "  MISSED")
            table.add_row(
                name,
                _fmt(ours),
                _fmt(theirs),
                f"{ratio:.2f}x",
                (f"<= {target}x" if target else "printed") + ok,
            )
        else:
            table.add_row(
                name, _fmt(_median_time(make(ct), n)), "n/a", "n/a", "torch not installed"
            )
    Console().print(table)
    if torch is not None:
        Console().print(
            f"torch {torch.__version__}, {torch.get_num_threads()} threads; "
            f"coretorch {ct.__version__}"
        )
        if "adam" in args.only.lower() or not args.only:
            Console().print(_adam_table(torch, repeat, results))
    results.write(args.json)


def _in_processes(row: int, n: int, threads: int | None, rounds: int = 3) -> tuple[float, float]:
    """Median wall times of row `row` for coretorch and PyTorch, each timed in processes of its
    own, `rounds` rounds in turns (the median of the rounds' medians)."""
    extra = ["--threads", str(threads)] if threads else []
    times: dict[str, list[float]] = {"coretorch": [], "torch": []}
    for _ in range(rounds):
        for lib in times:
            out = subprocess.run(
                [sys.executable, __file__, "--child", f"{lib}:{row}:{n}", *extra],
                capture_output=True,
                text=True,
                check=True,
            ).stdout
            times[lib].append(float(out.split()[-1]))
    return statistics.median(times["coretorch"]), statistics.median(times["torch"])


def _limit_threads(n: int, torch) -> None:
    """Cap coretorch (BLAS and numba, `coretorch.set_num_threads`) and PyTorch at `n` threads
    for the rest of the run."""
    ct.set_num_threads(n)
    if torch is not None:
        torch.set_num_threads(n)


# ---- Adam: the fused optimizer step, coretorch and PyTorch alternating ------------------------


def _adam_mlp(lib, step_only: bool):
    """A closure running one Adam training step of the MLP 784-1024-1024-10 (batch 256), or
    with `step_only` only ``Adam.step()`` on its 1.9M parameters (gradients set once)."""
    rng = np.random.default_rng(0)
    model = lib.nn.Sequential(
        lib.nn.Linear(784, 1024),
        lib.nn.ReLU(),
        lib.nn.Linear(1024, 1024),
        lib.nn.ReLU(),
        lib.nn.Linear(1024, 10),
    )
    x = lib.tensor(rng.standard_normal((256, 784)).astype(np.float32))
    y = lib.tensor(rng.integers(0, 10, size=256))
    opt = lib.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = lib.nn.CrossEntropyLoss()

    def step():
        opt.zero_grad()
        loss_fn(model(x), y).backward()
        opt.step()

    if not step_only:
        return step
    step()
    return opt.step


def _adam_table(torch, repeat: int, results: Results) -> Table:
    """MLP step with Adam and Adam.step() alone (targets: <= 1.0x PyTorch), measured in
    alternation, with the machine's load average before and after."""
    table = Table(title="Adam (median wall time, coretorch and PyTorch alternating)")
    for col in ("benchmark", "coretorch", "PyTorch", "ratio", "target"):
        table.add_column(col, justify="left" if col == "benchmark" else "right")
    load = os.getloadavg()[0]
    for name, step_only in (
        ("MLP 784-1024-1024-10, batch 256, Adam step", False),
        ("Adam.step() alone, 1.9M parameters", True),
    ):
        ct.manual_seed(0)
        torch.manual_seed(0)
        ours, theirs = alternating_medians(
            _adam_mlp(ct, step_only), _adam_mlp(torch, step_only), repeat
        )
        ratio = ours / theirs
        results.add(name, ours, theirs, 1.0)
        table.add_row(
            name,
            _fmt(ours),
            _fmt(theirs),
            f"{ratio:.2f}x",
            "<= 1.0x" + ("  ok" if ratio <= 1.0 else "  MISSED"),
        )
    table.caption = (
        f"load average {load:.2f} before, {os.getloadavg()[0]:.2f} after ({os.cpu_count()} cores)"
    )
    return table


def _fmt(seconds: float) -> str:
    return f"{seconds * 1e3:.2f} ms" if seconds >= 1e-3 else f"{seconds * 1e6:.0f} µs"


if __name__ == "__main__":
    main()
