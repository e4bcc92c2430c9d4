"""Slow cliffs of the pointwise ops: every unary and binary pointwise op on contiguous,
transposed, broadcast and negative-valued inputs, timed against its contiguous positive twin.

    .venv/bin/python benchmarks/cliffs.py [--size N] [--repeat R] [--only NAME ...]

For each op: the time on N x N float32 inputs with positive values (the twin), then on the same
values read through transposed views (every operand, as ``a.t() + b.t()``), with the first
operand a broadcast row, and negated.
Prints each op's worst ratio (case time / twin time) and the overall worst; the goal is that
no case takes more than 2x its twin. Integer-only ops (bitwise, gcd, ...) run on int64.
Not a test: the machine's load moves these numbers.
"""

from __future__ import annotations

import argparse
import timeit

import numpy as np
from rich.console import Console
from rich.table import Table

import coretorch as ct
from coretorch.ops.declare import REGISTRY

LIMIT = 2.0
# inputs no program passes to these ops, or ops whose time depends on the value by definition
_SKIP = {
    "_unary_special",
    "_binary_special",
    "positive",
    "frexp",
    "polygamma",
    "mvlgamma",
    "float_power_",
    "rsub",
}


def _ops(family: str, arity: int) -> list[str]:
    """Ops of `family` whose schema takes exactly `arity` tensors and nothing else required."""
    names = []
    for name, d in sorted(REGISTRY.items()):
        if d.family != family or name in _SKIP or d.inplace_only:
            continue
        required = [a for a in d.schema.arguments if a.required]
        if len(required) == arity and all("Tensor" in a.type.base for a in required):
            names.append(name)
    return names


def _values(n: int, dtype, seed: int) -> np.ndarray:
    """Positive values in (0.1, 0.9) (inside every float op's domain that admits them), or
    ints in [1, 100)."""
    rng = np.random.default_rng(seed)
    if dtype == np.int64:
        return rng.integers(1, 100, (n, n))
    return rng.uniform(0.1, 0.9, (n, n)).astype(dtype)


def _cases(v: np.ndarray, seed: int) -> dict:
    """The operand of each case for values `v` (n x n): the same values, differently laid out."""
    twin = ct.from_numpy(np.ascontiguousarray(v))
    return {
        "contiguous": twin,
        "transposed": ct.from_numpy(np.ascontiguousarray(v.T)).t(),
        "broadcast": ct.from_numpy(np.ascontiguousarray(v[:1])).expand(v.shape),
        "negative": ct.from_numpy(np.ascontiguousarray(-v)) if v.dtype.kind == "f" else None,
    }


def _interleaved(fns: dict, repeat: int) -> dict:
    """Seconds per call of each function: calls sized to about 2 ms per timing, the cases run
    in turns `repeat` times (a load spike then slows a case and its twin alike), best kept."""
    for fn in fns.values():
        fn()
    once = timeit.timeit(fns["contiguous"], number=1)
    number = max(1, int(2e-3 / max(once, 1e-7)))
    best = {case: float("inf") for case in fns}
    for _ in range(repeat):
        for case, fn in fns.items():
            best[case] = min(best[case], timeit.timeit(fn, number=number) / number)
    return best


def _measure(name: str, arity: int, n: int, repeat: int):
    """(dtype, {case: seconds}) for op `name`, or None when it runs on neither float32 nor
    int64."""
    fn = getattr(ct.ops.aten, name)
    for dtype in (np.float32, np.int64):
        a = _cases(_values(n, dtype, 0), 0)
        b = _cases(_values(n, dtype, 1), 1)
        try:
            fn(*([a["contiguous"], b["contiguous"]][:arity]))
        except (RuntimeError, TypeError, NotImplementedError):
            continue
        fns = {}
        for case in a:
            if a[case] is None:
                continue
            # binary: both operands transposed (a.t() + b.t()) or negated; a broadcast first
            # operand against a contiguous second one
            args = [a[case], b["contiguous" if case == "broadcast" else case]][:arity]
            fns[case] = (lambda args: lambda: fn(*args))(args)
        return dtype, _interleaved(fns, repeat)
    return None


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--size", type=int, default=1024, help="inputs are size x size")
    p.add_argument("--repeat", type=int, default=5, help="best of this many calls")
    p.add_argument("--only", nargs="*", help="only these ops")
    args = p.parse_args()
    ops = [(name, 1) for name in _ops("unary", 1)] + [(name, 2) for name in _ops("binary", 2)]
    if args.only:
        ops = [(n, k) for n, k in ops if n in args.only]
    table = Table(
        title=f"pointwise cliffs, {args.size}x{args.size} (time / contiguous positive twin)"
    )
    for col in ("op", "dtype", "twin", "transposed", "broadcast", "negative", "worst"):
        table.add_column(col, justify="left" if col == "op" else "right")
    worst = (0.0, "")
    for name, arity in ops:
        got = _measure(name, arity, args.size, args.repeat)
        if got is None:
            table.add_row(name, "-", "not run on float32 or int64", "", "", "", "")
            continue
        dtype, res = got
        twin = res["contiguous"]
        ratios = {c: t / twin for c, t in res.items() if c != "contiguous"}
        case, r = max(ratios.items(), key=lambda kv: kv[1])
        if r > worst[0]:
            worst = (r, f"{name} {case}")
        cells = [
            f"{ratios[c]:.2f}x" if c in ratios else "-"
            for c in ("transposed", "broadcast", "negative")
        ]
        mark = "[red]" if r > LIMIT else "[green]"
        table.add_row(
            name, np.dtype(dtype).name, f"{twin * 1e3:.2f} ms", *cells, f"{mark}{r:.2f}x[/]"
        )
    Console(width=120).print(table)
    print(f"worst: {worst[0]:.2f}x ({worst[1]}); limit {LIMIT:g}x")


if __name__ == "__main__":
    main()
