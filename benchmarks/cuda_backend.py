"""Ratio benchmarks of the cuda backend (CuPy) against PyTorch on the same GPU.

    python benchmarks/cuda_backend.py [--quick]

Times each op with the device synchronized around the timed loop (best of several repeats),
coretorch on ``device="cuda"`` beside ``torch`` on ``"cuda"`` when PyTorch has CUDA, and prints
the ratio (>1: coretorch is faster). Needs a real GPU: without one (or in emulation, where numpy
stands in for CuPy and timings mean nothing) it says so and exits 0. Not a test.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Callable


def best(fn: Callable[[], object], sync: Callable[[], None], number: int, repeat: int) -> float:
    """Seconds per call: the best of `repeat` synchronized runs of `number` calls."""
    fn()
    sync()
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        for _ in range(number):
            fn()
        sync()
        times.append((time.perf_counter() - t) / number)
    return min(times)


def cases(lib, make) -> dict[str, Callable[[], object]]:
    """The benchmarked calls for `lib` (coretorch or torch); `make(shape)` gives float32 random
    tensors of that library on its cuda device."""
    a, b = make((4096, 4096)), make((4096, 4096))
    v, w = make((1 << 24,)), make((1 << 24,))
    x, k = make((32, 64, 56, 56)), make((64, 64, 3, 3))
    s = make((4096, 1024))
    tiny = make((4,))
    f = lib.nn.functional
    return {
        "add 16M": lambda: v + w,
        "mul_ 16M (in place)": lambda: v.mul_(1.0),
        "addcmul_ 16M (fused)": lambda: v.addcmul_(w, w, value=1e-8),
        "sum 16M": lambda: v.sum(),
        "matmul 4096^2 (cuBLAS)": lambda: a @ b,
        "softmax 4096x1024": lambda: s.softmax(-1),
        "conv2d 32x64x56x56 k3": lambda: f.conv2d(x, k, padding=1),
        "add (per-op overhead, 4 elems)": lambda: tiny + 1,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer repeats (noisier)")
    args = ap.parse_args()
    rep = 3 if args.quick else 7

    import coretorch as ct

    if not ct.cuda.is_available() or ct.cuda.is_emulated():
        why = (
            "emulation is on (numpy stands in for CuPy)"
            if ct.cuda.is_available()
            else ct.cuda.unavailable_reason()
        )
        print(f"benchmarks/cuda.py: no real CUDA device, nothing to measure: {why}")
        return 0
    try:
        import torch

        has_torch = torch.cuda.is_available()
    except ImportError:
        torch, has_torch = None, False

    ct_cases = cases(ct, lambda shape: ct.rand(*shape, device="cuda"))
    t_cases = cases(torch, lambda shape: torch.rand(*shape, device="cuda")) if has_torch else {}
    print(
        f"device: {ct.cuda.get_device_name()}; PyTorch CUDA: "
        f"{'yes, ' + torch.__version__ if has_torch else 'not available'}"
    )
    print(f"{'op':34} {'coretorch':>12} {'torch':>12} {'ratio':>8}")
    for name, fn in ct_cases.items():
        number = 50 if "overhead" in name else 5
        tc = best(fn, ct.cuda.synchronize, number, rep)
        if has_torch:
            tt = best(t_cases[name], torch.cuda.synchronize, number, rep)
            print(f"{name:34} {tc * 1e3:10.3f}ms {tt * 1e3:10.3f}ms {tt / tc:7.2f}x")
        else:
            print(f"{name:34} {tc * 1e3:10.3f}ms {'-':>12} {'-':>8}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
