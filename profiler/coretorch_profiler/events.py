"""`FunctionEvent` (one region) and `EventList`, built lazily from a `RawProfile`.

Building: one event per region record and module call; nesting per thread from the time
intervals; then the regions that are derived rather than recorded (ProfilerStep#N from the step
marks, module backward regions from the autograd sequence numbers each module's forward took,
user Python functions from the ops' call stacks), each inserted where it nests; memory records
attributed to the innermost region running when they happened; device kernels linked to the ops
that launched them.
"""

from __future__ import annotations

from typing import Any

from coretorch.record_function import plain_shapes

from . import raw as R
from ._frames import format_site, function_name
from .raw import EventKind, RawProfile

CATEGORY = {
    EventKind.FUNCTION: "cpu_op",
    EventKind.BACKWARD_FUNCTION: "backward",
    EventKind.USER_SCOPE: "user_annotation",
    EventKind.FALLBACK: "fallback",
    EventKind.MODULE: "python_function",
    EventKind.MODULE_BACKWARD: "python_function",
    EventKind.PYTHON: "python_function",
    EventKind.STEP: "user_annotation",
}
MODULE_PREFIX = "nn.Module: "
BACKWARD_SUFFIX = " (backward)"
# at equal start and end, the container comes first
_RANK = {
    EventKind.STEP: 0,
    EventKind.MODULE: 1,
    EventKind.MODULE_BACKWARD: 1,
    EventKind.PYTHON: 2,
    EventKind.USER_SCOPE: 3,
    EventKind.BACKWARD_FUNCTION: 4,
    EventKind.FALLBACK: 5,
    EventKind.FUNCTION: 6,
}
_NO_SEQ = (1 << 63) - 1  # nodes with no forward op (AccumulateGrad) carry it, as in PyTorch


class MemoryProperties:
    """PyTorch's per-device memory properties, from `memory_usage(device_type)` and
    `self_memory_usage(device_type)`."""

    __slots__ = ()

    def memory_devices_used(self) -> set[str]:
        """The device types this event allocated or freed memory on.

        Raises:
            NotImplementedError: in a class that does not define it.
        """
        raise NotImplementedError

    def memory_usage(self, device_type: str = "cpu") -> int:
        """Bytes allocated minus freed on `device_type` in this region and its children.

        Raises:
            NotImplementedError: in a class that does not define it.
        """
        raise NotImplementedError

    def self_memory_usage(self, device_type: str = "cpu") -> int:
        """Bytes allocated minus freed on `device_type` in this region itself.

        Raises:
            NotImplementedError: in a class that does not define it.
        """
        raise NotImplementedError

    @property
    def cpu_memory_usage(self) -> int:
        """Net bytes (allocated minus freed) on the cpu, children included."""
        return self.memory_usage("cpu")

    @property
    def self_cpu_memory_usage(self) -> int:
        """Net bytes on the cpu by the event itself."""
        return self.self_memory_usage("cpu")

    @property
    def device_memory_usage(self) -> int:
        """Net bytes on every non-cpu device (PyTorch's `device_memory_usage`)."""
        return sum(self.memory_usage(d) for d in self.memory_devices_used() if d != "cpu")

    @property
    def self_device_memory_usage(self) -> int:
        """Net bytes by the event itself on every non-cpu device."""
        return sum(self.self_memory_usage(d) for d in self.memory_devices_used() if d != "cpu")

    cuda_memory_usage = property(
        lambda self: self.memory_usage("cuda"), doc="Net bytes on cuda, children included."
    )
    self_cuda_memory_usage = property(
        lambda self: self.self_memory_usage("cuda"), doc="Net bytes on cuda by the event itself."
    )

    # device time: PyTorch's old names
    cuda_time_total = property(
        lambda self: self.device_time_total, doc="PyTorch's old name of device_time_total."
    )
    self_cuda_time_total = property(
        lambda self: self.self_device_time_total,
        doc="PyTorch's old name of self_device_time_total.",
    )


class FunctionEvent(MemoryProperties):
    """One region: an op, a backward node, a user annotation, a CPU fallback, a module forward
    or backward, a user Python function or a ProfilerStep.

    Times are in microseconds (PyTorch's unit); memory in bytes, per device type."""

    __slots__ = (
        "id",
        "name",
        "kind",
        "thread",
        "start_ns",
        "end_ns",
        "sequence_nr",
        "fwd_thread",
        "_shapes",
        "_dtypes",
        "flops",
        "_stack",
        "cpu_parent",
        "cpu_children",
        "self_allocated",
        "self_freed",
        "_t0",
        "kernel_ns",
        "extra",
        "kernels",
        "_tot",
    )

    def __init__(
        self,
        name: str,
        kind: EventKind,
        start_ns: int,
        end_ns: int,
        thread: int,
        t0: int,
        sequence_nr: int = -1,
        fwd_thread: int = 0,
        shapes=None,
        dtypes=None,
        flops: int = 0,
        stack: tuple | None = None,
        kernel_ns: int = -1,
        extra: dict[str, Any] | None = None,
    ):
        self.id = -1
        self.name, self.kind, self.start_ns, self.end_ns = name, kind, start_ns, end_ns
        self.thread, self._t0, self.sequence_nr, self.fwd_thread = (
            thread,
            t0,
            sequence_nr,
            fwd_thread,
        )
        self._shapes, self._dtypes, self.flops, self._stack = shapes, dtypes, flops, stack
        self.kernel_ns, self.extra = kernel_ns, extra
        self.cpu_parent: FunctionEvent | None = None
        self.cpu_children: list[FunctionEvent] = []
        self.self_allocated: dict[str, int] = {}
        self.self_freed: dict[str, int] = {}
        self.kernels: list[dict[str, Any]] = []
        self._tot: tuple | None = None

    def _totals(self) -> tuple:
        """(net bytes per device, device time ns, kernel ns or None) of this region and
        everything it called; computed once, on first use, after the events are built."""
        t = self._tot
        if t is None:
            mem = {
                d: self.self_memory_usage(d)
                for d in set(self.self_allocated) | set(self.self_freed)
            }
            dev = sum(k["end_ns"] - k["start_ns"] for k in self.kernels)
            kern = self.kernel_ns if self.kernel_ns >= 0 else None
            for c in self.cpu_children:
                cm, cd, ck = c._totals()
                for d, v in cm.items():
                    mem[d] = mem.get(d, 0) + v
                dev += cd
                if ck is not None:
                    kern = (kern or 0) + ck
            t = self._tot = (mem, dev, kern)
        return t

    # ---- identity ----
    key = property(lambda self: self.name, doc="The grouping key: the event name.")
    scope = property(lambda self: self.kind, doc="The event's kind (its EventKind).")
    count = 1
    is_async = False

    @property
    def category(self) -> str:
        """Chrome-trace category: cpu_op, backward, user_annotation, fallback, python_function."""
        return CATEGORY[self.kind]

    @property
    def module(self) -> str | None:
        """The module path of a module region (forward or backward)."""
        return self.extra.get("module") if self.extra else None

    # ---- time (µs) ----
    @property
    def start_us(self) -> float:
        """Start time in microseconds since the profile began."""
        return (self.start_ns - self._t0) / 1000.0

    @property
    def cpu_time_total(self) -> float:
        """Wall time of the event in microseconds, children included."""
        return (self.end_ns - self.start_ns) / 1000.0

    @property
    def cpu_time(self) -> float:
        """Same as cpu_time_total for a single event."""
        return self.cpu_time_total

    @property
    def self_cpu_time_total(self) -> float:
        """Wall time in microseconds minus the time of its child events."""
        return (
            self.end_ns - self.start_ns - sum(c.end_ns - c.start_ns for c in self.cpu_children)
        ) / 1000.0

    @property
    def self_device_time_total(self) -> float:
        """Device (GPU) time of the kernels this op launched itself (µs)."""
        return sum(k["end_ns"] - k["start_ns"] for k in self.kernels) / 1000.0

    @property
    def device_time_total(self) -> float:
        """Device time of the kernels of this region and everything it called (µs)."""
        return self._totals()[1] / 1000.0

    device_time = property(
        lambda self: self.device_time_total, doc="Same as device_time_total for a single event."
    )

    @property
    def kernel_time_total(self) -> float | None:
        """Time inside backend kernels (µs), this region and its children, as the dispatcher
        bracketed them; None when it did not."""
        k = self._totals()[2]
        return None if k is None else k / 1000.0

    @property
    def overhead_time_total(self) -> float | None:
        """Framework overhead (µs): the region's time outside backend kernels (dispatch,
        autograd bookkeeping, argument handling); None when kernels were not bracketed."""
        k = self.kernel_time_total
        return None if k is None else max(self.cpu_time_total - k, 0.0)

    # ---- inputs, stack ----
    @property
    def input_shapes(self) -> list:
        """Shape of each input ([] for non-tensors, a list of shapes for tensor lists)."""
        return plain_shapes(self._shapes)

    @property
    def input_dtypes(self) -> list[str]:
        """The dtype names of the op's tensor inputs (recorded with record_shapes)."""
        return list(self._dtypes or [])

    @property
    def stack(self) -> list[str]:
        """The user's Python frames at the call, innermost first ('file(line): function')."""
        return [format_site(s) for s in self._stack or ()]

    # ---- memory (bytes) ----
    def memory_devices_used(self) -> set[str]:
        """The device types this event allocated or freed memory on."""
        return set(self._totals()[0])

    def self_memory_usage(self, device_type: str = "cpu") -> int:
        """Bytes allocated minus bytes freed on `device_type` by this region, children excluded."""
        return self.self_allocated.get(device_type, 0) - self.self_freed.get(device_type, 0)

    def memory_usage(self, device_type: str = "cpu") -> int:
        """Net bytes allocated on `device_type` by this region and everything it called."""
        return self._totals()[0].get(device_type, 0)

    def __repr__(self) -> str:
        return (
            f"<FunctionEvent id={self.id} name={self.name} cpu_time={self.cpu_time_total:.3f}us"
            f" self_cpu_time={self.self_cpu_time_total:.3f}us>"
        )


class EventList(list):
    """A list of events (or of averages) that knows how it was recorded, to render tables."""

    def __init__(
        self,
        events=(),
        profile_memory: bool = False,
        with_flops: bool = False,
        memory_devices: tuple[str, ...] = (),
        total_self_cpu: float | None = None,
        group_by_input_shape: bool = False,
        group_by_stack_n: int = 0,
        has_device_time: bool = False,
        has_kernel_time: bool = False,
    ):
        super().__init__(events)
        self.profile_memory, self.with_flops = profile_memory, with_flops
        self.memory_devices = memory_devices
        self.group_by_input_shape, self.group_by_stack_n = group_by_input_shape, group_by_stack_n
        self.has_device_time, self.has_kernel_time = has_device_time, has_kernel_time
        self._total_self_cpu = total_self_cpu

    def _like(self, events, **overrides) -> "EventList":
        kw: dict[str, Any] = dict(
            profile_memory=self.profile_memory,
            with_flops=self.with_flops,
            memory_devices=self.memory_devices,
            has_device_time=self.has_device_time,
            has_kernel_time=self.has_kernel_time,
        )
        kw.update(overrides)
        return EventList(events, **kw)

    @property
    def self_cpu_time_total(self) -> float:
        """Sum of the self CPU time (µs) of every event: the base of the table's percentages."""
        if self._total_self_cpu is not None:
            return self._total_self_cpu
        return sum(e.self_cpu_time_total for e in self)

    def key_averages(
        self,
        group_by_input_shape: bool = False,
        group_by_stack_n: int = 0,
        group_by_overload_name: bool = False,
        group_by: str | None = None,
    ) -> "EventList":
        """One averaged row per name (and per input shapes / top stack frames if asked).
        ``group_by="module"``: one row per module (forward and backward apart), its self time
        being the time of its own ops, outside its submodules. ProfilerStep#N rows merge into
        one ``ProfilerStep*`` row, as in PyTorch."""
        from .averages import key_averages, module_averages

        if group_by is not None:
            if group_by != "module":
                raise ValueError(
                    f"key_averages(): expected group_by to be None or 'module', got {group_by!r}"
                )
            return module_averages(self)
        return key_averages(self, group_by_input_shape, group_by_stack_n)

    def table(
        self,
        sort_by: str | None = None,
        row_limit: int = 100,
        max_src_column_width: int = 75,
        max_name_column_width: int = 55,
        max_shapes_column_width: int = 80,
        header: str | None = None,
        top_level_events_only: bool = False,
        time_unit: str | None = None,
    ) -> str:
        """The table PyTorch users know (Name, Self CPU %, Self CPU, CPU total %, CPU total,
        CPU time avg, device time, memory, # of Calls, Input Shapes, FLOPs), rendered with
        rich, as a string. `sort_by` names an attribute of the rows (``"cpu_time_total"``,
        ``"self_cpu_time_total"``, ``"self_device_time_total"``, ``"cpu_memory_usage"``,
        ``"device_memory_usage"``, ``"count"``, ``"flops"``, ...), sorted in descending order;
        `time_unit` is "s", "ms" or "us" (default: each value's own)."""
        from .table import render_table

        return render_table(
            self,
            sort_by,
            row_limit,
            max_name_column_width,
            header,
            max_src_column_width=max_src_column_width,
            max_shapes_column_width=max_shapes_column_width,
            top_level_events_only=top_level_events_only,
            time_unit=time_unit,
        )

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


# ---- building ------------------------------------------------------------------------------


def build_events(raw: RawProfile) -> EventList:
    """Events from a raw profile: ids in start order, parents/children from the per-thread
    nesting of intervals, derived regions inserted, memory attributed, kernels linked."""
    events = _record_events(raw)
    events.sort(key=lambda e: (e.start_ns, -e.end_ns, _RANK[e.kind]))
    roots = _nest(events)
    if raw.step_marks:
        _place_steps(raw, roots)
    if raw.modules:
        _place_module_backward(raw, events, roots)
    if raw.with_stack and raw.loaded_from is None:
        for kids_owner, kids in _containers(roots):
            _place_python(kids_owner, kids, _prefix_of(kids_owner))
    events = _flatten(roots)
    for n, e in enumerate(events):
        e.id = n
    if raw.memory:
        _attribute_memory(events, raw)
    if raw.device_ops:
        _link_kernels(events, raw)
    devices = sorted({device_type_of(m) for m in raw.memory})
    return EventList(
        events,
        raw.profile_memory,
        raw.with_flops,
        tuple(devices),
        has_device_time=bool(raw.device_ops),
        has_kernel_time=any(e.kernel_ns >= 0 for e in events),
    )


def device_type_of(m: tuple) -> str:
    """The device type of a memory record ('cuda' of 'cuda:0')."""
    return m[R.M_DEVICE].split(":", 1)[0]


def _record_events(raw: RawProfile) -> list[FunctionEvent]:
    t0, tid_of = raw.t0, raw.native_tid
    inputs, stacks, extras = raw.inputs, raw.stacks, raw.extras
    out = []
    for r in raw.ops:
        shapes, dtypes = inputs[r[R.INPUTS]] if r[R.INPUTS] >= 0 else (None, None)
        out.append(
            FunctionEvent(
                r[R.NAME],
                EventKind(r[R.KIND]),
                r[R.START],
                r[R.END],
                tid_of(r[R.TID]),
                t0,
                r[R.SEQ],
                tid_of(r[R.FWD_TID]),
                shapes,
                dtypes,
                r[R.FLOPS],
                stacks[r[R.STACK]] if r[R.STACK] >= 0 else None,
                r[R.KERNEL],
                extras[r[R.EXTRA]] if r[R.EXTRA] >= 0 else None,
            )
        )
    if raw.modules:
        names = _module_names(raw)
        for c in raw.modules:
            path, kind = names[c[R.C_MOD]]
            out.append(
                FunctionEvent(
                    MODULE_PREFIX + path,
                    EventKind.MODULE,
                    c[R.C_START],
                    c[R.C_END],
                    tid_of(c[R.C_TID]),
                    t0,
                    stack=stacks[c[R.C_STACK]] if c[R.C_STACK] >= 0 else None,
                    extra={"module": path, "module_type": kind, "seq": (c[R.C_SEQ0], c[R.C_SEQ1])},
                )
            )
    return out


def _module_names(raw: RawProfile) -> list[tuple[str, str]]:
    """(display path, type) of each module path: a root is named by its class; below it the
    attribute path. With several roots, paths get their root's class as prefix."""
    roots = {r: kind for r, path, kind in raw.module_paths if path == ""}
    kinds = list(roots.values())
    out = []
    for r, path, kind in raw.module_paths:
        root_name = roots.get(r, "?")
        if kinds.count(root_name) > 1:
            root_name = f"{root_name}#{r}"
        if len(roots) > 1 and path:
            path = f"{root_name}.{path}"
        out.append((path or root_name, kind))
    return out


def _nest(events: list[FunctionEvent]) -> dict[int, list[FunctionEvent]]:
    """Parents and children from the intervals (events sorted by start); the top-level events
    of each thread."""
    stacks: dict[int, list[FunctionEvent]] = {}
    roots: dict[int, list[FunctionEvent]] = {}
    for e in events:
        st = stacks.setdefault(e.thread, [])
        while st and st[-1].end_ns < e.end_ns:
            st.pop()
        if st:
            e.cpu_parent = st[-1]
            st[-1].cpu_children.append(e)
        else:
            roots.setdefault(e.thread, []).append(e)
        st.append(e)
    return roots


def _flatten(roots: dict[int, list[FunctionEvent]]) -> list[FunctionEvent]:
    out: list[FunctionEvent] = []

    def walk(kids):
        for k in kids:
            out.append(k)
            if k.cpu_children:
                walk(k.cpu_children)

    for tid in roots:
        walk(roots[tid])
    out.sort(key=lambda e: (e.start_ns, -e.end_ns, _RANK[e.kind]))
    return out


_CONTAINERS = (EventKind.STEP, EventKind.MODULE, EventKind.USER_SCOPE)
_PASS_THROUGH = _CONTAINERS + (EventKind.PYTHON, EventKind.MODULE_BACKWARD)


def _containers(roots: dict[int, list[FunctionEvent]]):
    """(owner event or None, its children list) for each thread's top level and every step,
    module and user region, found after the caller has handled the ones before (so regions
    it inserted are looked through)."""
    todo: list[tuple[FunctionEvent | None, list]] = [(None, kids) for kids in roots.values()]
    while todo:
        owner, kids = todo.pop()
        if owner is None or owner.kind in _CONTAINERS:
            yield owner, kids
        for k in kids:
            if k.cpu_children and k.kind in _PASS_THROUGH:
                todo.append((k, k.cpu_children))


def _wrap(
    kids: list[FunctionEvent], lo: int, hi: int, ev: FunctionEvent, owner: FunctionEvent | None
) -> None:
    """Make `ev` the parent of kids[lo:hi] (in place of them in `kids`)."""
    ev.cpu_children = kids[lo:hi]
    for k in ev.cpu_children:
        k.cpu_parent = ev
    ev.cpu_parent = owner
    kids[lo:hi] = [ev]


# ---- ProfilerStep#N ----


def _place_steps(raw: RawProfile, roots: dict[int, list[FunctionEvent]]) -> None:
    by_thread: dict[int, list[tuple[int, int]]] = {}
    for m in raw.step_marks:
        by_thread.setdefault(raw.native_tid(m[R.S_TID]), []).append((m[R.S_TIME], m[R.S_STEP]))
    for tid, marks in by_thread.items():
        marks.sort()
        kids = roots.get(tid)
        if kids:
            roots[tid] = _steps_in(kids, marks[1:], marks[0][1], raw.t0, None)


def _steps_in(
    kids: list[FunctionEvent],
    marks: list[tuple[int, int]],
    step: int,
    t0: int,
    owner: FunctionEvent | None,
) -> list[FunctionEvent]:
    """`kids` regrouped into ProfilerStep regions: step `step` runs until the first mark, each
    mark starts the step it names. A mark inside a region moves to that region's end; a region
    holding two or more marks gets its steps inside it."""
    out: list[FunctionEvent] = []
    members: list[FunctionEvent] = []

    def close(n: int) -> None:
        if members:
            ev = FunctionEvent(
                f"ProfilerStep#{n}",
                EventKind.STEP,
                members[0].start_ns,
                members[-1].end_ns,
                members[0].thread,
                t0,
            )
            _wrap(members, 0, len(members), ev, owner)
            out.append(ev)
            members.clear()

    i = 0
    for k in kids:
        while i < len(marks) and marks[i][0] <= k.start_ns:
            close(step)
            step = marks[i][1]
            i += 1
        j = i
        while j < len(marks) and marks[j][0] < k.end_ns:
            j += 1
        if j - i >= 2 and k.kind in (EventKind.USER_SCOPE, EventKind.PYTHON, EventKind.MODULE):
            close(step)
            k.cpu_children = _steps_in(k.cpu_children, marks[i:j], step, t0, k)
            step = marks[j - 1][1]
            out.append(k)
            i = j
            continue
        members.append(k)
        if j > i:  # the step ends after this region
            close(step)
            step = marks[j - 1][1]
            i = j
    close(step)
    return out


# ---- module backward regions ----


def _place_module_backward(
    raw: RawProfile, events: list[FunctionEvent], roots: dict[int, list[FunctionEvent]]
) -> None:
    owner: dict[tuple[int, int], FunctionEvent] = {}
    for e in events:  # in start order: an inner module overrides its parent's numbers
        if e.kind is EventKind.MODULE and e.extra and "seq" in e.extra:
            s0, s1 = e.extra["seq"]
            for s in range(s0, s1):
                owner[(e.thread, s)] = e
    if not owner:
        return
    chains: dict[int, list[FunctionEvent]] = {}

    def chain(node: FunctionEvent) -> list[FunctionEvent] | None:
        m = owner.get((node.fwd_thread, node.sequence_nr))
        if m is None:
            return None
        c = chains.get(id(m))
        if c is None:
            c = []
            p: FunctionEvent | None = m
            while p is not None:
                if p.kind is EventKind.MODULE:
                    c.append(p)
                p = p.cpu_parent
            c.reverse()
            chains[id(m)] = c
        return c

    for box, kids in list(_containers(roots)):
        if any(k.kind is EventKind.BACKWARD_FUNCTION for k in kids):
            _group_backward(kids, 0, chain, box)


def _group_backward(kids: list[FunctionEvent], depth: int, chain, box) -> None:
    runs: list[list] = []  # [module event, first, last]
    cur: list | None = None
    for i, k in enumerate(kids):
        if k.kind is not EventKind.BACKWARD_FUNCTION:
            continue
        c = chain(k)
        if c is None or len(c) <= depth:
            if c is not None:  # a node of an outer module ends the run
                cur = None
            continue
        m = c[depth]
        if cur is not None and cur[0].module == m.module:
            cur[2] = i
        else:
            cur = [m, i, i]
            runs.append(cur)
    for m, first, last in reversed(runs):
        ev = FunctionEvent(
            f"{MODULE_PREFIX}{m.module}{BACKWARD_SUFFIX}",
            EventKind.MODULE_BACKWARD,
            kids[first].start_ns,
            kids[last].end_ns,
            kids[first].thread,
            kids[first]._t0,
            stack=kids[first]._stack,
            extra={"module": m.module, "module_type": (m.extra or {})["module_type"]},
        )
        _wrap(kids, first, last + 1, ev, box)
        _group_backward(ev.cpu_children, depth + 1, chain, ev)


# ---- user Python functions ----


def _frames_outermost_first(stack) -> list:
    return list(reversed(stack)) if stack else []


def _prefix_of(owner: FunctionEvent | None) -> list:
    """Code objects of the frames a container's children share with it."""
    if owner is None or owner.kind is EventKind.STEP:
        return [] if owner is None else _prefix_of(owner.cpu_parent)
    if owner.kind is EventKind.PYTHON:
        return (owner.extra or {})["prefix"]
    return [c for c, _ in _frames_outermost_first(owner._stack)]


def _place_python(owner: FunctionEvent | None, kids: list[FunctionEvent], prefix: list) -> None:
    n = len(prefix)
    runs: list[list] = []  # [code, first, last]
    cur = None
    for i, k in enumerate(kids):
        frames = _frames_outermost_first(k._stack)
        code = (
            frames[n][0]
            if len(frames) > n and all(f[0] is p for f, p in zip(frames, prefix))
            else None
        )
        if code is None:
            cur = None
            continue
        if cur is not None and cur[0] is code:
            cur[2] = i
        else:
            cur = [code, i, i]
            runs.append(cur)
    in_module = owner is not None and owner.kind is EventKind.MODULE
    for code, first, last in reversed(runs):
        if in_module and code.co_name in ("forward", "__call__", "_call_impl"):
            # the module region already is its forward: group one frame deeper
            _place_python_children(kids, first, last, prefix + [code])
            continue
        ev = FunctionEvent(
            function_name(code),
            EventKind.PYTHON,
            kids[first].start_ns,
            kids[last].end_ns,
            kids[first].thread,
            kids[first]._t0,
            stack=kids[first]._stack,
            extra={"prefix": prefix + [code]},
        )
        _wrap(kids, first, last + 1, ev, owner)
        _place_python(ev, ev.cpu_children, prefix + [code])


def _place_python_children(kids: list[FunctionEvent], first: int, last: int, prefix: list) -> None:
    """Group kids[first:last+1] one frame deeper, in place in `kids` (no region of its own)."""
    sub = kids[first : last + 1]
    owner = sub[0].cpu_parent
    _place_python(owner, sub, prefix)
    kids[first : last + 1] = sub


# ---- memory ----


def _attribute_memory(events: list[FunctionEvent], raw: RawProfile) -> None:
    """Sweep each thread's events and memory records in time order with a stack of open
    regions; a record belongs to the innermost region open at its time."""
    for m, owner in zip(raw.memory, memory_owners(events, raw)):
        if owner is None:
            continue
        dev, nbytes = device_type_of(m), m[R.M_BYTES]
        if nbytes >= 0:
            owner.self_allocated[dev] = owner.self_allocated.get(dev, 0) + nbytes
        else:
            owner.self_freed[dev] = owner.self_freed.get(dev, 0) - nbytes


def memory_owners(events: list[FunctionEvent], raw: RawProfile) -> list[FunctionEvent | None]:
    """For each memory record of `raw` (in its order), the innermost region open on its thread
    when it happened, or None."""
    by_thread: dict[int, list[FunctionEvent]] = {}
    for e in events:
        by_thread.setdefault(e.thread, []).append(e)
    idx_by_thread: dict[int, list[int]] = {}
    for n, m in enumerate(raw.memory):
        idx_by_thread.setdefault(raw.native_tid(m[R.M_TID]), []).append(n)
    owners: list[FunctionEvent | None] = [None] * len(raw.memory)
    for tid, idxs in idx_by_thread.items():
        evs = by_thread.get(tid, [])
        idxs.sort(key=lambda n: raw.memory[n][R.M_TIME])
        i = 0
        open_: list = []
        for n in idxs:
            t = raw.memory[n][R.M_TIME]
            while i < len(evs) and evs[i].start_ns <= t:
                ev = evs[i]
                while open_ and open_[-1].end_ns < ev.start_ns:
                    open_.pop()
                open_.append(ev)
                i += 1
            while open_ and open_[-1].end_ns < t:
                open_.pop()
            if open_:
                owners[n] = open_[-1]
    return owners


# ---- device kernels ----


def device_kernels(raw: RawProfile) -> list[dict[str, Any]]:
    """The device records that are kernels: per stream, a record enclosing another one (an op
    whose work is its inner ops' kernels) is dropped, so kernels never nest on a stream."""
    out = []
    by_stream: dict[tuple, list[dict]] = {}
    for d in raw.device_ops:
        by_stream.setdefault((d["device_index"], d["stream"]), []).append(d)
    for recs in by_stream.values():
        recs.sort(key=lambda d: (d["start_ns"], -d["end_ns"]))
        for i, d in enumerate(recs):
            nxt = recs[i + 1] if i + 1 < len(recs) else None
            if nxt is not None and nxt["start_ns"] < d["end_ns"] and nxt["end_ns"] <= d["end_ns"]:
                continue  # encloses the next record
            out.append(d)
    out.sort(key=lambda d: d["start_ns"])
    return out


def _link_kernels(events: list[FunctionEvent], raw: RawProfile) -> None:
    by_host = {(e.thread, e.start_ns): e for e in events if e.kind is EventKind.FUNCTION}
    for d in device_kernels(raw):
        host = d.get("host")
        ev = by_host.get((raw.native_tid(host[0]), host[1])) if host else None
        if ev is not None:
            ev.kernels.append(d)


def has_seq(e: FunctionEvent) -> bool:
    """True when the event carries an autograd sequence number."""
    return e.sequence_nr is not None and 0 <= e.sequence_nr < _NO_SEQ
