"""`FunctionEventAvg` and `key_averages`: events grouped by name (and input shapes / stack)."""
from __future__ import annotations

from .events import CpuMemoryProperties, EventList, FunctionEvent


class FunctionEventAvg(CpuMemoryProperties):
    """Totals over the events of one group; `cpu_time` is the average per call (µs)."""

    def __init__(self, key: str):
        self.key = key
        self.count = 0
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0
        self.flops = 0
        self.input_shapes: list | None = None
        self.stack: list[str] = []
        self.scope = None
        self.is_legacy = False
        self._memory: dict[str, int] = {}
        self._self_memory: dict[str, int] = {}

    def add(self, e: FunctionEvent) -> "FunctionEventAvg":
        if self.count == 0:
            self.input_shapes, self.stack, self.scope = e.input_shapes, e.stack, e.scope
        self.count += 1
        self.cpu_time_total += e.cpu_time_total
        self.self_cpu_time_total += e.self_cpu_time_total
        self.flops += e.flops or 0
        for dev in set(e.self_allocated) | set(e.self_freed) | _child_devices(e):
            self._memory[dev] = self._memory.get(dev, 0) + e.memory_usage(dev)
            self._self_memory[dev] = self._self_memory.get(dev, 0) + e.self_memory_usage(dev)
        return self

    @property
    def name(self) -> str:
        return self.key

    @property
    def cpu_time(self) -> float:
        """Average CPU time per call (µs), children included."""
        return self.cpu_time_total / self.count if self.count else 0.0

    @property
    def self_cpu_time(self) -> float:
        return self.self_cpu_time_total / self.count if self.count else 0.0

    def memory_usage(self, device_type: str = "cpu") -> int:
        """Net bytes allocated on `device_type` by the group's events, children included."""
        return self._memory.get(device_type, 0)

    def self_memory_usage(self, device_type: str = "cpu") -> int:
        """Net bytes allocated on `device_type` by the group's events themselves."""
        return self._self_memory.get(device_type, 0)

    def __repr__(self) -> str:
        return (f"<FunctionEventAvg key={self.key} self_cpu_time={self.self_cpu_time_total:.3f}us "
                f"cpu_time={self.cpu_time_total:.3f}us count={self.count} "
                f"input_shapes={self.input_shapes}>")


def _child_devices(e: FunctionEvent) -> set[str]:
    out: set[str] = set()
    for c in e.cpu_children:
        out |= set(c.self_allocated) | set(c.self_freed) | _child_devices(c)
    return out


def key_averages(events: EventList, group_by_input_shape: bool = False,
                 group_by_stack_n: int = 0) -> EventList:
    """Group `events` by name (plus input shapes, plus the top `group_by_stack_n` frames)."""
    if group_by_stack_n < 0:
        raise ValueError(f"key_averages(): expected group_by_stack_n >= 0, got {group_by_stack_n}")
    groups: dict[tuple, FunctionEventAvg] = {}
    for e in events:
        k: tuple = (e.name,)
        if group_by_input_shape:
            k += (str(e.input_shapes),)
        if group_by_stack_n:
            k += tuple(e.stack[:group_by_stack_n])
        g = groups.get(k)
        if g is None:
            g = groups[k] = FunctionEventAvg(e.name)
        g.add(e)
    for g in groups.values():
        if not group_by_input_shape:
            g.input_shapes = None  # one name's calls have many shapes: show none
        if not group_by_stack_n:
            g.stack = []
        else:
            g.stack = g.stack[:group_by_stack_n]
    return EventList(groups.values(), events.profile_memory, events.with_flops,
                     events.memory_devices, events.self_cpu_time_total, group_by_input_shape,
                     group_by_stack_n)
