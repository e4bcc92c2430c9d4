"""`FunctionEventAvg` and the groupings of events: by name (and input shapes / stack), and by
module."""

from __future__ import annotations

from .events import BACKWARD_SUFFIX, EventList, FunctionEvent, MemoryProperties
from .raw import EventKind

STEP_ROW = "ProfilerStep*"


class FunctionEventAvg(MemoryProperties):
    """Totals over the events of one group; `cpu_time` is the average per call (µs). Adding
    another average merges its totals."""

    def __init__(self, key: str):
        self.key = key
        self.count = 0
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0
        self.device_time_total = 0.0
        self.self_device_time_total = 0.0
        self.kernel_time_total: float | None = None
        self.flops = 0
        self.input_shapes: list | None = None
        self.stack: list[str] = []
        self.scope = None
        self.is_legacy = False
        self.top_level = False  # some event of the group had no parent
        self._memory: dict[str, int] = {}
        self._self_memory: dict[str, int] = {}

    def add(self, e: "FunctionEvent | FunctionEventAvg") -> "FunctionEventAvg":
        """Fold event (or average) `e` into this one: counts, times, flops and memory add up;
        returns self."""
        if self.count == 0:
            self.input_shapes, self.stack, self.scope = e.input_shapes, e.stack, e.scope
        self.count += e.count
        self.top_level = self.top_level or (
            e.top_level if isinstance(e, FunctionEventAvg) else e.cpu_parent is None
        )
        self.cpu_time_total += e.cpu_time_total
        self.self_cpu_time_total += e.self_cpu_time_total
        self.device_time_total += e.device_time_total
        self.self_device_time_total += e.self_device_time_total
        k = e.kernel_time_total
        if k is not None:
            self.kernel_time_total = (self.kernel_time_total or 0.0) + k
        self.flops += e.flops or 0
        for dev in e.memory_devices_used():
            self._memory[dev] = self._memory.get(dev, 0) + e.memory_usage(dev)
            self._self_memory[dev] = self._self_memory.get(dev, 0) + e.self_memory_usage(dev)
        return self

    @property
    def name(self) -> str:
        """The grouping key (the event name)."""
        return self.key

    @property
    def cpu_time(self) -> float:
        """Average CPU time per call (µs), children included."""
        return self.cpu_time_total / self.count if self.count else 0.0

    @property
    def self_cpu_time(self) -> float:
        """Average self CPU time per call, in microseconds."""
        return self.self_cpu_time_total / self.count if self.count else 0.0

    @property
    def device_time(self) -> float:
        """Average device time per call (µs)."""
        return self.device_time_total / self.count if self.count else 0.0

    @property
    def overhead_time_total(self) -> float | None:
        """Time outside backend kernels (µs), when kernels were bracketed."""
        k = self.kernel_time_total
        return None if k is None else max(self.cpu_time_total - k, 0.0)

    def memory_devices_used(self) -> set[str]:
        """The device types with memory allocated or freed by the grouped events."""
        return set(self._memory) | set(self._self_memory)

    def memory_usage(self, device_type: str = "cpu") -> int:
        """Net bytes allocated on `device_type` by the group's events, children included."""
        return self._memory.get(device_type, 0)

    def self_memory_usage(self, device_type: str = "cpu") -> int:
        """Net bytes allocated on `device_type` by the group's events themselves."""
        return self._self_memory.get(device_type, 0)

    def __repr__(self) -> str:
        return (
            f"<FunctionEventAvg key={self.key} self_cpu_time={self.self_cpu_time_total:.3f}us "
            f"cpu_time={self.cpu_time_total:.3f}us count={self.count} "
            f"input_shapes={self.input_shapes}>"
        )


def row_key(name: str) -> str:
    """The table row of an event name: ProfilerStep#N rows merge (PyTorch's wildcard)."""
    return STEP_ROW if name.startswith("ProfilerStep#") else name


def key_averages(
    events: EventList, group_by_input_shape: bool = False, group_by_stack_n: int = 0
) -> EventList:
    """Group `events` by name (plus input shapes, plus the top `group_by_stack_n` frames)."""
    if group_by_stack_n < 0:
        raise ValueError(f"key_averages(): expected group_by_stack_n >= 0, got {group_by_stack_n}")
    groups: dict[tuple, FunctionEventAvg] = {}
    for e in events:
        name = row_key(e.name)
        k: tuple = (name,)
        if group_by_input_shape:
            k += (str(e.input_shapes),)
        if group_by_stack_n:
            k += tuple(e.stack[:group_by_stack_n])
        g = groups.get(k)
        if g is None:
            g = groups[k] = FunctionEventAvg(name)
        g.add(e)
    for g in groups.values():
        if not group_by_input_shape:
            g.input_shapes = None  # one name's calls have many shapes: show none
        g.stack = g.stack[:group_by_stack_n] if group_by_stack_n else []
    return events._like(
        groups.values(),
        total_self_cpu=events.self_cpu_time_total,
        group_by_input_shape=group_by_input_shape,
        group_by_stack_n=group_by_stack_n,
    )


def owning_module(e: FunctionEvent) -> FunctionEvent | None:
    """The innermost module region (forward or backward) enclosing `e`, itself included."""
    p: FunctionEvent | None = e
    while p is not None and p.kind not in (EventKind.MODULE, EventKind.MODULE_BACKWARD):
        p = p.cpu_parent
    return p


def module_row(m: FunctionEvent) -> str:
    """The row name of a module region: its path, '(backward)' for its backward nodes."""
    return f"{m.module}{BACKWARD_SUFFIX if m.kind is EventKind.MODULE_BACKWARD else ''}"


def module_averages(events: EventList) -> EventList:
    """One row per module path (forward and backward apart): CPU total is the time of its
    regions, Self CPU the part outside its submodules (its own ops included), memory the net
    bytes its regions allocated (submodules included), FLOPs those of the ops it ran itself."""
    groups: dict[str, FunctionEventAvg] = {}
    for e in events:
        if e.kind not in (EventKind.MODULE, EventKind.MODULE_BACKWARD):
            continue
        key = module_row(e)
        g = groups.get(key)
        if g is None:
            g = groups[key] = FunctionEventAvg(key)
        g.count += 1
        g.cpu_time_total += e.cpu_time_total
        g.device_time_total += e.device_time_total
        inner = _submodule_time(e)
        g.self_cpu_time_total += e.cpu_time_total - inner
        for dev in e.memory_devices_used():
            g._memory[dev] = g._memory.get(dev, 0) + e.memory_usage(dev)
    for e in events:
        if e.kind is EventKind.FUNCTION and e.flops:
            m = owning_module(e)
            p = e.cpu_parent  # count the outermost op that declares FLOPs
            while p is not None and p is not m and not p.flops:
                p = p.cpu_parent
            if m is not None and (p is None or p is m):
                groups[module_row(m)].flops += e.flops
    total = sum(g.self_cpu_time_total for g in groups.values())
    return events._like(groups.values(), total_self_cpu=total)


def _submodule_time(e: FunctionEvent) -> float:
    out = 0.0
    for c in e.cpu_children:
        if c.kind in (EventKind.MODULE, EventKind.MODULE_BACKWARD):
            out += c.cpu_time_total
        else:
            out += _submodule_time(c)
    return out
