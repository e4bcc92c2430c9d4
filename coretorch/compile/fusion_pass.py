"""The fusion pass of `coretorch.compile` (option ``fuse=True``): in a captured `Program`, each
run of consecutive elementwise kernel calls of one output shape becomes ONE fused kernel
(`coretorch.compile.fusion`), which writes only the buffers someone else needs.

A step joins the run when its op has a scalar formula that lowers for its arguments, it writes
one tensor of the run's shape on a device whose backend fuses, and every buffer it reads that
the run wrote is read exactly as written (same offset, shape and strides; a view of it ends the
run). Inside the run values pass from step to step in registers. A buffer the run wrote is still
written when the caller keeps it (`Program.escaping`: inputs, outputs, parameters, gradients,
optimizer state) or any step outside the run reads or writes it (a tensor saved for backward is
read by a backward step): only its last value in the run is stored. Runs are taken in program
order, without reordering kernels (so random kernels keep their place in the generator stream).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..device import _registry as _device_registry
from ..ops.declare import REGISTRY
from ..ops.scalar_formulas import FORMULAS
from ..tensor.tensor import Tensor
from .fusion import Chain, FusionError, In, Step as ChainStep, Val, compile_chain, lower
from .ir import Program, Step
from .passes import register_pass

__all__ = ["MIN_RUN", "fuse_program"]

MIN_RUN = 2  # a single kernel gains nothing from fusing


def _decl_name(op: str) -> str | None:
    """The declaration of recorded op ``aten::add_`` (``add``), if it has a scalar formula."""
    name = op.split("::")[-1]
    if name not in REGISTRY and name.endswith("_"):
        name = name[:-1]
    return name if name in FORMULAS else None


def _geometry(t: Tensor) -> tuple:
    return (id(t._storage), t._offset, t._shape, t._stride)


class _Candidate:
    """A recorded step that may join a run: its formula name, output, operands."""

    __slots__ = ("args", "index", "name", "out", "step")

    def __init__(self, index: int, step: Step, name: str):
        self.index, self.step, self.name = index, step, name
        self.out = step.args[0]
        self.args = step.args[1:]


def _candidate(index: int, step: Step) -> _Candidate | None:
    """`step` as a run member, or None when it cannot be fused."""
    if not step.out_first or not isinstance(step.args[0], Tensor):
        return None
    name = _decl_name(step.op)
    if name is None:
        return None
    out = step.args[0]
    entry = _device_registry.get(out._device.type)
    if entry is None or entry.extras.get("fuse") is None:
        return None
    dtypes: list[Any] = []
    refs: list[Any] = []
    for a in step.args[1:]:
        if isinstance(a, Tensor):
            if a._device != out._device:
                return None
            refs.append(In(len(dtypes)))
            dtypes.append(a._dtype)
        elif isinstance(a, (list, tuple)):
            return None
        else:
            refs.append(a)
    try:
        lower(Chain(tuple(dtypes), (ChainStep(name, tuple(refs), out._dtype),), (0,)))
    except FusionError:
        return None
    return _Candidate(index, step, name)


class _Run:
    """Consecutive candidates of one output shape whose in-run reads see what the run wrote."""

    def __init__(self, first: _Candidate):
        self.members: list[_Candidate] = []
        self.shape = first.out._shape
        self.written: dict[int, tuple] = {}  # storage id -> geometry of the run's last write
        self.add(first)

    def accepts(self, c: _Candidate) -> bool:
        if c.out._shape != self.shape or c.out._device != self.members[0].out._device:
            return False
        for t in (c.out, *[a for a in c.args if isinstance(a, Tensor)]):
            g = self.written.get(id(t._storage))
            if g is not None and g != _geometry(t):
                return False  # a view of a value the run computed
        return True

    def add(self, c: _Candidate) -> None:
        self.members.append(c)
        self.written[id(c.out._storage)] = _geometry(c.out)


def _runs(program: Program) -> list[_Run]:
    runs, current = [], None
    for i, step in enumerate(program.steps):
        c = _candidate(i, step)
        if c is not None and current is not None and current.accepts(c):
            current.add(c)
            continue
        if current is not None and len(current.members) >= MIN_RUN:
            runs.append(current)
        current = _Run(c) if c is not None else None
    if current is not None and len(current.members) >= MIN_RUN:
        runs.append(current)
    return runs


def _touched_outside(program: Program, run: _Run) -> set[int]:
    """Storage ids that steps outside `run` read or write."""
    lo, hi = run.members[0].index, run.members[-1].index
    seen: set[int] = set()
    for i, s in enumerate(program.steps):
        if lo <= i <= hi:
            continue
        for t in (*s.reads, *s.written):
            seen.add(id(t._storage))
    return seen


class FusedCall:
    """The replay step of a fused run: the kernel, bound to the run's buffers on its first call
    (after the memory plan has placed them). Called as ``fn(outs, *ins)``, the step's args."""

    __slots__ = ("kernel", "run")

    def __init__(self, kernel):
        self.kernel = kernel
        self.run: Callable[[], None] | None = None

    def __call__(self, outs, *ins) -> None:
        run = self.run
        if run is None:
            run = self.run = self.kernel.bind(outs, ins)
        run()

    def __repr__(self) -> str:
        return repr(self.kernel)


def _fuse(program: Program, run: _Run, keep: set) -> tuple[Step, str]:
    """The fused step replacing `run`, and the note saying so."""
    ins: list[Tensor] = []
    in_index: dict[tuple, int] = {}
    produced: dict[tuple, int] = {}  # geometry -> index of the chain step that wrote it
    last: dict[int, int] = {}  # storage id -> chain step of its last write
    steps = []
    for j, c in enumerate(run.members):
        refs = []
        for a in c.args:
            if not isinstance(a, Tensor):
                refs.append(a)
                continue
            g = _geometry(a)
            if g in produced:
                refs.append(Val(produced[g]))
                continue
            if g not in in_index:
                in_index[g] = len(ins)
                ins.append(a)
            refs.append(In(in_index[g]))
        steps.append(ChainStep(c.name, tuple(refs), c.out._dtype))
        produced[_geometry(c.out)] = j
        last[id(c.out._storage)] = j
    stored = sorted(j for sid, j in last.items() if sid in keep)
    outs = [run.members[j].out for j in stored]
    chain = Chain(tuple(t._dtype for t in ins), tuple(steps), tuple(stored))
    kernel = compile_chain(chain, outs[0]._device.type)
    ops = "+".join(c.name for c in run.members)
    first = run.members[0].step
    step = Step(
        FusedCall(kernel),
        (tuple(outs), *ins),
        f"fused::{ops}",
        True,
        first.site,
        tuple(outs),
    )
    note = (
        f"fused {len(run.members)} kernels ({ops}) into one, writing {len(outs)} of "
        f"{len(last)} buffers; at {first.site}"
    )
    return step, note


def fuse_program(program: Program) -> Program:
    """Replace each fusable run of `program` with one fused step (see the module docstring)."""
    runs = _runs(program)
    if not runs:
        return program
    escaping = program.escaping()
    replaced: dict[int, tuple] = {}
    for run in runs:
        keep = escaping | _touched_outside(program, run)
        if not any(id(c.out._storage) in keep for c in run.members):
            continue  # nothing of it is used: leave it as recorded
        try:
            replaced[run.members[0].index] = (_fuse(program, run, keep), len(run.members))
        except FusionError as e:  # a backend refusing the chain keeps the recorded kernels
            program.notes.append(f"not fused: {e}")
    new_steps, i = [], 0
    while i < len(program.steps):
        if i in replaced:
            (step, note), n = replaced[i]
            new_steps.append(step)
            program.notes.append(note)
            i += n
        else:
            new_steps.append(program.steps[i])
            i += 1
    program.steps = new_steps
    return program


register_pass("fuse_elementwise", "fuse", fuse_program)
