"""Recording: the callbacks of one profiling window (RecordFunction regions, allocator events,
module calls, device kernels), filling a `RawProfile`.

The callbacks stay lean: they add the fields of one raw record per region (and per
allocation/free) to a flat list and do nothing else; `stop()` cuts those lists into the record
tuples. Events, nesting, memory attribution, tables and traces are built later, from these
tuples, when someone asks.
"""

from __future__ import annotations

import math
import threading
import time
import warnings
from typing import Any, Callable

from coretorch import record_function as _rf
from coretorch.device import device_types
from coretorch.dispatch.operator import get_operator
from coretorch.nn.modules import module as _module
from coretorch.tensor.storage import add_memory_hook, remove_memory_hook

from . import machine
from ._frames import StackRecorder
from .raw import KERNEL, M_RESERVED, RawProfile

RecordScope = _rf.RecordScope
inputs_meta, plain_shapes = _rf.inputs_meta, _rf.plain_shapes  # the layout lives in the core
_FUNCTION = RecordScope.FUNCTION
STACK_DEPTH = 32
# a dispatcher that brackets backend kernels gives each RecordFunction a `kernel_ns` slot (ns
# spent in the op's own kernel call, -1 when it ran none); the table then shows the framework
# overhead, the op's time outside its kernels
HAS_KERNEL_NS = "kernel_ns" in getattr(_rf.RecordFunction, "__slots__", ())

# regions whose ops run no user code between the region and the op (coretorch's own
# optimizer and DataLoader regions, besides ops and backward nodes): such an op's user stack
# is its region's, walked once for all of them (frame walks are most of with_stack's cost)
_SHARED_SCOPES = ("Optimizer.step#", "Optimizer.zero_grad#", "enumerate(DataLoader)#")
_BACKWARD = RecordScope.BACKWARD_FUNCTION
# a scope as a plain int, by lookup (faster than int() on an IntEnum per record)
_SCOPE_INT = {s: int(s) for s in RecordScope}

# copies that may cross devices: their record gets the devices and bytes (the advice on
# host-device copies reads them)
COPY_OPS = frozenset({"aten::_to_copy", "aten::copy_", "aten::to", "aten::_copy_from"})

# A raw record holds only ints, strings and None, so that the garbage collector stops tracking
# it the first time it looks. A record holding a tracked object (a device, a list, a tuple it
# has not looked at yet) gets promoted to the oldest generation instead, and records piling up
# there trigger full collections of the whole heap: about 100 ms every few hundred steps of a
# small model, measured. Input shapes and stacks are therefore interned, and devices kept by
# name.
#
# While recording, a record is not even a tuple: the callbacks `extend` a flat list with its
# fields (the argument tuple is freed at once, into CPython's free list), and `stop()` cuts the
# list into records. A tuple kept per region is a new container for the garbage collector: more
# young collections while recording (~600 instructions per region of `a + b`, measured). One
# `list.extend` of a tuple runs under the GIL without a break, so records of several threads
# never interleave. Measured with callgrind on `a + b` (4 floats), per region over a no-op
# observer: the lean callback of `profile()`'s default options ~1.3k instructions, against
# ~2.1-2.4k for a tuple kept per region, a scope lookup and a thread-table lookup per region.
RECORD_LEN = KERNEL + 1  # fields of a region record (raw.py: NAME ... KERNEL)
# fields of a lean region record (default options: no shapes, stacks or FLOPs): name, kind,
# start, end, thread, sequence number, X, kernel time; X is the copy extra of an op (FUNCTION or
# FALLBACK: its forward thread is its own thread) and the forward thread of any other region.
# Every field a list holds costs its share of the list's growth (copies on reallocation), so
# the ones that are constant under default options are left out, and put back at stop()
LEAN_LEN = 8
MEMORY_RECORD_LEN = M_RESERVED + 1  # fields of a memory record (raw.py: M_TIME ... M_RESERVED)

_MISSING: Any = object()
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
            warnings.warn(
                f"profiler: the FLOP formula of {rf.name} raised {type(e).__name__}: "
                f"{e}; its FLOPs are counted as 0",
                RuntimeWarning,
                stacklevel=2,
            )
        return 0


class Collector(RawProfile):
    """A `RawProfile` being recorded: `start()` registers the callbacks, `stop()` removes them
    and adds what is known only at the end (thread names, the roles of live tensors)."""

    def __init__(
        self,
        record_shapes: bool = False,
        profile_memory: bool = False,
        with_stack: bool = False,
        with_flops: bool = False,
        with_modules: bool = False,
        device_timers: bool = True,
    ):
        super().__init__(record_shapes, profile_memory, with_stack, with_flops, with_modules)
        self._handles: list[int] = []  # the RecordFunction callbacks' handles while recording
        # the fields of the region and memory records of the window, RECORD_LEN (or
        # MEMORY_RECORD_LEN) per record, cut into `ops` and `memory` at stop()
        self._flat: list = []
        self._lean = False  # records in the lean layout (LEAN_LEN fields)
        self._flat_memory: list = []
        self._mem_hook: Callable | None = None
        self._module_hooks: list = []
        self._use_device_timers = device_timers
        self._device_timers: list = []  # backends' DeviceType.extras["op_timer"]: GPU track
        self._stacks = StackRecorder(STACK_DEPTH)
        self.stacks = self._stacks.stacks
        self._module_refs: list = []  # modules seen (their ids key the path cache)
        self.optimizers: list = []  # optimizers seen stepping (for memory roles)

    @property
    def running(self) -> bool:
        """True between start() and stop()."""
        return bool(self._handles)

    def start(self) -> None:
        """Start recording: snapshot the machine, install the scope, memory, module and device-timer
        hooks."""
        if self.with_stack:
            self._stacks.start(2)
        self.machine = machine.snapshot()
        self.distributed = _distributed_info()
        self.base_time_ns = time.time_ns()
        self.t0 = time.perf_counter_ns()
        self.start_allocated = _allocated_now()
        self._remember_threads()
        if self.profile_memory:
            self._mem_hook = add_memory_hook(self._make_memory_hook())
        if self.with_modules:
            self._start_modules()
        self._handles = [
            _rf.add_global_callback(start, end, scopes)
            for start, end, scopes in self._make_callbacks()
        ]
        if self._use_device_timers:
            self._device_timers = [
                entry.extras["op_timer"]()
                for entry in device_types().values()
                if entry.extras.get("op_timer") is not None
            ]
        for timer in self._device_timers:
            timer.start()

    def stop(self) -> None:
        """Stop recording: remove every hook and collect the device timers' events (safe to call
        twice)."""
        for h in self._handles:
            _rf.remove_callback(h)
        self._handles = []
        if self._flat:
            if self._lean:
                self.ops.extend(_lean_records(self._flat))
            else:
                self.ops.extend(_records(self._flat, RECORD_LEN))
            self._flat = []
        for h in self._module_hooks:
            h.remove()
        self._module_hooks = []
        for timer in self._device_timers:
            timer.stop()
            self.device_ops.extend(timer.events())
        self._device_timers = []
        if self._mem_hook is not None:
            remove_memory_hook(self._mem_hook)
            self._mem_hook = None
            if self._flat_memory:
                self.memory.extend(_records(self._flat_memory, MEMORY_RECORD_LEN))
                self._flat_memory = []
            self._find_memory_roles()
        self.t1 = time.perf_counter_ns()
        self._stacks.stop()
        self._remember_threads()
        self._module_refs = []
        self.optimizers = []

    def saw_optimizer(self, opt) -> None:
        """Remember an optimizer that stepped in the window (its tensors get memory roles)."""
        if not any(o is opt for o in self.optimizers):
            self.optimizers.append(opt)

    # ---- threads ----
    def _remember_threads(self) -> None:
        for t in threading.enumerate():
            if t.ident is not None:
                self.thread_names.setdefault(t.ident, t.name)
                if t.native_id is not None:
                    self.native_ids.setdefault(t.ident, t.native_id)

    def _see_thread(self, ident: int) -> None:
        # called from inside the thread: a thread that starts and ends within the window is
        # never seen by threading.enumerate() at start or stop
        t = threading.current_thread()
        self.native_ids.setdefault(ident, threading.get_native_id())
        self.thread_names.setdefault(ident, t.name)

    # ---- memory ----
    def _make_memory_hook(self) -> Callable:
        extend, now, ident = self._flat_memory.extend, time.perf_counter_ns, threading.get_ident
        seen, see = self.native_ids, self._see_thread

        def on_memory(ev) -> None:
            tid = ident()
            if tid not in seen:
                see(tid)
            extend(
                (
                    now(),
                    tid,
                    ev.address,
                    ev.nbytes,
                    ev.device._str,
                    ev.total_allocated,
                    ev.total_reserved,
                )
            )

        return on_memory

    def _find_memory_roles(self) -> None:
        """Parameters, their gradients and optimizer state alive at the end, by address; and
        the bytes of each role that were allocated before the window."""
        from .memory_roles import find_roles

        self.memory_roles, self.baseline = find_roles(
            self._module_refs, self.optimizers, self.memory
        )

    # ---- modules ----
    def _start_modules(self) -> None:
        local = threading.local()
        now, ident, peek = time.perf_counter_ns, threading.get_ident, _rf.peek_sequence_nr
        append, path_of = self.modules.append, self._module_path
        cache: dict[tuple[int, int], int] = {}
        ws, capture = self.with_stack, self._stacks.capture
        seen, see = self.native_ids, self._see_thread

        def pre(module, args) -> None:
            st = getattr(local, "stack", None)
            if st is None:
                st = local.stack = []
            parent = st[-1] if st else None
            key = (id(parent[0]) if parent else 0, id(module))
            p = cache.get(key)
            if p is None:
                p = cache[key] = path_of(module, parent)
            stack = capture(1) if ws else -1
            st.append((module, p, now(), peek(), stack))

        def post(module, args, output) -> None:
            st = getattr(local, "stack", None)
            while st:
                entry = st.pop()
                if entry[0] is module:
                    tid = ident()
                    if tid not in seen:
                        see(tid)
                    append((entry[1], entry[2], now(), tid, entry[3], peek(), entry[4]))
                    return

        self._module_hooks = [
            _module.register_module_forward_pre_hook(pre),
            _module.register_module_forward_hook(post, always_call=True),
        ]

    def _module_path(self, module, parent: tuple | None) -> int:
        """Index into `module_paths` of `module` called inside `parent` (an entry of the module
        stack, or None for a root): its attribute path below the root, as `named_modules` names
        it."""
        self._module_refs.append(module)
        kind = type(module).__name__
        if parent is None:
            roots = sum(1 for r, path, _ in self.module_paths if path == "")
            self.module_paths.append((roots, "", kind))
            return len(self.module_paths) - 1
        root, ppath, _ = self.module_paths[parent[1]]
        name = next((n for n, m in parent[0]._modules.items() if m is module), None)
        if name is None:  # called by its parent without being its registered child
            name = kind
        self.module_paths.append((root, f"{ppath}.{name}" if ppath else name, kind))
        return len(self.module_paths) - 1

    # ---- regions ----
    def _make_callbacks(self) -> list[tuple[Callable | None, Callable, tuple | None]]:
        """The (start, end, scopes) RecordFunction callbacks to register: with default options
        one lean end callback per scope, else one detailed pair for every scope (a start only
        with stacks)."""
        self._lean = not (self.record_shapes or self.with_stack or self.with_flops)
        if self._lean and HAS_KERNEL_NS:
            return [(None, self._lean_end(scope), (scope,)) for scope in RecordScope]
        self._lean = False
        start, end = self._detailed_callbacks()
        return [(start, end, None)]

    def _lean_end(self, scope: RecordScope) -> Callable:
        """The end callback of `scope`'s regions under default options: it runs for every op,
        so it does the least: no scope lookup (the kind is the callback's own), one slot read
        per field, a thread check only off the recording thread, one `extend`."""
        extend, seen, see = self._flat.extend, self.native_ids, self._see_thread
        kind = int(scope)
        # the thread that starts recording (registered now), compared first: a dict lookup of a
        # thread ident costs more than a comparison, and nearly every region runs there
        here = threading.get_ident()
        if here not in seen:
            see(here)
        if scope is _FUNCTION or scope is RecordScope.FALLBACK:
            copy_extra = self._copy_extra

            def end_op(rf, _state) -> None:
                tid = rf.thread_id
                if tid != here and tid not in seen:
                    see(tid)
                name = rf.name
                # an op's fwd_thread_id is its own thread (the core sets both alike); copies
                # get their devices and bytes
                extend(
                    (
                        name,
                        kind,
                        rf.start_ns,
                        rf.end_ns,
                        tid,
                        rf.seq_nr,
                        copy_extra(rf) if name in COPY_OPS else -1,
                        rf.kernel_ns,
                    )
                )

            return end_op

        def end_region(rf, _state) -> None:
            tid = rf.thread_id
            if tid != here and tid not in seen:
                see(tid)
            extend(
                (
                    rf.name,
                    kind,
                    rf.start_ns,
                    rf.end_ns,
                    tid,
                    rf.seq_nr,
                    rf.fwd_thread_id,
                    rf.kernel_ns,
                )
            )

        return end_region

    def _detailed_callbacks(self) -> tuple[Callable | None, Callable]:
        """(start, end) callbacks of every region with shapes, stacks or FLOPs: start only with
        stacks."""
        extend = self._flat.extend
        rs, ws, wf = self.record_shapes, self.with_stack, self.with_flops
        seen, see = self.native_ids, self._see_thread
        copy_extra, scope_int = self._copy_extra, _SCOPE_INT
        input_ids: dict[tuple, int] = {}
        inputs, capture = self.inputs, self._stacks.capture
        open_stacks: dict[int, int] = {}  # id(open region) -> its user stack
        pop, get = open_stacks.pop, open_stacks.get
        last_pass: list = [None, -1]  # (backward pass number, its nodes' stack)
        # the core's frames between this callback and the region's caller: skipped unwalked
        core_frames = getattr(_rf, "CALLBACK_CORE_FRAMES", {})

        def start(rf) -> int:
            # taken when the region opens, so that the ops it runs (which run no user code
            # between it and them) take its stack instead of walking the frames again
            p = rf.parent
            if p is not None and (
                p.scope is _FUNCTION or p.scope is _BACKWARD or p.name.startswith(_SHARED_SCOPES)
            ):
                s = get(id(p), -1)
                if s >= 0:
                    open_stacks[id(rf)] = s
                    return s
            n = None
            if rf.scope is _BACKWARD:
                # the nodes of one backward pass share the user's stack outside the engine
                n = rf.extra.get("pass") if rf.extra else None
                if n is not None and n == last_pass[0]:
                    s = open_stacks[id(rf)] = last_pass[1]
                    return s
            s = open_stacks[id(rf)] = capture(1 + core_frames.get(rf.scope, 0))
            if n is not None:
                last_pass[:] = n, s
            return s

        def end_detailed(rf, s) -> None:
            tid = rf.thread_id
            if tid not in seen:
                see(tid)
            i = -1
            if rs:
                meta = inputs_meta(rf.args, rf.kwargs)
                i = input_ids.get(meta, -1)
                if i < 0:
                    i = input_ids[meta] = len(inputs)
                    inputs.append(meta)
            fl = op_flops(rf) if wf and rf.scope is _FUNCTION else 0
            if s is None:  # no stacks, or a region opened before the window (no start seen)
                s = -1
            else:
                pop(id(rf), None)
            k = rf.kernel_ns if HAS_KERNEL_NS else -1
            name = rf.name
            extend(
                (
                    name,
                    scope_int[rf.scope],
                    rf.start_ns,
                    rf.end_ns,
                    tid,
                    rf.seq_nr,
                    rf.fwd_thread_id,
                    i,
                    fl,
                    s,
                    copy_extra(rf) if name in COPY_OPS else -1,
                    k,
                )
            )

        return (start if ws else None), end_detailed

    def _copy_extra(self, rf) -> int:
        """{"copy": "cpu -> cuda", "bytes": n} of a copy op whose source and destination
        devices differ; -1 for a copy within one device."""
        args, out = rf.args, rf.outputs
        if rf.name == "aten::copy_" and len(args) >= 2:
            dst, src = args[0], args[1]
        else:
            dst, src = out, args[0] if args else None
        sd, dd = getattr(src, "_device", None), getattr(dst, "_device", None)
        if sd is None or dd is None or sd.type == dd.type:
            return -1
        nbytes = math.prod(dst._shape) * dst._dtype.itemsize
        return self.add_extra({"copy": f"{sd.type} -> {dd.type}", "bytes": int(nbytes)})


_OP_KINDS = (int(RecordScope.FUNCTION), int(RecordScope.FALLBACK))


def _records(flat: list, n: int):
    """The records of a flat list of fields, `n` fields each (tuples, in order)."""
    return zip(*[iter(flat)] * n)


def _lean_records(flat: list) -> list[tuple]:
    """The region records of the lean layout's flat list (LEAN_LEN fields each)."""
    out: list[tuple] = []
    add, op_kinds = out.append, _OP_KINDS
    for name, kind, start, end, tid, seq, x, k in _records(flat, LEAN_LEN):
        if kind in op_kinds:
            add((name, kind, start, end, tid, seq, tid, -1, 0, -1, x, k))
        else:
            add((name, kind, start, end, tid, seq, x, -1, 0, -1, -1, k))
    return out


def _distributed_info() -> dict[str, Any]:
    """Rank and world size: from coretorch.distributed when a process group is up, else from
    the launcher's environment (RANK, WORLD_SIZE), else a single process."""
    import os
    import sys

    dist = sys.modules.get("coretorch.distributed")
    try:
        if dist is not None and dist.is_initialized():
            return {
                "backend": str(dist.get_backend()),
                "rank": int(dist.get_rank()),
                "world_size": int(dist.get_world_size()),
            }
    except Exception:  # noqa: BLE001  (a half-built process group: fall back to the env)
        pass
    rank, world = os.environ.get("RANK", "0"), os.environ.get("WORLD_SIZE", "1")
    return {
        "backend": None,
        "rank": int(rank) if rank.isdigit() else 0,
        "world_size": int(world) if world.isdigit() else 1,
    }


def _allocated_now() -> dict[str, int]:
    out: dict[str, Any] = {}
    for name, entry in device_types().items():
        alloc = getattr(entry.allocator, "allocated", None)
        if isinstance(alloc, int):
            out[name] = alloc
    return out
