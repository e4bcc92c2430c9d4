"""`FunctionEvent` (one recorded region) and `EventList`, built lazily from a collector's raw
records: nesting per thread from the time intervals, memory attributed to the innermost region
running when it was allocated or freed."""
from __future__ import annotations

from typing import Any

from coretorch.record_function import RecordScope

from . import collector as C
from ._frames import format_site

CATEGORY = {RecordScope.FUNCTION: "cpu_op", RecordScope.BACKWARD_FUNCTION: "backward",
            RecordScope.USER_SCOPE: "user_annotation", RecordScope.FALLBACK: "fallback"}


class CpuMemoryProperties:
    """PyTorch's `cpu_memory_usage` / `self_cpu_memory_usage`: the cpu part of
    `memory_usage(device_type)` / `self_memory_usage(device_type)`."""

    __slots__ = ()

    @property
    def cpu_memory_usage(self) -> int:
        return self.memory_usage("cpu")

    @property
    def self_cpu_memory_usage(self) -> int:
        return self.self_memory_usage("cpu")


class FunctionEvent(CpuMemoryProperties):
    """One recorded region: an op, a backward node, a user annotation or a CPU fallback.

    Times are in microseconds (PyTorch's unit); memory in bytes, per device type
    (`cpu_memory_usage` is the cpu part, `memory_usage(device_type)` any other)."""

    __slots__ = ("id", "name", "scope", "thread", "start_ns", "end_ns", "sequence_nr",
                 "fwd_thread", "_shapes", "_dtypes", "flops", "_stack", "cpu_parent",
                 "cpu_children", "self_allocated", "self_freed", "_t0")

    def __init__(self, id: int, raw: tuple, col: "C.Collector"):  # noqa: A002
        self.id = id
        (self.name, scope, self.start_ns, self.end_ns, self.thread, self.sequence_nr,
         self.fwd_thread, inputs, self.flops, stack) = raw
        self.scope = RecordScope(scope)
        self._shapes, self._dtypes = col.inputs[inputs] if inputs >= 0 else (None, None)
        self._stack = col.stacks[stack] if stack >= 0 else None
        self._t0 = col.t0
        self.cpu_parent: FunctionEvent | None = None
        self.cpu_children: list[FunctionEvent] = []
        self.self_allocated: dict[str, int] = {}
        self.self_freed: dict[str, int] = {}

    # ---- identity ----
    key = property(lambda self: self.name)
    count = 1
    is_async = False

    @property
    def category(self) -> str:
        """Chrome-trace category: cpu_op, backward, user_annotation or fallback."""
        return CATEGORY[self.scope]

    # ---- time (µs) ----
    @property
    def start_us(self) -> float:
        return (self.start_ns - self._t0) / 1000.0

    @property
    def cpu_time_total(self) -> float:
        return (self.end_ns - self.start_ns) / 1000.0

    @property
    def cpu_time(self) -> float:
        return self.cpu_time_total

    @property
    def self_cpu_time_total(self) -> float:
        return (self.end_ns - self.start_ns - sum(c.end_ns - c.start_ns
                                                   for c in self.cpu_children)) / 1000.0

    # ---- inputs, stack ----
    @property
    def input_shapes(self) -> list:
        """Shape of each input ([] for non-tensors, a list of shapes for tensor lists)."""
        return C.plain_shapes(self._shapes)

    @property
    def input_dtypes(self) -> list[str]:
        return list(self._dtypes or [])

    @property
    def stack(self) -> list[str]:
        """The user's Python frames at the call, innermost first ('file(line): function')."""
        return [format_site(s) for s in self._stack or ()]

    # ---- memory (bytes) ----
    def self_memory_usage(self, device_type: str = "cpu") -> int:
        """Bytes allocated minus bytes freed on `device_type` by this region, children excluded."""
        return self.self_allocated.get(device_type, 0) - self.self_freed.get(device_type, 0)

    def memory_usage(self, device_type: str = "cpu") -> int:
        """Net bytes allocated on `device_type` by this region and everything it called."""
        return self.self_memory_usage(device_type) + sum(c.memory_usage(device_type)
                                                         for c in self.cpu_children)

    def __repr__(self) -> str:
        return (f"<FunctionEvent id={self.id} name={self.name} cpu_time={self.cpu_time_total:.3f}us"
                f" self_cpu_time={self.self_cpu_time_total:.3f}us>")


class EventList(list):
    """A list of events (or of averages) that knows how it was recorded, to render tables."""

    def __init__(self, events=(), profile_memory: bool = False, with_flops: bool = False,
                 memory_devices: tuple[str, ...] = (), total_self_cpu: float | None = None,
                 group_by_input_shape: bool = False, group_by_stack_n: int = 0):
        super().__init__(events)
        self.profile_memory, self.with_flops = profile_memory, with_flops
        self.memory_devices = memory_devices
        self.group_by_input_shape, self.group_by_stack_n = group_by_input_shape, group_by_stack_n
        self._total_self_cpu = total_self_cpu

    @property
    def self_cpu_time_total(self) -> float:
        """Sum of the self CPU time (µs) of every event: the base of the table's percentages."""
        if self._total_self_cpu is not None:
            return self._total_self_cpu
        return sum(e.self_cpu_time_total for e in self)

    def key_averages(self, group_by_input_shape: bool = False,
                     group_by_stack_n: int = 0) -> "EventList":
        """One averaged row per op name (and per input shapes / top stack frames if asked)."""
        from .averages import key_averages
        return key_averages(self, group_by_input_shape, group_by_stack_n)

    def table(self, sort_by: str | None = None, row_limit: int = 100,
              max_name_column_width: int = 55, header: str | None = None) -> str:
        """The table PyTorch users know (Name, Self CPU %, Self CPU, CPU total %, CPU total,
        CPU time avg, memory, # of Calls, Input Shapes, FLOPs), rendered with rich, as a string.
        `sort_by` names an attribute of the rows (``"cpu_time_total"``, ``"self_cpu_time_total"``,
        ``"cpu_memory_usage"``, ``"count"``, ``"flops"``, ...), sorted in descending order."""
        from .table import render_table
        return render_table(self, sort_by, row_limit, max_name_column_width, header)

    def rows(self, sort_by: str | None = None, row_limit: int = 100) -> list[dict[str, Any]]:
        """The table as plain data: one dict per row keyed by column name, raw numbers (times
        in µs, memory in bytes, FLOPs as integers, percentages as floats)."""
        from .table import table_rows
        return table_rows(self, sort_by, row_limit)

    def total_average(self):
        """All events averaged into one row named 'Total'."""
        from .averages import FunctionEventAvg
        total = FunctionEventAvg("Total")
        for e in self:
            total.add(e)
        return total


def build_events(col: "C.Collector") -> EventList:
    """Events from a collector's raw records: ids in start order, parents/children from the
    per-thread nesting of intervals, memory records attributed to the innermost region."""
    raws = col.ops
    order = sorted(range(len(raws)), key=lambda i: (raws[i][C.START], -raws[i][C.END], -i))
    events = [FunctionEvent(n, raws[i], col) for n, i in enumerate(order)]
    stacks: dict[int, list[FunctionEvent]] = {}
    for e in events:
        st = stacks.setdefault(e.thread, [])
        while st and st[-1].end_ns < e.end_ns:
            st.pop()
        if st:
            e.cpu_parent = st[-1]
            st[-1].cpu_children.append(e)
        st.append(e)
    if col.memory:
        _attribute_memory(events, col.memory)
    devices = sorted({C.device_of(m).type for m in col.memory})
    return EventList(events, col.profile_memory, col.with_flops, tuple(devices))


def _attribute_memory(events: list[FunctionEvent], memory: list[tuple]) -> None:
    """Sweep each thread's events and memory records in time order with a stack of open
    regions; a record belongs to the innermost region open at its time."""
    by_thread: dict[int, list[FunctionEvent]] = {}
    for e in events:
        by_thread.setdefault(e.thread, []).append(e)
    mem_by_thread: dict[int, list[tuple]] = {}
    for m in memory:
        mem_by_thread.setdefault(m[C.M_TID], []).append(m)
    for tid, mems in mem_by_thread.items():
        evs = by_thread.get(tid, [])
        mems.sort(key=lambda m: m[C.M_TIME])
        i, open_ = 0, []
        for m in mems:
            t = m[C.M_TIME]
            while i < len(evs) and evs[i].start_ns <= t:
                ev = evs[i]
                while open_ and open_[-1].end_ns < ev.start_ns:
                    open_.pop()
                open_.append(ev)
                i += 1
            while open_ and open_[-1].end_ns < t:
                open_.pop()
            if not open_:
                continue
            owner, dev, nbytes = open_[-1], C.device_of(m).type, m[C.M_BYTES]
            if nbytes >= 0:
                owner.self_allocated[dev] = owner.self_allocated.get(dev, 0) + nbytes
            else:
                owner.self_freed[dev] = owner.self_freed.get(dev, 0) - nbytes
