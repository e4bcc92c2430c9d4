"""Per-op dispatch overhead on the meta device: coretorch beside PyTorch's meta device.

Meta tensors have no data, so the time of `a + b` or `A @ B` on meta is the framework's own
per-op cost: argument parsing, dispatch, the shape/dtype rule and allocating the output.

    .venv/bin/python benchmarks/dispatch.py [--number N] [--repeat R]

Targets: coretorch <= 1.0x PyTorch's time for add and <= 2.0x for matmul.
"""

from __future__ import annotations

import argparse
import timeit

from _results import Results, add_json_option

import coretorch as ct

TARGETS = {"a + b": 1.0, "A @ B": 2.0, "bA @ B": 2.0}


def per_call_us(stmt, number: int, repeat: int) -> float:
    """Best-of-`repeat` time of one call in microseconds (min filters out scheduler noise)."""
    stmt()  # warm caches (kernel lookup, first allocation)
    return min(timeit.repeat(stmt, number=number, repeat=repeat)) / number * 1e6


def cases(lib):
    """The benchmarked calls, built with `lib` (coretorch or torch; same API)."""
    a = lib.empty(64, 64, device="meta")
    b = lib.empty(64, 64, device="meta")
    A = lib.empty(64, 128, device="meta")
    bA = lib.empty(32, 64, 128, device="meta")  # batched activations times a weight matrix
    B = lib.empty(128, 16, device="meta")
    return {"a + b": lambda: a + b, "A @ B": lambda: A @ B, "bA @ B": lambda: bA @ B}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--number", type=int, default=5000, help="calls per timing")
    parser.add_argument("--repeat", type=int, default=5, help="timings (the best is kept)")
    add_json_option(parser)
    args = parser.parse_args()
    try:
        import torch
    except ImportError:
        torch = None
    ours = {k: per_call_us(f, args.number, args.repeat) for k, f in cases(ct).items()}
    theirs = (
        {k: per_call_us(f, args.number, args.repeat) for k, f in cases(torch).items()}
        if torch is not None
        else {}
    )
    peer = f"torch {torch.__version__} meta" if torch is not None else "torch (not installed)"
    results = Results("dispatch.py", peer)
    print(f"{'op (meta)':<8} {'coretorch':>12} {peer:>26} {'ratio':>7} {'target':>7}")
    for name, us in ours.items():
        if name in theirs:
            ratio = us / theirs[name]
            results.add(name, us * 1e-6, theirs[name] * 1e-6, TARGETS[name])
            verdict = "ok" if ratio <= TARGETS[name] else "MISSED"
            print(
                f"{name:<8} {us:>9.2f} µs {theirs[name]:>23.2f} µs {ratio:>6.2f}x "
                f"{'<= %.1fx' % TARGETS[name]:>7} {verdict}"
            )
        else:
            print(f"{name:<8} {us:>9.2f} µs {'-':>26}")
    results.write(args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
