"""RecordFunction: start/end callbacks around every dispatched op, backward node and user scope.

The dispatcher checks one flag (`state.active`) per call; only when a callback is registered does
it build a `RecordFunction`. Observers (the profiler, the anomaly detector) register callbacks
here and never patch the core.
"""

from __future__ import annotations

import enum
import functools
import threading
import time
from threading import get_ident as _get_ident
from typing import Any, Callable, Sequence

from .tensor.impl import TensorImpl as _Impl

__all__ = [
    "RecordScope",
    "RecordFunction",
    "add_global_callback",
    "add_thread_local_callback",
    "remove_callback",
    "record_function",
    "peek_sequence_nr",
    "next_sequence_nr",
    "inputs_meta",
    "plain_shapes",
    "add_kernel_time",
    "call_op",
    "call_backward",
    "timed_kernel",
    "CALLBACK_CORE_FRAMES",
    "open_regions",
]

_SCALARS = (int, float, bool)


class RecordScope(enum.IntEnum):
    """What a recorded region is: an operator, an autograd node, a user scope or a backend
    fallback."""

    FUNCTION = 0  # a dispatched operator
    BACKWARD_FUNCTION = 1  # an autograd node run by the engine
    USER_SCOPE = 2  # record_function("name")
    FALLBACK = 3  # an op run through a backend's CPU fallback


_now = time.perf_counter_ns
_new = object.__new__


class _State:
    active = False  # any callback registered anywhere: the dispatcher's one flag check
    # the capture in progress (`coretorch.compile`): while set, every backend kernel call runs
    # through ``capture.run(kernel, args, out_first)`` and every call it cannot replay is
    # reported to ``capture.unreplayable(op, why)``; only ever set while `active` is on
    capture: Any = None
    # observers that must see every op run (the anomaly detector): compiled functions run eagerly
    force_eager = 0


state = _State()


class _Callback:
    __slots__ = ("start", "end", "scopes", "handle")

    def __init__(self, start, end, scopes, handle):
        self.start, self.end, self.scopes, self.handle = start, end, scopes, handle


_FUNCTION = RecordScope.FUNCTION
_BACKWARD = RecordScope.BACKWARD_FUNCTION
# Frames of the core that lie, at least, between a start callback and the code that ran the
# region, by scope: an op's (`_observe`, `call_op`, the op's entry point) and a node's
# (`_observe`, `call_backward`, the engine's `_call`). An observer walking the user's stack from
# a callback may skip them unwalked (`sys._getframe(n)`): Python then never builds frame
# objects for them.
CALLBACK_CORE_FRAMES = {RecordScope.FUNCTION: 3, RecordScope.BACKWARD_FUNCTION: 3}
_global: list[_Callback] = []
_global_by_scope: dict[RecordScope, tuple[_Callback, ...]] = {s: () for s in RecordScope}
_thread_local_count = 0
_lock = threading.Lock()
_next_handle = 1


class _Thread:
    """What a thread records with: its ident, the next autograd sequence number, the stack of
    its open regions and its thread-local callbacks. One slotted object, read once per region
    from the thread-local: an attribute of a threading.local costs ~0.6k instructions a read,
    a slot ~0.1k, and `get_ident()` ~0.4k."""

    __slots__ = ("ident", "seq_nr", "stack", "callbacks", "by_scope")

    def __init__(self) -> None:
        self.ident = _get_ident()
        self.seq_nr = 0
        self.stack: list[RecordFunction] = []
        self.callbacks: list[_Callback] = []
        # this thread's callbacks per scope, rebuilt when they change (a region reads one)
        self.by_scope: dict[RecordScope, tuple[_Callback, ...]] = {}

    def callbacks_changed(self) -> None:
        """Rebuild `by_scope` (call after changing `callbacks`)."""
        mine = self.callbacks
        self.by_scope = {s: tuple(c for c in mine if s in c.scopes) for s in RecordScope}


class _Local(threading.local):
    def __init__(self) -> None:
        self.t = _Thread()


_local = _Local()


def open_regions() -> list["RecordFunction"]:
    """This thread's open regions, outermost first (the list itself: do not modify it)."""
    return _local.t.stack


def peek_sequence_nr() -> int:
    """The sequence number the next autograd node created in this thread will get."""
    return _local.t.seq_nr


def next_sequence_nr() -> int:
    """Take a sequence number for a new autograd node."""
    t = _local.t
    n = t.seq_nr
    t.seq_nr = n + 1
    return n


class RecordFunction:
    """One recorded region. Callbacks read its fields; `state` of each start callback is kept.

    `args` are the op's argument record (schema order, defaults filled; `kwargs` is None or
    holds only ``out=``); for a backward node, the engine's own list of incoming gradients (a
    copy would hold a second reference and stop AccumulateGrad from taking a gradient over).
    `outputs` is set before the end callbacks run; `parent` is the enclosing region of the same
    thread, set when the region starts. `kernel_ns` is the time spent inside the op's own
    backend kernel (nested ops excluded), -1 when the op ran no kernel of its own (a composite):
    the op's time minus it is the framework's overhead. `extra` is None or a dict of what
    observers and the engine attach (`note`): the backward node ("node") and its backward pass's
    number ("pass"), a collective's size ("collective")."""

    __slots__ = (
        "name",
        "scope",
        "args",
        "kwargs",
        "seq_nr",
        "outputs",
        "thread_id",
        "start_ns",
        "end_ns",
        "parent",
        "_cbs",
        "_states",
        "fwd_thread_id",
        "extra",
        "kernel_ns",
    )

    def __init__(
        self,
        name: str,
        scope: RecordScope,
        args: Sequence = (),
        kwargs: dict | None = None,
        seq_nr: int = -1,
        callbacks: tuple | None = None,
    ):
        self.name, self.scope, self.args, self.kwargs = name, scope, args, kwargs
        self.seq_nr = seq_nr
        self.outputs: Any = None
        self.parent: RecordFunction | None = None
        self.extra: dict | None = None
        self._states: list | None = None
        self.thread_id = self.fwd_thread_id = _get_ident()
        self.start_ns = self.end_ns = 0
        self.kernel_ns = -1
        self._cbs = _callbacks_for(scope) if callbacks is None else callbacks

    def note(self, key: str, value: Any) -> None:
        """Attach `value` under `key` in `extra` (made on first use)."""
        if self.extra is None:
            self.extra = {}
        self.extra[key] = value

    @property
    def active(self) -> bool:
        """Whether any callback observes this region."""
        return bool(self._cbs)

    def inputs(self) -> list:
        """Positional then keyword arguments, as given to the op."""
        return list(self.args) + list((self.kwargs or {}).values())

    def input_shapes(self) -> list[list[int]]:
        """Shape of each tensor input (lists of tensors give a list of shapes); [] for others."""
        return plain_shapes(inputs_meta(self.args, self.kwargs)[0])

    def input_dtypes(self) -> list[str]:
        """Dtype name of each tensor input; "TensorList", "Scalar" or "" for others."""
        return list(inputs_meta(self.args, self.kwargs)[1])

    def __enter__(self) -> "RecordFunction":
        _begin(self)
        return self

    def __exit__(self, *exc) -> None:
        _end(self)


# _begin/_end are plain functions, not methods, so that call_op (every dispatched op while any
# observer is on) can call them without a method lookup
def _begin(r: RecordFunction) -> None:
    stack = _local.t.stack
    r.parent = stack[-1] if stack else None
    r.start_ns = _now()
    cbs = r._cbs
    for cb in cbs:
        if cb.start is not None:  # the states list exists only when some callback has a start
            r._states = [c.start(r) if c.start is not None else None for c in cbs]
            break
    stack.append(r)  # after the start callbacks: one that raises leaves nothing to undo


def _end(r: RecordFunction) -> None:
    r.end_ns = _now()
    # an end callback may raise (the anomaly detector does): the others still run, the stack
    # stays balanced, and the first error propagates to the op's caller
    err = None
    states = r._states
    i = 0
    for cb in r._cbs:
        end = cb.end
        if end is not None:
            try:
                end(r, None if states is None else states[i])
            except BaseException as e:  # noqa: BLE001
                if err is None:
                    err = e
        i += 1
    _local.t.stack.pop()
    if err is not None:
        raise err


def inputs_meta(args: Sequence, kwargs: dict | None) -> tuple[tuple, tuple]:
    """(shapes, dtype names) of an op's inputs, positional then keyword: a tensor gives its shape
    tuple and dtype name, a list of tensors a tuple of shapes and "TensorList", anything else ()
    and "Scalar" (a Python number) or "". Cheap to keep: no reference to a tensor survives, and
    being tuples of ints and strings, the garbage collector stops tracking them."""
    shapes, dtypes = [], []
    for a in args if not kwargs else (*args, *kwargs.values()):
        if isinstance(a, _Impl):
            shapes.append(a._shape)
            dtypes.append(a._dtype.name)
        elif (a.__class__ is list or a.__class__ is tuple) and a and isinstance(a[0], _Impl):
            shapes.append(tuple(t._shape for t in a))
            dtypes.append("TensorList")
        else:
            shapes.append(())
            dtypes.append("Scalar" if isinstance(a, _SCALARS) else "")
    return tuple(shapes), tuple(dtypes)


def plain_shapes(shapes: Sequence | None) -> list:
    """`inputs_meta` shapes as PyTorch prints them: lists, [] for non-tensors."""
    if shapes is None:
        return []
    return [[list(s) for s in x] if x and isinstance(x[0], tuple) else list(x) for x in shapes]


def _callbacks_for(scope: RecordScope) -> tuple[_Callback, ...]:
    cbs = _global_by_scope.get(scope, ())
    if _thread_local_count:
        t = _local.t
        if t.callbacks:
            cbs = cbs + t.by_scope[scope]
    return cbs


def _refresh() -> None:
    global _global_by_scope
    state.active = bool(_global) or _thread_local_count > 0
    # per-scope tuples, rebuilt on (rare) registration, so each recorded region skips the filter
    _global_by_scope = {s: tuple(c for c in _global if s in c.scopes) for s in RecordScope}


def _make(start, end, scopes) -> _Callback:
    global _next_handle
    with _lock:
        handle = _next_handle
        _next_handle += 1
    scopes = frozenset(RecordScope) if scopes is None else frozenset(scopes)
    return _Callback(start, end, scopes, handle)


def add_global_callback(
    start: Callable[[RecordFunction], Any] | None,
    end: Callable[[RecordFunction, Any], None] | None = None,
    scopes=None,
) -> int:
    """Call `start(rf)` before and `end(rf, start_result)` after every recorded region in every
    thread (restricted to `scopes` if given). Returns a handle for `remove_callback`."""
    cb = _make(start, end, scopes)
    with _lock:
        _global.append(cb)
        _refresh()
    return cb.handle


def add_thread_local_callback(start, end=None, scopes=None) -> int:
    """Like `add_global_callback` but only for regions recorded in the calling thread."""
    global _thread_local_count
    cb = _make(start, end, scopes)
    t = _local.t
    with _lock:
        if not t.callbacks:
            _thread_local_count += 1
        t.callbacks.append(cb)
        t.callbacks_changed()
        _refresh()
    return cb.handle


def remove_callback(handle: int) -> None:
    """Remove a callback added by either function (thread-local ones from their own thread)."""
    global _thread_local_count
    t = _local.t
    mine = t.callbacks
    with _lock:
        _global[:] = [c for c in _global if c.handle != handle]
        had = bool(mine)
        mine[:] = [c for c in mine if c.handle != handle]
        t.callbacks_changed()
        if had and not mine:
            _thread_local_count -= 1
        _refresh()


def call_op(name: str, fn: Callable, args: tuple, kwargs: dict | None, autograd: int) -> Any:
    """Run a dispatched op inside a FUNCTION RecordFunction (the dispatcher's slow path). When
    `autograd` is true (the op dispatches through Autograd), the region's sequence number is the
    one the autograd node it creates will take. `kwargs` is None or ``{"out": tensor}``."""
    cbs = _global_by_scope[_FUNCTION] if not _thread_local_count else _callbacks_for(_FUNCTION)
    if not cbs:
        return fn(*args, **kwargs) if kwargs else fn(*args)
    # RecordFunction.__init__ inlined: this runs for every op while anything observes
    r = _new(RecordFunction)
    t = _local.t
    r.name = name
    r.scope = _FUNCTION
    r.args = args
    r.kwargs = kwargs
    r.seq_nr = t.seq_nr if autograd else -1
    r.extra = None
    return _observe(r, cbs, t, fn, args, kwargs)


def call_backward(node: Any, run: Callable, args: tuple, grads: list, pass_nr: int) -> Any:
    """Run autograd node `node` (``run(*args)``) inside a BACKWARD_FUNCTION RecordFunction: the
    engine's path for every node while anything observes. `grads` are its incoming gradients,
    the engine's own list (a copy would hold a second reference and stop AccumulateGrad from
    taking a gradient over). Noted: the node under "node", and under "pass" the number of the
    backward pass running it (unique in the process: the nodes of one ``backward()`` call share
    it, and so the user's stack outside the engine)."""
    cbs = _global_by_scope[_BACKWARD] if not _thread_local_count else _callbacks_for(_BACKWARD)
    if not cbs:
        return run(*args)
    r = _new(RecordFunction)
    r.name = node._name
    r.scope = _BACKWARD
    r.args = grads
    r.kwargs = None
    r.seq_nr = node.seq_nr
    r.extra = {"node": node, "pass": pass_nr}
    return _observe(r, cbs, _local.t, run, args, None)


def _observe(r: RecordFunction, cbs: tuple, t: _Thread, fn: Callable, args: tuple, kwargs):
    """Fill the rest of `r`, run ``fn(*args, **kwargs)`` inside it and return its result: with
    `_begin`/`_end` inlined for the common case of one observer (the profiler, or the anomaly
    detector). Measured (benchmarks/instructions.py method, `a + b` on 4 floats with one no-op
    observer): 49.3k instructions against 55.0k through RecordFunction()/_begin/_end."""
    r._cbs = cbs
    r.outputs = r._states = None
    r.thread_id = r.fwd_thread_id = t.ident
    r.end_ns = 0
    r.kernel_ns = -1
    stack = t.stack
    if len(cbs) != 1:
        _begin(r)
        try:
            r.outputs = fn(*args, **kwargs) if kwargs else fn(*args)
        finally:
            _end(r)
        return r.outputs
    cb = cbs[0]
    r.parent = stack[-1] if stack else None
    r.start_ns = _now()
    state = cb.start(r) if cb.start is not None else None
    stack.append(r)
    try:
        r.outputs = fn(*args, **kwargs) if kwargs else fn(*args)
    finally:
        r.end_ns = _now()
        try:
            if cb.end is not None:
                cb.end(r, state)
        finally:
            stack.pop()
    return r.outputs


def timed_kernel(kernel: Callable, args: tuple) -> Any:
    """Run a backend kernel, ``kernel(*args)``, while an observer records: its time goes to the
    innermost recorded op's `RecordFunction.kernel_ns` (the rest of the op's time is the
    framework's overhead). A capture in progress (`coretorch.compile`) records the call instead:
    ``args[0]`` is what it writes. The arguments come as one tuple: taken and passed on as
    ``*args``, they would be packed into a tuple twice more per op."""
    cap = state.capture
    if cap is not None:
        return cap.run(kernel, args, True)
    t = _now()
    try:
        return kernel(*args)
    finally:
        # add_kernel_time inlined: `a + b` under one no-op observer, 49.4k instructions against
        # 49.8k through the call (counted as in benchmarks/instructions.py)
        t = _now() - t
        stack = _local.t.stack
        if stack:
            r = stack[-1]
            r.kernel_ns = t if r.kernel_ns < 0 else r.kernel_ns + t


def add_kernel_time(ns: int) -> None:
    """Add `ns` to the innermost recorded op of this thread (`RecordFunction.kernel_ns`), for a
    kernel timed outside `timed_kernel` (which does the same for the core's kernel calls)."""
    stack = _local.t.stack
    if stack:
        r = stack[-1]
        r.kernel_ns = ns if r.kernel_ns < 0 else r.kernel_ns + ns


class record_function:
    """Annotate a region of user code: ``with record_function("data"):`` or as a decorator.

    Shows in the profiler as a `user_annotation` slice enclosing the ops it ran.
    """

    def __init__(self, name: str, args: str | None = None):
        self.name, self.args = name, args
        self._rf: RecordFunction | None = None

    def __enter__(self) -> "record_function":
        if state.active:
            self._rf = RecordFunction(self.name, RecordScope.USER_SCOPE)
            if self._rf._cbs:
                self._rf.__enter__()
            else:
                self._rf = None
        return self

    def __exit__(self, *exc) -> None:
        if self._rf is not None:
            self._rf.__exit__(*exc)
            self._rf = None

    def __call__(self, fn: Callable) -> Callable:
        @functools.wraps(fn)
        def wrapper(*a, **k):
            with record_function(self.name, self.args):
                return fn(*a, **k)

        return wrapper
