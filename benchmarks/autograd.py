"""Autograd overhead on tiny cpu tensors: coretorch beside PyTorch, as ratios, in one run.

With 4-element tensors the kernels cost almost nothing, so these times are the framework's own
per-op recording cost and the engine's per-node cost.

    .venv/bin/python benchmarks/autograd.py [--number N] [--repeat R]

Targets: both cases <= 5x PyTorch.
- ``a + b``: one add of two float32 tensors that require grad (records a node)
- ``chain200 fwd+bwd``: a 200-op elementwise chain (mul/add/sin/...) then backward
"""

from __future__ import annotations

import argparse
import timeit

from _results import Results, add_json_option

import coretorch as ct

TARGET = 5.0


def per_call_us(stmt, number: int, repeat: int) -> float:
    """Best-of-`repeat` time of one call in microseconds."""
    stmt()
    return min(timeit.repeat(stmt, number=number, repeat=repeat)) / number * 1e6


def cases(lib):
    """The benchmarked calls, built with `lib` (coretorch or torch; same API)."""
    a = lib.ones(4, requires_grad=True)
    b = lib.ones(4, requires_grad=True)
    w = lib.full((4,), 0.999, requires_grad=True)
    g = lib.ones(4)

    def add():
        return a + b

    def chain():
        y = a
        for i in range(50):  # 4 ops per step: 200 ops
            y = y * w
            y = y + b
            y = y.sin()
            y = y - 0.5
        y.backward(g)

    return {"a + b": add, "chain200 fwd+bwd": chain}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--number", type=int, default=2000, help="calls per timing (a + b)")
    parser.add_argument("--repeat", type=int, default=5, help="timings (the best is kept)")
    add_json_option(parser)
    args = parser.parse_args()
    numbers = {"a + b": args.number, "chain200 fwd+bwd": max(args.number // 100, 5)}
    ours = {k: per_call_us(f, numbers[k], args.repeat) for k, f in cases(ct).items()}
    try:
        import torch

        torch.set_num_threads(1)
        theirs = {k: per_call_us(f, numbers[k], args.repeat) for k, f in cases(torch).items()}
        results = Results("autograd.py", f"torch {torch.__version__} (1 thread)")
    except ImportError:
        theirs = None
        results = Results("autograd.py", "torch (not installed)")
    print(f"{'case':<20}{'coretorch us':>14}{'torch us':>12}{'ratio':>8}{'target':>8}")
    ok = True
    for k, t in ours.items():
        if theirs is None:
            print(f"{k:<20}{t:>14.2f}{'-':>12}{'-':>8}{TARGET:>7.1f}x")
            continue
        r = t / theirs[k]
        results.add(k, t * 1e-6, theirs[k] * 1e-6, TARGET)
        ok = ok and r <= TARGET
        print(f"{k:<20}{t:>14.2f}{theirs[k]:>12.2f}{r:>7.2f}x{TARGET:>7.1f}x")
    results.write(args.json)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
