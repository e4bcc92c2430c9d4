"""Replay: run a captured `Program` on new inputs.

Copy the new inputs into the program's input buffers, call each step's kernel, add the version
bumps the eager step made, copy written input buffers back to the caller's tensors, and return
fresh copies of the outputs. Copies use the backend's own ``_copy_`` kernel, resolved once per
device. Under an observer (the profiler) the replay is one ``compiled::<name>`` region with one
child region per step.
"""

from __future__ import annotations

from collections.abc import Callable
from time import perf_counter_ns as _now

from .. import record_function as _rf
from ..backend_kit.registry import quiet_fp
from ..dispatch.keys import BACKEND_MASK
from ..ops.declare import REGISTRY, alloc
from ..tensor.tensor import Tensor
from .ir import Program

__all__ = ["Replayer", "copy_kernel"]

_copy_kernels: dict[int, Callable] = {}


def _run_calls(calls: list) -> None:
    for fn, args in calls:
        fn(*args)


# numpy's floating-point warnings off once around the whole replay (PyTorch never warns)
_run_quietly = quiet_fp("compiled replay", _run_calls)


def copy_kernel(t: Tensor) -> Callable:
    """The backend kernel of ``_copy_`` for `t`'s device, ``k(dst, dst, src, False)``."""
    bits = t._keys & BACKEND_MASK
    k = _copy_kernels.get(bits)
    if k is None:
        kernel = REGISTRY["_copy_"].op._resolve(bits)
        k = _copy_kernels[bits] = kernel.out_kernel  # type: ignore[attr-defined]  # a fn attribute
    return k


class Replayer:
    """A program bound for fast replay: the step list pre-split into kernels and arguments."""

    def __init__(self, program: Program, name: str, writebacks: list[int]):
        self.program = program
        self.name = f"compiled::{name}"
        # kernels that only silence numpy's floating-point warnings run bare inside one
        # errstate for the whole replay (saves a context-variable set and reset per kernel)
        self.calls = [(getattr(fn, "quiet_fp_inner", fn), args) for fn, args in program.calls()]
        self.inputs = [(slot, copy_kernel(slot)) for slot in program.inputs]
        self.bumps = program.version_bumps
        self.writebacks = writebacks  # indices of inputs the step writes

    def run(self, tensors: list[Tensor]) -> None:
        """Run the program on `tensors` (the caller's tensor arguments, flattened)."""
        for (slot, k), t in zip(self.inputs, tensors):
            k(slot, slot, t, False)
        if _rf.state.active:
            self._run_observed()
        else:
            _run_quietly(self.calls)
        for vc, n in self.bumps:
            vc[0] += n
        for i in self.writebacks:
            slot, k = self.inputs[i]
            k(tensors[i], tensors[i], slot, False)
            tensors[i]._vc[0] += 1

    def _run_observed(self) -> None:
        F = _rf.RecordScope.FUNCTION
        with _rf.RecordFunction(self.name, _rf.RecordScope.USER_SCOPE):
            for s in self.program.steps:
                r = _rf.RecordFunction(s.op, F, s.record)
                if not r._cbs:
                    s.fn(*s.args)
                    continue
                _rf._begin(r)
                try:
                    t = _now()
                    s.fn(*s.args)
                    r.kernel_ns = _now() - t  # the whole step is its kernel: no dispatch
                    r.outputs = s.args[0] if s.out_first else None
                finally:
                    _rf._end(r)


def fresh_copy(t: Tensor) -> Tensor:
    """A new tensor (own storage, no autograd history) with `t`'s values."""
    out = alloc(t._shape, t._dtype, t._device)
    copy_kernel(t)(out, out, t, False)
    return out
