"""Elementwise fusion: a 100-link chain as ONE fused cpu kernel against the 100 eager ops
(coretorch, and PyTorch eager when installed), on 4 floats (per-op overhead) and on 1M floats
(memory traffic), in one run with the cases interleaved.

    .venv/bin/python benchmarks/fusion.py [--repeat R] [--links N]

The "mixed" chain cycles ``t * 0.97``, ``t + y``, ``tanh(t)``, ``t - 0.01``, ``maximum(t, y)``
(at 1M floats its 20 tanh per element bound the fused loop); the "arithmetic" one leaves tanh
out (memory-bound: eager reads and writes 100 temporaries).
"fused" calls the kernel with its tensors (``kernel(outs, ins)``, views and strides prepared on
each call); "fused bound" replays a call prepared once (`FusedKernel.bind`), as a captured step
does. The first call's compile time (or disk-cache load) is printed too. Last, compiled
training steps (benchmarks/compile.py's MLP and chain cases) with ``fuse=False`` and
``fuse=True``.
"""

from __future__ import annotations

import argparse
import time

from _timing import alternating_medians

import coretorch as ct
from coretorch.compile.fusion import ChainBuilder, compile_chain

CYCLES = {
    "mixed": ("mul", "add", "tanh", "sub", "maximum"),
    "arithmetic": ("mul", "add", "sub", "maximum"),
}


def eager_chain(lib, x, y, links: int, cycle: tuple):
    """The chain run op by op with `lib` (coretorch or torch: the same API)."""
    t = x
    for i in range(links):
        op = cycle[i % len(cycle)]
        if op == "mul":
            t = t * 0.97
        elif op == "add":
            t = t + y
        elif op == "tanh":
            t = lib.tanh(t)
        elif op == "sub":
            t = t - 0.01
        else:
            t = lib.maximum(t, y)
    return t


def fused_chain(n: int, links: int, cycle: tuple):
    """The chain as one fused kernel over `n` float32 elements."""
    b = ChainBuilder()
    x, y = b.input((n,), ct.float32), b.input((n,), ct.float32)
    t = x
    for i in range(links):
        op = cycle[i % len(cycle)]
        args = {"mul": (t, 0.97), "add": (t, y), "tanh": (t,), "sub": (t, 0.01), "maximum": (t, y)}[
            op
        ]
        t = b.call(op, *args)
    start = time.perf_counter()
    kernel = compile_chain(b.chain([t]), "cpu")
    return kernel, start


def run_case(n: int, links: int, repeat: int, cycle_name: str) -> None:
    cycle = CYCLES[cycle_name]
    g = ct.Generator().manual_seed(0)
    x, y = ct.randn(n, generator=g), ct.randn(n, generator=g)
    kernel, start = fused_chain(n, links, cycle)
    out = ct.empty(n)
    kernel([out], [x, y])
    first = time.perf_counter() - start
    bound = kernel.bind([out], [x, y])
    expected = eager_chain(ct, x, y, links, cycle)
    err = (out - expected).abs().max().item()
    t_eager, t_fused = alternating_medians(
        lambda: eager_chain(ct, x, y, links, cycle), lambda: kernel([out], [x, y]), repeat
    )
    _, t_bound = alternating_medians(lambda: eager_chain(ct, x, y, links, cycle), bound, repeat)
    print(
        f"{links}-link {cycle_name} chain on {n} float32: first fused call {first * 1e3:.0f} ms "
        f"(compile or disk-cache load); max |fused - eager| = {err:.2g}"
    )
    print(f"  coretorch eager {t_eager * 1e6:10.1f} us")
    print(f"  fused           {t_fused * 1e6:10.1f} us  ({t_eager / t_fused:.1f}x faster)")
    print(f"  fused bound     {t_bound * 1e6:10.1f} us  ({t_eager / t_bound:.1f}x faster)")
    try:
        import torch
    except ImportError:
        return
    tx, ty = torch.from_numpy(x.numpy().copy()), torch.from_numpy(y.numpy().copy())
    t_torch, t_bound2 = alternating_medians(
        lambda: eager_chain(torch, tx, ty, links, cycle), bound, repeat
    )
    print(
        f"  PyTorch eager   {t_torch * 1e6:10.1f} us  (fused bound = "
        f"{t_bound2 / t_torch:.3f}x PyTorch eager)"
    )


def compiled_rows(repeat: int) -> None:
    """Compiled training steps (benchmarks/compile.py's cases) with and without the fusion
    pass, beside PyTorch eager: the replay's per-kernel cost is what fusion removes."""
    import compile as cases  # benchmarks/compile.py

    for name, make in (
        ("MLP 32-64-10 step, batch 32", cases.mlp),
        ("100-link chain on 4 floats, fwd+bwd", cases.chain),
    ):
        fns, labels = [], []
        for fuse in (False, True):
            step, args = make(ct)
            compiled = ct.compile(step, fuse=fuse)
            fns.append(lambda c=compiled, a=args: c(*a))
            labels.append(f"fuse={fuse}")
        if cases.torch is not None:
            tstep, targs = make(cases.torch)
            fns.append(lambda s=tstep, a=targs: s(*a))
            labels.append("PyTorch eager")
        times = cases._interleaved(fns, repeat)
        ratios = (
            ""
            if cases.torch is None
            else "  ("
            + ", ".join(f"{lab} {t / times[-1]:.2f}x" for lab, t in zip(labels[:2], times[:2]))
            + " PyTorch eager)"
        )
        print(
            f"{name}: "
            + ", ".join(f"{lab} {t * 1e6:.0f} us" for lab, t in zip(labels, times))
            + ratios
        )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=30)
    p.add_argument("--links", type=int, default=100)
    a = p.parse_args()
    print("timings on a shared machine are noisy: ratios come from interleaved runs")
    run_case(4, a.links, a.repeat, "mixed")
    for cycle in CYCLES:
        run_case(1 << 20, a.links, max(3, a.repeat // 10), cycle)
    compiled_rows(a.repeat)


if __name__ == "__main__":
    main()
