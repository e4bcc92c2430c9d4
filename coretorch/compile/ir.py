"""The captured program: the list of backend kernel calls one step made, and what replay needs.

A `Step` is one call ``fn(*args)``. Its `args` are the objects the kernel received while the step
ran eagerly: tensors are the captured buffers themselves (a replay reads and writes the same
storages), scalars are Python numbers, generators and lists are as given. Nothing is resolved at
replay: no dispatch, no meta rule, no allocation.

Two calling conventions (`Step.out_first`):

- ``True`` (a structured kernel: functional, in-place or ``out=``): ``args[0]`` is the tensor (or
  tuple of tensors) written; ``args[1:]`` is the op's argument record in schema order followed by
  the op's precomputed values (``declare(precomputed=...)``);
- ``False`` (a kernel that writes some of its list arguments, ``_fused_sgd_``): ``args`` is the
  record; the written arguments are the schema's ``!`` ones.

A pass (`coretorch.compile.passes`) may replace steps with others of its own (a fused kernel):
any callable with any arguments, as long as `reads`/`writes` say which tensors it touches.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ..tensor.tensor import Tensor

if TYPE_CHECKING:
    from .recorder import Site

__all__ = ["Program", "Step"]


def _tensors(x) -> list[Tensor]:
    if isinstance(x, Tensor):
        return [x]
    if isinstance(x, (tuple, list)):
        return [t for t in x if isinstance(t, Tensor)]
    return []


class Step:
    """One recorded kernel call (see the module docstring).

    fn: what replay calls, ``fn(*args)``.
    args: its arguments (tensors are captured buffers).
    op: the operator's qualified name (``"aten::addmm"``); a pass's own steps name themselves
        (``"fused::add_mul"``). The profiler shows it as the step's slice.
    out_first: the calling convention (module docstring).
    site: the user's source line that issued the op: ``str(site)`` is
        ``"train.py:12: loss = model(x)"`` (a `recorder.Site`, read from the file when shown).
    written: the tensors the call writes (computed at capture from the convention and schema).
    """

    __slots__ = ("args", "fn", "op", "out_first", "site", "written")

    def __init__(
        self,
        fn: Callable,
        args: tuple,
        op: str,
        out_first: bool,
        site: str | Site,
        written: tuple[Tensor, ...],
    ):
        self.fn, self.args, self.op, self.out_first = fn, args, op, out_first
        self.site, self.written = site, written

    @property
    def reads(self) -> list[Tensor]:
        """Every tensor argument (lists flattened) that is not only written: for an out-first
        call, everything after ``args[0]``."""
        rest = self.args[1:] if self.out_first else self.args
        return [t for a in rest for t in _tensors(a)]

    @property
    def record(self) -> tuple:
        """The op's argument record (what the profiler shows as the op's inputs)."""
        return self.args[1:] if self.out_first else self.args

    def __repr__(self) -> str:
        return f"<Step {self.op} at {self.site}>"


class Program:
    """A captured step, ready to replay.

    steps: the kernel calls, in order.
    inputs: the private input buffers (one per tensor argument of the compiled function, in
        the order the arguments are flattened); a replay copies the new arguments in first.
    outputs: the tensors of the function's result, as captured (replay returns fresh copies
        of those made by the steps).
    externals: tensors that existed before the step and that steps read or write (parameters,
        buffers, optimizer state, gradients): kept by reference, guarded by storage identity.
    version_bumps: (vc, n) for the version counter (``_vc``) of each external or input tensor the
        step wrote: replay adds n to it, as the eager step's in-place writes did.
    arenas: the storages the memory plan put the intermediates in (`memory_plan`).
    """

    __slots__ = ("arenas", "externals", "inputs", "notes", "outputs", "steps", "version_bumps")

    def __init__(
        self,
        steps: list[Step],
        inputs: list[Tensor],
        outputs: list[Tensor],
        externals: list[Tensor],
        version_bumps: list[tuple[list[int], int]],
    ):
        self.steps, self.inputs, self.outputs = steps, inputs, outputs
        self.externals, self.version_bumps = externals, version_bumps
        self.notes: list[str] = []  # what passes did, for `explain`
        self.arenas: list = []

    def escaping(self) -> set[int]:
        """ids of the storages that must hold their values after a replay (inputs, externals,
        outputs): a pass may drop a write only to a storage not in this set whose every
        reader it also rewrote."""
        return {id(t._storage) for t in (*self.inputs, *self.outputs, *self.externals)}

    def calls(self) -> list[tuple[Callable, tuple]]:
        """``(fn, args)`` per step: what the replay loop runs."""
        return [(s.fn, s.args) for s in self.steps]

    def __len__(self) -> int:
        return len(self.steps)

    def describe(self) -> list[str]:
        """One line per step: its op and the user's line."""
        return [f"{i:3d}  {s.op:<32s} {s.site}" for i, s in enumerate(self.steps)]
