"""Ratio benchmarks of the cpu backend against PyTorch (CPU) and numpy, measured in one run.

    python benchmarks/ops.py [--quick]

Two threads for everyone (torch.set_num_threads(2), numba.set_num_threads(2)); numpy is
single-threaded. Each timing is the best of several repeats. Prints a rich table: the time of
each library and coretorch's speed relative to PyTorch (>1 is faster) against the issue's
target. Not a test: the machine's load moves these numbers.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import timeit
from typing import Callable

import numpy as np
from _results import Results, add_json_option

THREADS = 2


def best(fn: Callable[[], object], number: int, repeat: int) -> float:
    """Seconds per call: the best of `repeat` runs of `number` calls."""
    fn()
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number


def startup(cold: bool) -> float:
    """Seconds for ``import coretorch`` + first ``ones(3) + 1`` in a fresh process."""
    code = (
        "import time; t = time.perf_counter(); import coretorch as ct; "
        "(ct.ones(3) + 1).tolist(); print(time.perf_counter() - t)"
    )
    env = dict(os.environ)
    with tempfile.TemporaryDirectory() as cache:
        if cold:
            env["NUMBA_CACHE_DIR"] = cache
        if not cold:
            subprocess.run(
                [sys.executable, "-c", code], env=env, check=True, capture_output=True
            )  # fill the cache first
        out = subprocess.run(
            [sys.executable, "-c", code], env=env, check=True, capture_output=True, text=True
        ).stdout
    return float(out.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer repeats (noisier)")
    add_json_option(ap)
    args = ap.parse_args()
    rep = 3 if args.quick else 7

    import numba

    import coretorch as ct

    numba.set_num_threads(THREADS)
    try:
        import torch

        torch.set_num_threads(THREADS)
    except ImportError:
        torch = None

    rows: list[tuple] = []  # (name, ct_s, torch_s, numpy_s, target, kind, note)

    # per-op overhead: a + b on 4 float32
    a, b = ct.ones(4), ct.ones(4)
    na, nb = np.ones(4, np.float32), np.ones(4, np.float32)
    n = 20000 if args.quick else 100000
    t_ct = best(lambda: a + b, n, rep)
    t_np = best(lambda: na + nb, n, rep)
    t_t = None
    if torch is not None:
        ta, tb = torch.ones(4), torch.ones(4)
        t_t = best(lambda: ta + tb, n, rep)
    rows.append(("a + b, 4 float32 (overhead)", t_ct, t_t, t_np, 4.0, "overhead", ""))

    # throughput on 16M float32 with a new output
    size = 16 * 1024 * 1024
    rng = np.random.default_rng(0)
    xa = rng.standard_normal(size, dtype=np.float32)
    xb = rng.standard_normal(size, dtype=np.float32)
    ca, cb = ct.from_numpy(xa), ct.from_numpy(xb)
    ta = tb = None
    if torch is not None:
        ta, tb = torch.from_numpy(xa), torch.from_numpy(xb)
    big = [
        ("add 16M float32", lambda: ca + cb, lambda: ta + tb, lambda: xa + xb, 1.0),
        ("mul 16M float32", lambda: ca * cb, lambda: ta * tb, lambda: xa * xb, 1.0),
        ("exp 16M float32", lambda: ct.exp(ca), lambda: torch.exp(ta), lambda: np.exp(xa), 1.0),
        ("sum 16M float32", lambda: ct.sum(ca), lambda: torch.sum(ta), lambda: xa.sum(), 0.7),
    ]
    m1 = rng.standard_normal((1024, 1024), dtype=np.float32)
    m2 = rng.standard_normal((1024, 1024), dtype=np.float32)
    cm1, cm2 = ct.from_numpy(m1), ct.from_numpy(m2)
    tm1 = tm2 = None
    if torch is not None:
        tm1, tm2 = torch.from_numpy(m1), torch.from_numpy(m2)
    big.append(
        ("matmul 1024x1024 float32", lambda: cm1 @ cm2, lambda: tm1 @ tm2, lambda: m1 @ m2, 0.85)
    )
    big += _conv_cases(ct, torch, rng)
    for name, f_ct, f_t, f_np, target in big:
        try:
            t_ct = best(f_ct, 1, rep)
        except NotImplementedError as e:
            rows.append(
                (
                    name,
                    None,
                    None,
                    None,
                    target,
                    "speed",
                    f"skipped: no cpu kernel yet ({str(e).splitlines()[0][:60]})",
                )
            )
            continue
        t_t = best(f_t, 1, rep) if torch is not None else None
        t_np = best(f_np, 1, rep) if f_np is not None else None
        rows.append((name, t_ct, t_t, t_np, target, "speed", ""))

    warm = startup(cold=False)
    cold = startup(cold=True)
    _print(rows, warm, cold, torch is not None)
    if torch is not None:
        _results(rows, f"torch {torch.__version__} ({THREADS} threads)").write(args.json)


def _results(rows, peer: str) -> Results:
    """The rows measured against PyTorch, each target as a bound on the time ratio."""
    results = Results("ops.py", peer)
    for name, t_ct, t_t, _, target, kind, _ in rows:
        if t_ct is not None and t_t is not None:
            results.add(name, t_ct, t_t, target if kind == "overhead" else 1 / target)
    return results


def _conv_cases(ct, torch, rng) -> list:
    """conv2d forward and forward+backward on a 64x32x14x14 input, weight 64x32x3x3, padding 1
    (target: >= 0.67x the speed of PyTorch, i.e. <= 1.5x its time); no numpy column."""
    x = rng.standard_normal((64, 32, 14, 14), dtype=np.float32)
    w = rng.standard_normal((64, 32, 3, 3), dtype=np.float32)

    def case(lib, backward: bool):
        if lib is None:
            return None
        xx = lib.tensor(x, requires_grad=backward)
        ww = lib.tensor(w, requires_grad=backward)
        conv = lib.nn.functional.conv2d
        if not backward:
            return lambda: conv(xx, ww, padding=1)
        return lambda: conv(xx, ww, padding=1).sum().backward()

    return [
        (
            "conv2d 64x32x14x14, 3x3 weight 64x32, forward",
            case(ct, False),
            case(torch, False),
            None,
            0.67,
        ),
        (
            "conv2d 64x32x14x14, 3x3 weight 64x32, forward+backward",
            case(ct, True),
            case(torch, True),
            None,
            0.67,
        ),
    ]


def _fmt(s: float | None) -> str:
    if s is None:
        return "-"
    if s < 1e-3:
        return f"{s * 1e6:.2f} µs"
    if s < 1:
        return f"{s * 1e3:.2f} ms"
    return f"{s:.2f} s"


def _print(rows, warm: float, cold: float, have_torch: bool) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"coretorch cpu backend vs PyTorch and numpy ({THREADS} threads)")
    for col in (
        "benchmark",
        "coretorch",
        "PyTorch",
        "numpy",
        "coretorch vs PyTorch",
        "target",
        "ok",
    ):
        table.add_column(col, justify="left" if col == "benchmark" else "right")
    for name, t_ct, t_t, t_np, target, kind, note in rows:
        if t_ct is None:
            table.add_row(name, "-", "-", "-", note, "", "")
            continue
        if t_t is None:
            table.add_row(name, _fmt(t_ct), "-", _fmt(t_np), "no PyTorch", "", "")
            continue
        if kind == "overhead":
            ratio = t_ct / t_t
            cell, tgt, ok = f"{ratio:.2f}x the time", f"<= {target:g}x", ratio <= target
        else:
            ratio = t_t / t_ct
            cell, tgt, ok = f"{ratio:.2f}x the speed", f">= {target:g}x", ratio >= target
        table.add_row(
            name,
            _fmt(t_ct),
            _fmt(t_t),
            _fmt(t_np),
            cell,
            tgt,
            "[green]yes[/]" if ok else "[red]no[/]",
        )
    table.add_row(
        "import + first ones(3)+1, warm cache",
        _fmt(warm),
        "",
        "",
        "",
        "<= 2 s",
        "[green]yes[/]" if warm <= 2 else "[red]no[/]",
    )
    table.add_row("import + first ones(3)+1, cold cache", _fmt(cold), "", "", "", "reported", "")
    Console(width=140).print(table)
    if not have_torch:
        print("PyTorch is not installed: ratios against it are not available.")


if __name__ == "__main__":
    main()
