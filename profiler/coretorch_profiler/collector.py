"""Recording: the RecordFunction and memory-hook callbacks of one profiling window.

The callbacks stay lean: they append one raw tuple per region (and per allocation/free) and do
nothing else. Events, nesting, memory attribution, tables and traces are built later, from these
tuples, when someone asks.
"""
from __future__ import annotations

import threading
import time
import warnings
from typing import Any, Callable

from coretorch import record_function as _rf
from coretorch.device import device, device_types
from coretorch.dispatch.operator import get_operator
from coretorch.tensor.storage import add_memory_hook, remove_memory_hook

from ._frames import user_stack

RecordScope = _rf.RecordScope
inputs_meta, plain_shapes = _rf.inputs_meta, _rf.plain_shapes  # the layout lives in the core
_FUNCTION = RecordScope.FUNCTION
STACK_DEPTH = 16

# A raw record holds only ints, strings and None, so that the garbage collector stops tracking it
# the first time it looks. A record holding a tracked object (a device, a list, a tuple it has not
# looked at yet) gets promoted to the oldest generation instead, and records piling up there
# trigger full collections of the whole heap: about 100 ms every few hundred steps of a small
# model, measured. Input shapes and stacks are therefore interned, and devices kept by name.
# indices into a raw op tuple (INPUTS: an index into Collector.inputs, STACK into .stacks; -1 none)
NAME, SCOPE, START, END, TID, SEQ, FWD_TID, INPUTS, FLOPS, STACK = range(10)
# indices into a raw memory tuple (M_DEVICE: the device's name, as `str(device)` gives it)
M_TIME, M_TID, M_ADDR, M_BYTES, M_DEVICE, M_TOTAL, M_RESERVED = range(7)


_MISSING = object()
_flop_fns: dict[str, Callable | None] = {}
_flop_failed: set[str] = set()


def _flop_fn(name: str) -> Callable | None:
    fn = _flop_fns.get(name, _MISSING)
    if fn is _MISSING:
        try:
            decl = get_operator(name).decl
        except RuntimeError:
            decl = None
        fn = _flop_fns[name] = decl.flops if decl is not None else None
    return fn


def op_flops(rf) -> int:
    """FLOPs of a finished FUNCTION region from its op's declared formula (0 when none)."""
    fn = _flop_fn(rf.name)
    if fn is None or rf.outputs is None:
        return 0
    try:
        return int(fn(rf.outputs, *rf.args, **(rf.kwargs or {})))
    except Exception as e:  # a formula bug must not break the profiled program
        if rf.name not in _flop_failed:
            _flop_failed.add(rf.name)
            warnings.warn(f"profiler: the FLOP formula of {rf.name} raised {type(e).__name__}: "
                          f"{e}; its FLOPs are counted as 0", RuntimeWarning, stacklevel=2)
        return 0


class Collector:
    """Raw records of one profiling window (`ops`, `memory`) and the callbacks filling them."""

    def __init__(self, record_shapes: bool = False, profile_memory: bool = False,
                 with_stack: bool = False, with_flops: bool = False):
        self.record_shapes, self.profile_memory = record_shapes, profile_memory
        self.with_stack, self.with_flops = with_stack, with_flops
        self.ops: list[tuple] = []
        self.memory: list[tuple] = []
        self.inputs: list[tuple] = []   # interned (shapes, dtypes) of inputs_meta
        self.stacks: list[tuple] = []   # interned user stacks
        self.t0 = self.t1 = 0
        self.start_allocated: dict[str, int] = {}
        self.thread_names: dict[int, str] = {}
        self._handle: int | None = None
        self._mem_hook: Callable | None = None
        # device-side timers a backend offers (DeviceType.extras["op_timer"]): the GPU track
        self._device_timers: list = []
        self.device_ops: list[dict] = []

    @property
    def running(self) -> bool:
        return self._handle is not None

    def start(self) -> None:
        self.t0 = time.perf_counter_ns()
        self.start_allocated = _allocated_now()
        self._remember_threads()
        if self.profile_memory:
            self._mem_hook = add_memory_hook(self._make_memory_hook())
        self._handle = _rf.add_global_callback(None, self._make_end())  # every scope
        self._device_timers = [entry.extras["op_timer"]() for entry in device_types().values()
                               if entry.extras.get("op_timer") is not None]
        for timer in self._device_timers:
            timer.start()

    def stop(self) -> None:
        if self._handle is not None:
            _rf.remove_callback(self._handle)
            self._handle = None
        for timer in self._device_timers:
            timer.stop()
            self.device_ops.extend(timer.events())
        self._device_timers = []
        if self._mem_hook is not None:
            remove_memory_hook(self._mem_hook)
            self._mem_hook = None
        self.t1 = time.perf_counter_ns()
        self._remember_threads()

    def _remember_threads(self) -> None:
        for t in threading.enumerate():
            self.thread_names.setdefault(t.ident, t.name)

    def _make_memory_hook(self) -> Callable:
        append, now, ident = self.memory.append, time.perf_counter_ns, threading.get_ident

        def on_memory(ev) -> None:
            append((now(), ident(), ev.address, ev.nbytes, ev.device._str, ev.total_allocated,
                    ev.total_reserved))
        return on_memory

    def _make_end(self) -> Callable:
        append = self.ops.append
        rs, ws, wf = self.record_shapes, self.with_stack, self.with_flops
        if not (rs or ws or wf):
            def end(rf, _state) -> None:
                append((rf.name, int(rf.scope), rf.start_ns, rf.end_ns, rf.thread_id, rf.seq_nr,
                        rf.fwd_thread_id, -1, 0, -1))
            return end
        input_ids: dict[tuple, int] = {}
        stack_ids: dict[tuple, int] = {}
        inputs, stacks = self.inputs, self.stacks

        def end_detailed(rf, _state) -> None:
            i = s = -1
            if rs:
                meta = inputs_meta(rf.args, rf.kwargs)
                i = input_ids.get(meta, -1)
                if i < 0:
                    i = input_ids[meta] = len(inputs)
                    inputs.append(meta)
            fl = op_flops(rf) if wf and rf.scope is _FUNCTION else 0
            if ws:
                stack = user_stack(STACK_DEPTH, 2)
                s = stack_ids.get(stack, -1)
                if s < 0:
                    s = stack_ids[stack] = len(stacks)
                    stacks.append(stack)
            append((rf.name, int(rf.scope), rf.start_ns, rf.end_ns, rf.thread_id, rf.seq_nr,
                    rf.fwd_thread_id, i, fl, s))
        return end_detailed


def device_of(memory_record: tuple) -> device:
    """The device of a raw memory record."""
    return device(memory_record[M_DEVICE])


def _allocated_now() -> dict[str, int]:
    out: dict[str, Any] = {}
    for name, entry in device_types().items():
        alloc = getattr(entry.allocator, "allocated", None)
        if isinstance(alloc, int):
            out[name] = alloc
    return out
