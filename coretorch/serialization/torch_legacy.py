"""PyTorch's legacy checkpoint format (``torch.save(..., _use_new_zipfile_serialization=False)``,
and every file from PyTorch before 1.6): reading only.

The file is a run of pickles (magic number, protocol version, system info, the object, the list
of storage keys) followed by each storage's element count and bytes. The object's tensors are
built over empty storages first and filled once the keys are read; a storage the object uses but
the file never fills is an error, so no uninitialized memory is ever returned.
"""

from __future__ import annotations

import struct
from typing import Any

from ..ops.factories_public import from_numpy
from ..tensor.tensor import Tensor
from .context import LoadContext
from .errors import corrupt
from .storages import empty_base
from .stored_types import StoredType, core_dtype, to_core_array
from .torch_globals import StorageRef, StorageType
from .unpickle import storage_pid, unpickle

__all__ = ["load_torch_legacy", "MAGIC_NUMBER"]

MAGIC_NUMBER = 0x1950A86A20F9469CFC6C
PROTOCOL_VERSION = 1001


def load_torch_legacy(ctx: LoadContext) -> Any:
    """Load a checkpoint in PyTorch's legacy (pre-1.6, non-zip) torch.save format.

    Raises:
        CheckpointError: when the magic number, protocol version or a storage record is wrong.
    """
    src = ctx.src
    cur = src.cursor(0)

    def header_pickle(what: str) -> Any:
        def no_storage(pid: Any) -> Any:
            raise corrupt(src.name, f"a storage reference inside the {what}")

        return unpickle(ctx, cur, no_storage)

    if header_pickle("magic number") != MAGIC_NUMBER:
        raise corrupt(src.name, "invalid magic number: not a PyTorch checkpoint")
    if header_pickle("protocol version") != PROTOCOL_VERSION:
        raise corrupt(src.name, "unknown PyTorch legacy protocol version")
    sys_info = header_pickle("system info")
    big_endian = isinstance(sys_info, dict) and sys_info.get("little_endian") is False
    roots: dict[str, StorageRef] = {}
    fills: dict[str, tuple[Tensor, StoredType]] = {}

    def load_base(ref: StorageRef, stored: StoredType) -> Tensor:
        def make() -> Tensor:
            if stored is not ref.stype.stored:
                raise corrupt(src.name, f"storage {ref.key!r} used with two dtypes")
            src.check_span(0, ref.nbytes, f"storage {ref.key!r}")  # it must fit in the file
            dtype = core_dtype(stored, src.name)
            if ctx.placement.skips_data(ref.location):
                return empty_base(dtype, ref.numel, "meta")
            base = ctx.placement.place(empty_base(dtype, ref.numel, "cpu"), ref.location)
            fills[ref.key] = (base, stored)  # filled below, before anything is returned
            return base

        return ctx.cache.get((ref.key, stored.name), make)

    def persistent_load(pid: Any) -> Any:
        if (
            not ctx.weights_only
            and isinstance(pid, tuple)
            and pid
            and pid[0] in ("module", b"module")
        ):
            return pid[1]  # a pickled module class (its source check is PyTorch's, skipped)
        stype, key, loc, numel, view = storage_pid(pid, src.name, 5)
        if (
            not isinstance(stype, StorageType)
            or stype.untyped
            or not isinstance(key, str)
            or not isinstance(loc, str)
            or type(numel) is not int
            or numel < 0
        ):
            raise corrupt(src.name, f"bad storage reference {pid!r:.80}")
        root = roots.get(key)
        if root is None:
            root = roots[key] = StorageRef(key, stype, numel, loc, load_base)
        elif root.stype is not stype or root.numel != numel:
            raise corrupt(src.name, f"storage {key!r} is described two different ways")
        if view is None:
            return root
        if not (
            isinstance(view, tuple)
            and len(view) == 3
            and all(type(v) is int and v >= 0 for v in view[1:])
        ):
            raise corrupt(src.name, f"bad storage view {view!r:.80}")
        _, offset, size = view
        return StorageRef(key, stype, numel, loc, load_base, start=offset, length=size)

    result = unpickle(ctx, cur, persistent_load)
    keys = header_pickle("storage key list")
    if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
        raise corrupt(src.name, "the storage key list is not a list of strings")
    pos = cur.tell()
    for key in keys:
        ref = roots.get(key)
        if ref is None:
            raise corrupt(src.name, f"storage {key!r} has data but nothing uses it")
        (count,) = struct.unpack(
            ">q" if big_endian else "<q", src.read(pos, 8, f"size of storage {key!r}")
        )
        pos += 8
        if count != ref.numel:
            raise corrupt(
                src.name, f"storage {key!r} holds {count} elements, the pickle says {ref.numel}"
            )
        filling = fills.pop(key, None)
        if filling is None:
            src.check_span(pos, ref.nbytes, f"storage {key!r}")
        else:
            base, stored = filling
            raw = src.read_array(pos, stored.raw, count, f"storage {key!r}")
            base.copy_(from_numpy(to_core_array(raw, stored, src.name, ctx.notes, big_endian)))
        pos += ref.nbytes
    if fills:
        raise corrupt(
            src.name, f"storages {sorted(fills)[:5]} are used but the file holds no data for them"
        )
    return result
