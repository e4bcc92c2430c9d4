"""The static memory plan of a captured program: intermediate buffers share one arena per device.

An **intermediate** is a storage the step allocated that only the program's own steps use: an
activation, a tensor saved for backward, a gradient flowing through the graph. Its live range runs
from the first step that touches it to the last. Intermediates whose ranges do not overlap may
hold the same bytes: the plan places them largest first, each at the lowest 64-byte aligned
offset free of every placed buffer live at the same time (first fit), and puts the arena's slices
under their storages (`Storage._replace_buffer`; the captured buffers go back to their
allocator). A variant then keeps one arena per device, not a step's worth of separate buffers.

A buffer stays out of the plan when anything but the program's steps may read it after a step:
the inputs, the outputs, parameters, buffers, gradients and optimizer state (`Program.escaping`),
and any other holder, found as references to its tensors or its storage that the steps do not
account for (`sys.getrefcount`): a module attribute the step assigned, an autograd graph still
alive, a view kept elsewhere. Only buffers that are numpy or CuPy arrays are planned (slicing one
gives a view of its bytes); meta tensors have none.
"""

from __future__ import annotations

import sys
from typing import Any

from ..device import _registry as _device_registry
from ..tensor.storage import Storage
from ..tensor.tensor import Tensor
from .ir import Program

__all__ = ["ALIGN", "plan_memory", "place"]

ALIGN = 64

_getrefcount = sys.getrefcount


def place(sizes: list[int], ranges: list[tuple[int, int]]) -> tuple[list[int], int]:
    """First-fit offsets for buffers of `sizes` bytes live over the step `ranges` (inclusive):
    two buffers whose ranges overlap never share a byte. Returns (offsets, arena size)."""
    order = sorted(range(len(sizes)), key=lambda i: (-sizes[i], ranges[i][0]))
    offsets = [0] * len(sizes)
    placed: list[int] = []
    total = 0
    for i in order:
        lo, hi = ranges[i]
        busy = sorted(
            (offsets[j], offsets[j] + sizes[j])
            for j in placed
            if ranges[j][0] <= hi and lo <= ranges[j][1]
        )
        off = 0
        for start, end in busy:
            if off + sizes[i] <= start:
                break
            off = max(off, -(-end // ALIGN) * ALIGN)
        offsets[i] = off
        placed.append(i)
        total = max(total, off + sizes[i])
    return offsets, total


def _live_ranges(program: Program) -> tuple[dict[int, list[int]], dict[int, int], dict]:
    """Per storage id the [first, last] step touching it; references the steps hold per tensor
    (one per place in their arguments and written tuples, in lists and tuples at any depth);
    the tensors seen (views' bases included)."""
    ranges: dict[int, list[int]] = {}
    refs: dict[int, int] = {}
    known: dict[int, Tensor] = {}
    for i, s in enumerate(program.steps):
        todo: list = [s.args, s.written]
        while todo:  # a loop, not a recursive call per argument: a capture plans once
            for a in todo.pop():
                if isinstance(a, Tensor):
                    k = id(a)
                    refs[k] = refs.get(k, 0) + 1
                    known[k] = a
                    r = ranges.get(id(a._storage))
                    if r is None:
                        ranges[id(a._storage)] = [i, i]
                    else:
                        r[1] = i
                elif isinstance(a, (tuple, list)):
                    todo.append(a)
    for t in list(known.values()):
        b = t._base
        if b is not None:  # a view holds its base
            refs[id(b)] = refs.get(id(b), 0) + 1
            known.setdefault(id(b), b)
    return ranges, refs, known


def _sliceable(data: Any) -> bool:
    """Whether slicing the buffer gives a view of its bytes (numpy and CuPy arrays do). Asked
    of its type: on an array the interface is a property that builds a dict at each read."""
    kind = type(data)
    return hasattr(kind, "__array_interface__") or hasattr(kind, "__cuda_array_interface__")


def _by_storage(known: dict[int, Tensor]) -> dict[int, list[Tensor]]:
    on: dict[int, list[Tensor]] = {}
    for t in known.values():
        on.setdefault(id(t._storage), []).append(t)
    return on


def _intermediates(program: Program, allocated: set[int]) -> list[tuple[Storage, list, tuple]]:
    """The intermediates (see the module docstring): (storage, its tensors, live range)."""
    ranges, refs, known = _live_ranges(program)
    escaping = program.escaping()
    out = []
    for sid, tensors in _by_storage(known).items():
        if sid not in allocated or sid in escaping or sid not in ranges:
            continue
        st = tensors[0]._storage
        if not st.nbytes or not _sliceable(st.data):
            continue
        # each tensor is held by the steps, `known`, `tensors`, the generator and getrefcount
        if any(_getrefcount(t) - 4 != refs.get(id(t), 0) for t in tensors):
            continue
        # the storage by its tensors, `st` and getrefcount
        if _getrefcount(st) - 2 != len(tensors):
            continue
        out.append((st, tensors, tuple(ranges[sid])))
    return out


def plan_memory(program: Program, allocated: set[int]) -> Program:
    """Put the intermediates of `program` (storages whose ids are in `allocated`, the ones the
    step made) into one shared arena per device; adds a note saying what it saved."""
    by_device: dict[Any, list[tuple[Storage, list, tuple]]] = {}
    for item in _intermediates(program, allocated):
        by_device.setdefault(item[0].device, []).append(item)
    for device, items in by_device.items():
        sizes = [st.nbytes for st, _, _ in items]
        offsets, total = place(sizes, [r for _, _, r in items])
        allocator = _device_registry[device.type].allocator
        arena = allocator.allocate(total, device)
        for (st, tensors, _), off in zip(items, offsets):
            st._replace_buffer(arena.data[off : off + st.nbytes], arena.address + off)
            for t in tensors:
                t._cache = None  # the backend's view of the old buffer
        program.arenas.append(arena)
        program.notes.append(
            f"memory plan: {len(items)} intermediate buffers ({sum(sizes)} bytes) share "
            f"{total} bytes on {device}"
        )
    return program
