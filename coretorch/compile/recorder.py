"""The recorder: runs a step eagerly while noting every backend kernel call it makes.

The dispatcher reports each kernel call to `record_function.state.capture` (structured kernels
from `record_function.timed_kernel`, list-writing kernels from `dispatch.operator`); calls it
cannot replay (a kernel that allocates its own result, the CPU fallback) and every read or write
of tensor values on the host (``item``, ``tolist``, printing, ``numpy``, tensors made from Python
data) end the capture: a **graph break**. A replay that skipped such work would be a silently
wrong result, so nothing is ever dropped: the step finishes eagerly and the break is reported
(or raised, with ``fullgraph=True``).

While capturing, the allocators of every device are watched too: a buffer allocated during the
step that a kernel reads before any recorded kernel wrote it was filled by some other path, which
also breaks the capture (`Capture.check_sources`).
"""

from __future__ import annotations

import linecache
import os
import sys
from collections.abc import Callable
from threading import get_ident
from types import CodeType, FrameType
from typing import Any

from .. import record_function as _rf
from ..device import device_types
from ..dispatch.operator import get_operator
from ..frames import first_user_frame, is_internal
from ..tensor.tensor import Tensor
from .ir import Step, _tensors

__all__ = ["Capture", "GraphBreak", "Site", "user_frame_site", "user_site"]


class GraphBreak(RuntimeError):
    """Raised by a function compiled with ``fullgraph=True`` at the first thing that cannot be
    captured: names the op and the user's source line."""

    def __init__(self, what: str, why: str, site: str):
        self.what, self.why, self.site = what, why, site
        super().__init__(f"coretorch.compile: graph break in {what}: {why} (at {site})")


# (id(code), line) -> (code, the site's text). Keyed by id, as `frames.is_internal` is, for the
# same reason (the entry holds its code object)
_texts: dict[tuple[int, int], tuple[CodeType, str]] = {}


class Site:
    """A line of the user's code that issued a call: ``str(site)`` is ``"file.py:12: source"``,
    read from the file when first asked (a capture notes one per kernel; reading the user's
    files then cost ~0.25 ms of a first capture, for text only `explain` and errors show)."""

    __slots__ = ("code", "line")

    def __init__(self, code: CodeType | None, line: int):
        self.code, self.line = code, line

    def __str__(self) -> str:
        code = self.code
        if code is None:
            return "<unknown>"
        hit = _texts.get((id(code), self.line))
        if hit is None:
            text = _describe_site(code.co_filename, self.line)
            hit = _texts[id(code), self.line] = (code, text)
        return hit[1]

    __repr__ = __str__


def user_frame_site(skip: int = 0) -> Site:
    """The innermost line of the user's code (outside coretorch) on the stack. The `skip`
    frames above the caller's are coretorch's by construction: `sys._getframe` passes them
    without making frame objects for them (making one costs ~3k instructions, and a capture
    asks once per kernel, through ~15 frames)."""
    f = first_user_frame(sys._getframe(1 + skip))
    return Site(None, 0) if f is None else Site(f.f_code, f.f_lineno)


def user_site() -> str:
    """``"file.py:12: source"`` of the innermost line of the user's code on the stack."""
    return str(user_frame_site(1))


def _describe_site(name: str, lineno: int) -> str:
    path = name
    try:
        rel = os.path.relpath(name)
        name = rel if not rel.startswith("..") else name
    except ValueError:
        pass
    line = linecache.getline(path, lineno).strip()
    return f"{name}:{lineno}: {line}" if line else f"{name}:{lineno}"


_HOST_READS = frozenset(
    {
        "item",
        "tolist",
        "numpy",
        "__bool__",
        "__float__",
        "__int__",
        "__index__",
        "__repr__",
        "__str__",
        "__format__",
        "__array__",
    }
)


def _user_api() -> str:
    """The coretorch function the user's code called (the frame just inside coretorch), with the
    host read it made when that is another function: ``"step() (through item())"``."""
    f: FrameType | None = sys._getframe(1)
    names: list[str] = []
    while f is not None and is_internal(f):
        names.append(f.f_code.co_name)
        f = f.f_back
    if not names:
        return "?()"
    outer = names[-1]
    inner = next((n for n in reversed(names) if n in _HOST_READS), outer)
    return f"{outer}()" if inner == outer else f"{outer}() (through {inner}())"


class _WatchedAllocator:
    """An allocator that remembers the storages it hands out (only while capturing)."""

    def __init__(self, inner, seen: list):
        self._inner, self._seen = inner, seen

    def allocate(self, nbytes: int, device):
        s = self._inner.allocate(nbytes, device)
        self._seen.append(s)
        return s

    def __getattr__(self, name: str):
        return getattr(self._inner, name)


class Capture:
    """One recording: install with `start`, run the step, `stop` (always, in a finally)."""

    def __init__(self, fullgraph: bool):
        self.fullgraph = fullgraph
        self.steps: list[Step] = []
        self.breaks: list[tuple[str, str, str]] = []  # (what, why, site)
        self.depth = 0  # >0 inside a recorded kernel: what it does itself is part of it
        self.thread = get_ident()
        self.allocated: list = []
        self.versions: dict[int, tuple[list, int]] = {}  # id(vc) -> (vc, version first seen)
        self.inputs: dict[int, tuple[int, Tensor]] = {}  # id(storage) -> (index, input buffer)
        # (input index, predicate on its host array, value seen, what the choice is, host read)
        self.value_guards: list[tuple[int, Callable, Any, str, Callable]] = []
        self._host_reads: dict[str, Callable] = {}  # device type -> its unhooked read_numpy
        self._patched: list[tuple[Any, str, Any]] = []
        self._handle: int | None = None
        self.ran_backward = False  # the step ran autograd's backward (its result may have a graph)
        # (op, site) per step, once the steps are released
        self._listing: list[tuple[str, str | Site]] | None = None

    # ---- the hooks the dispatcher calls -------------------------------------------------------
    def run(self, kernel: Callable, args: tuple, out_first: bool):
        """Record ``kernel(*args)`` and run it."""
        if self.depth or self.breaks or get_ident() != self.thread:
            return kernel(*args)
        stack = _rf.open_regions()
        op = stack[-1].name if stack else getattr(kernel, "__name__", "kernel")
        tensors = [t for a in args for t in _tensors(a)]
        versions = self.versions
        for t in tensors:
            vc = t._vc
            if id(vc) not in versions:
                versions[id(vc)] = (vc, vc[0])
        # this frame and its caller (`timed_kernel`, or the dispatcher's wrapper of a kernel that
        # writes its list arguments) are coretorch's
        site = user_frame_site(2)
        written = self._written(op, args, out_first)
        self.steps.append(Step(kernel, args, op, out_first, site, written))
        self.depth += 1
        try:
            return kernel(*args)
        finally:
            self.depth -= 1

    @staticmethod
    def _written(op: str, args: tuple, out_first: bool) -> tuple:
        if out_first:
            return tuple(_tensors(args[0]))
        schema = get_operator(op).schema
        return tuple(t for a, v in zip(schema.arguments, args) if a.is_mutable for t in _tensors(v))

    def unreplayable(self, op: str, why: str) -> None:
        """A call the replay could not repeat ran: the capture ends here."""
        if self.depth or get_ident() != self.thread:
            return
        stack = _rf.open_regions()
        outer = stack[0].name.split("::")[-1] if stack else op
        self.graph_break(f"{outer}()" if outer == op else f"{outer}() (through {op})", why)

    def value_guard(self, t: Tensor, predicate: Callable[[Any], Any], what: str) -> Any:
        """A data-dependent choice in library code, ``predicate(host array of t)``: when `t`
        is an input of the step that no kernel has written yet, the value is computed, kept as
        a guard (a replay checks it on the new input first) and returned; otherwise None (the
        caller then takes its form that is right for any data)."""
        found = self.inputs.get(id(t._storage))
        if (
            found is None
            or self.depth
            or any(id(w._storage) == id(t._storage) for s in self.steps for w in s.written)
        ):
            return None
        index, slot = found
        if (t._shape, t._stride, t._offset, t._dtype) != (
            slot._shape,
            slot._stride,
            slot._offset,
            slot._dtype,
        ):
            return None  # a view of an input: the replay checks whole inputs only
        read = self._host_reads[t._device.type]
        value = predicate(read(t))
        self.value_guards.append((index, predicate, value, what, read))
        return value

    def graph_break(self, what: str, why: str, site: str | Site | None = None) -> None:
        """End the capture: raise with ``fullgraph=True``, else note why (once)."""
        site = str(site) if site else user_site()
        if self.fullgraph:
            raise GraphBreak(what, why, site)
        if not self.breaks:
            self.breaks.append((what, why, site))

    def _host_access(self, fn: Callable, why: str) -> Callable:
        def hooked(*a, **k):
            if not self.depth and get_ident() == self.thread:
                stack = _rf.open_regions()
                what = f"{stack[0].name.split('::')[-1]}()" if stack else _user_api()
                self.graph_break(what, why)
            return fn(*a, **k)

        return hooked

    # ---- install / remove ---------------------------------------------------------------------
    def start(self) -> None:
        """Become the capture in progress (one thread, one capture at a time)."""
        if _rf.state.capture is not None:
            raise RuntimeError("coretorch.compile: a capture is already in progress")
        for entry in device_types().values():
            self._patch(entry, "allocator", _WatchedAllocator(entry.allocator, self.allocated))
            for name, why in (
                ("read_numpy", "it reads tensor values on the host"),
                ("write_numpy", "it writes host data into a tensor"),
                ("wrap_numpy", "it makes a tensor from host data"),
            ):
                fn = getattr(entry, name)
                if name == "read_numpy" and fn is not None:
                    self._host_reads[entry.name] = fn
                if fn is not None:
                    self._patch(entry, name, self._host_access(fn, why))
        # a thread-local observer turns the dispatcher's observed path on (kernels then run
        # through `timed_kernel`, where the capture sees them)
        self._handle = _rf.add_thread_local_callback(
            self._saw_region,
            None,
            scopes=(_rf.RecordScope.FUNCTION, _rf.RecordScope.BACKWARD_FUNCTION),
        )
        _rf.state.capture = self

    def _saw_region(self, rf) -> None:
        if rf.scope is _rf.RecordScope.BACKWARD_FUNCTION:
            self.ran_backward = True

    def _patch(self, obj, name: str, value) -> None:
        self._patched.append((obj, name, getattr(obj, name)))
        setattr(obj, name, value)

    def stop(self) -> None:
        """Remove every hook `start` installed."""
        if _rf.state.capture is self:
            _rf.state.capture = None
        if self._handle is not None:
            _rf.remove_callback(self._handle)
            self._handle = None
        for obj, name, old in reversed(self._patched):
            setattr(obj, name, old)
        self._patched = []

    # ---- after the step ----------------------------------------------------------------------
    def allocated_ids(self) -> set[int]:
        """ids of the storages allocated while capturing (call once, after `stop`)."""
        ids = {id(s) for s in self.allocated}
        self.allocated = []
        return ids

    def listing(self) -> list[tuple[str, str]]:
        """(op, user's line) of each captured kernel call (what `explain` prints)."""
        if self._listing is not None:
            return [(op, str(site)) for op, site in self._listing]
        return [(s.op, str(s.site)) for s in self.steps]

    def release_steps(self) -> None:
        """Hand the steps over to the program: keep only their `listing` (the buffers the steps
        hold then live and die with the program, and its memory plan sees who else holds them)."""
        self._listing = [(s.op, s.site) for s in self.steps]
        self.steps = []

    def check_sources(self, allocated: set[int], inputs: set[int]) -> None:
        """Break if a kernel read a buffer allocated during the step that no earlier recorded
        kernel wrote (its values came from a path the replay would not repeat)."""
        written: set[int] = set(inputs)
        for s in self.steps:
            args = s.args
            for t in s.reads:
                sid = id(t._storage)
                if (
                    sid in allocated
                    and sid not in written
                    and not (s.out_first and len(args) > 1 and t is args[1] and args[1] is args[0])
                ):
                    self.graph_break(
                        f"{s.op.split('::')[-1]}()",
                        "it reads a tensor whose values were not made by a recorded kernel",
                        s.site,
                    )
                    return
            for t in s.written:
                written.add(id(t._storage))
