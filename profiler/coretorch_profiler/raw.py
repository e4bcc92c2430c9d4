"""The recorded data of one profiling window, whoever recorded it: the collector while a program
runs, or the trace loader reading a Chrome trace back. Every view (events, tables, traces,
stacks, memory timeline, report, diff, advice) is built from a `RawProfile` and records nothing
of its own.

A record is a flat tuple of ints, strings and None, so that the garbage collector stops tracking
it the first time it looks (see collector.py for why that matters).
"""

from __future__ import annotations

import enum
import os
from typing import Any

__all__ = ["EventKind", "RawProfile"]


class EventKind(enum.IntEnum):
    """What a region is. The first four are the core's RecordScope values."""

    FUNCTION = 0  # a dispatched operator
    BACKWARD_FUNCTION = 1  # an autograd node run by the engine
    USER_SCOPE = 2  # record_function("name"), optimizer and DataLoader regions
    FALLBACK = 3  # an op run through a backend's CPU fallback
    MODULE = 10  # an nn.Module forward
    MODULE_BACKWARD = 11  # the backward nodes of an nn.Module's forward ops
    PYTHON = 12  # a user Python function, derived from the ops' call stacks
    STEP = 13  # ProfilerStep#N


# indices into a region record
NAME, KIND, START, END, TID, SEQ, FWD_TID, INPUTS, FLOPS, STACK, EXTRA, KERNEL = range(12)
# indices into a memory record (M_DEVICE: the device's name, as `str(device)` gives it)
M_TIME, M_TID, M_ADDR, M_BYTES, M_DEVICE, M_TOTAL, M_RESERVED = range(7)
# indices into a module-call record (MOD: an index into RawProfile.module_paths)
C_MOD, C_START, C_END, C_TID, C_SEQ0, C_SEQ1, C_STACK = range(7)
# indices into a step mark: the step `S_STEP` starts at `S_TIME` on thread `S_TID`
S_TIME, S_TID, S_STEP = range(3)


def region(
    name: str,
    kind: int,
    start: int,
    end: int,
    tid: int,
    seq: int = -1,
    fwd_tid: int = 0,
    inputs: int = -1,
    flops: int = 0,
    stack: int = -1,
    extra: int = -1,
    kernel: int = -1,
) -> tuple:
    """A region record with the defaults of the fields it does not use."""
    return (name, int(kind), start, end, tid, seq, fwd_tid, inputs, flops, stack, extra, kernel)


class RawProfile:
    """The records of one window and how they were recorded.

    `ops`: region records (every kind; the collector records ops, backward nodes and user
    scopes, a loaded trace every kind); `memory`: allocations and frees; `inputs`/`stacks`:
    interned input metadata and call stacks the records point to; `extras`: per-record dicts
    (module path, kernel links, ...); `modules`: module forward calls with the autograd sequence
    numbers they took; `module_paths`: (root index, path, type name) of each module seen;
    `step_marks`: where each ProfilerStep begins; `device_ops`: device kernels (dicts with name,
    device_index, stream, start_ns, end_ns, and `host` = (thread, start_ns) of the launching op).
    Times are `perf_counter_ns` values; `base_time_ns` is the wall-clock time (ns since the
    epoch) of `t0`.
    """

    def __init__(
        self,
        record_shapes: bool = False,
        profile_memory: bool = False,
        with_stack: bool = False,
        with_flops: bool = False,
        with_modules: bool = False,
    ):
        self.record_shapes, self.profile_memory = record_shapes, profile_memory
        self.with_stack, self.with_flops, self.with_modules = with_stack, with_flops, with_modules
        self.ops: list[tuple] = []
        self.memory: list[tuple] = []
        self.inputs: list[tuple] = []
        self.stacks: list[tuple] = []
        self.extras: list[dict[str, Any]] = []
        self.modules: list[tuple] = []
        self.module_paths: list[tuple[int, str, str]] = []
        self.step_marks: list[tuple[int, int, int]] = []
        self.device_ops: list[dict[str, Any]] = []
        self.t0 = self.t1 = 0
        self.base_time_ns = 0
        self.pid = os.getpid()
        self.start_allocated: dict[str, int] = {}
        self.thread_names: dict[int, str] = {}
        self.native_ids: dict[int, int] = {}  # thread ident -> native thread id
        self.metadata: dict[str, Any] = {}
        self.machine: dict[str, Any] = {}
        self.distributed: dict[str, Any] = {"backend": None, "rank": 0, "world_size": 1}
        # address -> category of the tensors known at the end (parameters, gradients, optimizer
        # state), and the bytes of each category allocated before the window began
        self.memory_roles: dict[int, str] = {}
        self.baseline: dict[str, dict[str, int]] = {}
        self.memory_categories: list[str] | None = None  # per memory record, when loaded
        self.anomalies: list[dict[str, Any]] = []
        self.loaded_from: str | None = None

    def native_tid(self, ident: int) -> int:
        """The native (OS) id of a thread recorded by its Python ident."""
        return self.native_ids.get(ident, ident)

    def add_extra(self, d: dict[str, Any]) -> int:
        """Store the dict `d` of extra event fields; returns its index."""
        self.extras.append(d)
        return len(self.extras) - 1
