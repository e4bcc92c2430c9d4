"""Instructions per call of small ops, counted with valgrind's callgrind: stable where timings
are noisy (a shared machine). The count is the difference between two runs that repeat the call
N and 2N times, divided by N, so start-up and first-call costs cancel.

    .venv/bin/python benchmarks/instructions.py [--n 2000] [--torch]
    .venv/bin/python benchmarks/instructions.py --layers     # what each layer of `a + b` costs

`--layers` counts each layer of one op call on its own, in a single valgrind run: the program
calls ``os.getppid()`` between phases and callgrind dumps its counters there
(``--dump-before=getppid``); a phase of N empty loop iterations is subtracted.

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

_MLP = (
    "ct.manual_seed(0); net = ct.nn.Sequential(ct.nn.Linear(32, 64), ct.nn.ReLU(), "
    "ct.nn.Linear(64, 10)); opt = ct.optim.SGD(net.parameters(), lr=0.01, momentum=0.9); "
    "x = ct.randn(32, 32); y = ct.randint(0, 10, (32,)); "
    "loss_fn = ct.nn.CrossEntropyLoss()\n"
)
_MLP_STEP = "opt.zero_grad(); loss_fn(net(x), y).backward(); opt.step()"

CASES = {
    "a + b (4 floats)": ("a = ct.ones(4); b = ct.ones(4)", "a + b"),
    "a + b, requires_grad": ("a = ct.ones(4, requires_grad=True); b = ct.ones(4)", "a + b"),
    "a - b": ("a = ct.ones(4); b = ct.ones(4)", "a - b"),
    "relu": ("a = ct.ones(4)", "a.relu()"),
    "meta a + b": ("a = ct.ones(4, device='meta'); b = ct.ones(4, device='meta')", "a + b"),
    "MLP 32-64-10 SGD step": (_MLP + "def step():\n    " + _MLP_STEP, "step()"),
    "MLP 32-64-10 SGD step, compiled (replay)": (
        _MLP + "@ct.compile\ndef step(x, y):\n    " + _MLP_STEP + "\nstep(x, y); step(x, y)",
        "step(x, y)",
    ),
}
# cases compared with another case's PyTorch count (torch.compile's first call takes seconds,
# too long under valgrind: a replay is compared with PyTorch eager)
_TORCH_AS = {"MLP 32-64-10 SGD step, compiled (replay)": "MLP 32-64-10 SGD step"}

# `a + b` on 4 floats, one layer at a time (each statement includes the layers it calls; the
# table's own-cost column subtracts them)
_LAYER_SETUP = (
    "from coretorch.ops.declare import REGISTRY, alloc\n"
    "from coretorch.record_function import add_global_callback, remove_callback\n"
    "from coretorch_cpu_numba.numpy_view import as_numpy\n"
    "a = ct.ones(4); b = ct.ones(4); ag = ct.ones(4, requires_grad=True)\n"
    "_d = REGISTRY['add']; meta = _d.meta; spec = meta(a, b, 1)\n"
    "a + b; adapter = _d.op._cache[a._keys]; o = alloc(*spec)\n"
    "kern = getattr(adapter.out_kernel, 'fresh_output_kernel', adapter.out_kernel)\n"
    "def _start(rf):\n    pass\n"
    "def _end(rf, state):\n    pass\n"
    "def observed(op=True):\n"
    "    h = add_global_callback(_start, _end)\n"
    "    if op:\n"
    "        a + b\n"
    "    remove_callback(h)\n"
)
LAYERS = [  # (label, statement)
    ("a + b", "a + b"),
    ("structured adapter (meta, alloc, kernel)", "adapter(a, b, 1)"),
    ("meta rule", "meta(a, b, 1)"),
    ("alloc (and free) of the output", "alloc(*spec)"),
    ("alloc + numpy view of it", "as_numpy(alloc(*spec))"),
    ("kernel into a fresh output", "kern(alloc(*spec), a, b, 1)"),
    ("kernel into a reused output", "kern(o, a, b, 1)"),
    ("a + b, requires_grad", "ag + b"),
    ("a + b, one no-op observer (incl. add/remove)", "observed()"),
    ("adding and removing that observer", "observed(False)"),
]

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
        subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", sys.executable, prog],
            env=_env(),
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        with open(out) as f:
            m = re.search(r"^summary:\s+(\d+)", f.read(), re.M)
        return int(m.group(1))


def phase_counts(lib: str, setup: str, stmts: list[str], n: int) -> list[float]:
    """Instructions per call of each statement, all counted in one valgrind run."""
    body = [f"import os\nimport {lib} as ct\n{setup}"]
    for i, stmt in enumerate(["pass", *stmts]):
        body.append(f"def _p{i}(n):\n    for _ in range(n):\n        {stmt}\n_p{i}(3)")
    for i in range(len(stmts) + 1):
        body.append(f"os.getppid()\n_p{i}({n})")
    body.append("os.getppid()")
    with tempfile.TemporaryDirectory() as d:
        prog = os.path.join(d, "prog.py")
        with open(prog, "w") as f:
            f.write("\n".join(body) + "\n")
        out = os.path.join(d, "cg.out")
        subprocess.run(
            [
                "valgrind",
                "--tool=callgrind",
                f"--callgrind-out-file={out}",
                "--dump-before=getppid",
                sys.executable,
                prog,
            ],
            env=_env(),
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        counts = []
        for i in range(2, len(stmts) + 3):  # dump 1 is the start-up; then one per phase
            with open(f"{out}.{i}") as f:
                counts.append(int(re.search(r"^summary:\s+(\d+)", f.read(), re.M).group(1)))
    empty = counts[0]
    return [(c - empty) / n for c in counts[1:]]


def _env() -> dict:
    return dict(
        os.environ,
        PYTHONHASHSEED="0",
        OMP_NUM_THREADS="1",
        OPENBLAS_NUM_THREADS="1",
        NUMBA_NUM_THREADS="1",
    )


def layers(n: int, torch: bool) -> None:
    """Print what each layer of `a + b` costs (see LAYERS), and PyTorch's whole calls."""
    counts = phase_counts("coretorch", _LAYER_SETUP, [s for _, s in LAYERS], n)
    for (label, stmt), c in zip(LAYERS, counts):
        print(f"{label:<46} {stmt:<28} {c / 1e3:8.1f}k", flush=True)
    if torch:
        setup = "a = ct.ones(4); b = ct.ones(4); ag = ct.ones(4, requires_grad=True)"
        stmts = ["a + b", "ag + b"]
        for stmt, c in zip(stmts, phase_counts("torch", setup, stmts, n)):
            print(f"{'torch':<46} {stmt:<28} {c / 1e3:8.1f}k", flush=True)


def per_call(lib: str, setup: str, stmt: str, n: int) -> float:
    """Instructions of one `stmt` (difference of N and 2N repetitions)."""
    return (_instructions(lib, setup, stmt, 2 * n) - _instructions(lib, setup, stmt, n)) / n


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=2000, help="repetitions (the count uses N and 2N)")
    p.add_argument("--torch", action="store_true", help="also count PyTorch's")
    p.add_argument("-k", default="", help="only cases whose name contains this")
    p.add_argument("--layers", action="store_true", help="count each layer of `a + b`")
    args = p.parse_args()
    if shutil.which("valgrind") is None:
        print("valgrind is not installed: nothing to count")
        return 1
    if args.layers:
        layers(args.n, args.torch)
        return 0
    torch_counts: dict[str, float] = {}
    for name, (setup, stmt) in CASES.items():
        if args.k not in name:
            continue
        n = args.n if "step" not in name else max(args.n // 20, 50)
        ours = per_call("coretorch", setup, stmt, n)
        line = f"{name:<28} coretorch {ours / 1e3:9.1f}k instructions"
        if args.torch and "meta" not in name:
            if name in _TORCH_AS:
                other = _TORCH_AS[name]
                theirs = torch_counts.get(other) or per_call("torch", *CASES[other], n)
            else:
                theirs = torch_counts[name] = per_call("torch", setup, stmt, n)
            line += f"   torch {theirs / 1e3:9.1f}k   ratio {ours / theirs:5.2f}"
        print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
