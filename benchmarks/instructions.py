"""Instructions per call of small ops, counted with valgrind's callgrind: stable where timings
are noisy (a shared machine). The count is the difference between two runs that repeat the call
N and 2N times, divided by N, so start-up and first-call costs cancel.

    .venv/bin/python benchmarks/instructions.py [--n 2000] [--torch]

Needs `valgrind` on PATH. PYTHONHASHSEED=0 keeps dict layouts, and so the counts, repeatable.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

CASES = {
    "a + b (4 floats)": ("a = ct.ones(4); b = ct.ones(4)", "a + b"),
    "a + b, requires_grad": ("a = ct.ones(4, requires_grad=True); b = ct.ones(4)", "a + b"),
    "a - b": ("a = ct.ones(4); b = ct.ones(4)", "a - b"),
    "relu": ("a = ct.ones(4)", "a.relu()"),
    "meta a + b": ("a = ct.ones(4, device='meta'); b = ct.ones(4, device='meta')", "a + b"),
    "MLP 32-64-10 SGD step": (
        "ct.manual_seed(0); net = ct.nn.Sequential(ct.nn.Linear(32, 64), ct.nn.ReLU(), "
        "ct.nn.Linear(64, 10)); opt = ct.optim.SGD(net.parameters(), lr=0.01, momentum=0.9); "
        "x = ct.randn(32, 32); y = ct.randint(0, 10, (32,)); "
        "loss_fn = ct.nn.CrossEntropyLoss()\n"
        "def step():\n    opt.zero_grad(); loss_fn(net(x), y).backward(); opt.step()",
        "step()"),
}

_PROGRAM = """
import {lib} as ct
{setup}
for _ in range(3):
    {stmt}
for _ in range({n}):
    {stmt}
"""


def _instructions(lib: str, setup: str, stmt: str, n: int) -> int:
    with tempfile.TemporaryDirectory() as d:
        prog = os.path.join(d, "prog.py")
        with open(prog, "w") as f:
            f.write(_PROGRAM.format(lib=lib, setup=setup, stmt=stmt, n=n))
        out = os.path.join(d, "cg.out")
        env = dict(os.environ, PYTHONHASHSEED="0", OMP_NUM_THREADS="1",
                   OPENBLAS_NUM_THREADS="1", NUMBA_NUM_THREADS="1")
        subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
                        sys.executable, prog], env=env, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        with open(out) as f:
            m = re.search(r"^summary:\s+(\d+)", f.read(), re.M)
        return int(m.group(1))


def per_call(lib: str, setup: str, stmt: str, n: int) -> float:
    """Instructions of one `stmt` (difference of N and 2N repetitions)."""
    return (_instructions(lib, setup, stmt, 2 * n) - _instructions(lib, setup, stmt, n)) / n


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=2000, help="repetitions (the count uses N and 2N)")
    p.add_argument("--torch", action="store_true", help="also count PyTorch's")
    p.add_argument("-k", default="", help="only cases whose name contains this")
    args = p.parse_args()
    if shutil.which("valgrind") is None:
        print("valgrind is not installed: nothing to count")
        return 1
    for name, (setup, stmt) in CASES.items():
        if args.k not in name:
            continue
        n = args.n if "step" not in name else max(args.n // 20, 50)
        ours = per_call("coretorch", setup, stmt, n)
        line = f"{name:<28} coretorch {ours / 1e3:9.1f}k instructions"
        if args.torch and "meta" not in name:
            theirs = per_call("torch", setup, stmt, n)
            line += f"   torch {theirs / 1e3:9.1f}k   ratio {ours / theirs:5.2f}"
        print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
