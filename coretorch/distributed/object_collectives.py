"""Collectives on Python objects, built on the tensor collectives.

Objects travel encoded by `object_codec` (JSON plus raw tensor/array/bytes data, never pickle),
so receiving an object never runs code chosen by the sender. The supported types are listed in
`object_codec.SUPPORTED`; anything else raises TypeError on the sending rank."""

from __future__ import annotations

from typing import Any

import numpy as np

from . import collectives as C
from .object_codec import decode, encode
from .process_group import ProcessGroup, _resolve

__all__ = ["broadcast_object_list", "all_gather_object", "gather_object", "scatter_object_list"]


def _device(pg: ProcessGroup, device) -> str:
    if device is not None:
        return str(device)
    return "cpu" if "cpu" in pg._backends else next(iter(pg._backends))


def _bytes_tensor(raw: bytes, size: int, device: str):
    import coretorch

    arr = np.zeros(size, dtype=np.uint8)
    arr[: len(raw)] = np.frombuffer(raw, dtype=np.uint8)
    return coretorch.from_numpy(arr).to(device)


def _int64(values, device: str):
    import coretorch

    return coretorch.tensor(list(values), dtype=coretorch.int64, device=device)


def _raw(t, n: int) -> bytes:
    return t[:n].numpy(force=True).tobytes()


def _root(pg: ProcessGroup, rank: int | None, group_rank: int | None, what: str, fn: str) -> int:
    """The group rank of the root: `group_rank`, else global `rank` (default 0) translated."""
    if group_rank is not None:
        return group_rank
    return pg._group_rank(0 if rank is None else rank, what, fn)


def _check_list(fn: str, name: str, lst, n: int | None) -> None:
    if not isinstance(lst, list) or (n is not None and len(lst) != n):
        want = f"a list of {n} entries (the group size)" if n is not None else "a list"
        got = f"{len(lst)} entries" if isinstance(lst, list) else type(lst).__name__
        raise ValueError(f"{fn}(): {name} must be {want}, got {got}")


def broadcast_object_list(
    object_list: list,
    src: int | None = None,
    group: ProcessGroup | None = None,
    device=None,
    group_src: int | None = None,
) -> None:
    """Replace `object_list`'s entries on every rank with rank `src`'s (same length)."""
    _check_list("broadcast_object_list", "object_list", object_list, None)
    pg = _resolve(group)
    if pg is None:
        return
    dev = _device(pg, device)
    root = _root(pg, src, group_src, "src", "broadcast_object_list")
    is_src = root == pg.rank()
    blobs = [encode(o, "broadcast_object_list") for o in object_list] if is_src else []
    sizes = _int64([len(b) for b in blobs] if is_src else [0] * len(object_list), dev)
    C.broadcast(sizes, group=group, group_src=root)
    lengths = sizes.tolist()
    data = _bytes_tensor(b"".join(blobs), sum(lengths), dev)
    C.broadcast(data, group=group, group_src=root)
    if not is_src:
        raw, start = _raw(data, sum(lengths)), 0
        for i, n in enumerate(lengths):
            object_list[i] = decode(raw[start : start + n], "broadcast_object_list")
            start += n


def _all_gather_blobs(pg: ProcessGroup, blob: bytes, group, dev: str) -> list[bytes]:
    n = pg.size()
    sizes = _int64([0] * n, dev)
    C.all_gather_into_tensor(sizes, _int64([len(blob)], dev), group)
    lengths = sizes.tolist()
    width = max(lengths)
    out = _bytes_tensor(b"", n * width, dev)
    C.all_gather_into_tensor(out, _bytes_tensor(blob, width, dev), group)
    raw = _raw(out, n * width)
    return [raw[i * width : i * width + lengths[i]] for i in range(n)]


def all_gather_object(object_list: list, obj: Any, group: ProcessGroup | None = None) -> None:
    """Fill `object_list` (group size entries) with every rank's `obj`, in rank order."""
    pg = _resolve(group)
    if pg is None:
        return
    _check_list("all_gather_object", "object_list", object_list, pg.size())
    blobs = _all_gather_blobs(pg, encode(obj, "all_gather_object"), group, _device(pg, None))
    for i, b in enumerate(blobs):
        object_list[i] = decode(b, "all_gather_object")


def gather_object(
    obj: Any,
    object_gather_list: list | None = None,
    dst: int | None = None,
    group: ProcessGroup | None = None,
    group_dst: int | None = None,
) -> None:
    """Fill `object_gather_list` on rank `dst` with every rank's `obj`, in rank order."""
    pg = _resolve(group)
    if pg is None:
        return
    root = _root(pg, dst, group_dst, "dst", "gather_object")
    if pg.rank() == root:
        _check_list("gather_object", "object_gather_list", object_gather_list, pg.size())
    blobs = _all_gather_blobs(pg, encode(obj, "gather_object"), group, _device(pg, None))
    if pg.rank() == root:
        assert object_gather_list is not None  # the root's, checked above
        for i, b in enumerate(blobs):
            object_gather_list[i] = decode(b, "gather_object")


def scatter_object_list(
    scatter_object_output_list: list,
    scatter_object_input_list=None,
    src: int | None = None,
    group: ProcessGroup | None = None,
    group_src: int | None = None,
) -> None:
    """Rank r receives entry r of rank `src`'s `scatter_object_input_list` into
    ``scatter_object_output_list[0]``."""
    _check_list(
        "scatter_object_list", "scatter_object_output_list", scatter_object_output_list, None
    )
    if not scatter_object_output_list:
        raise ValueError(
            "scatter_object_list(): scatter_object_output_list must have at least one entry"
        )
    pg = _resolve(group)
    if pg is None:
        return
    root = _root(pg, src, group_src, "src", "scatter_object_list")
    dev = _device(pg, None)
    blobs = []
    if pg.rank() == root:
        _check_list(
            "scatter_object_list", "scatter_object_input_list", scatter_object_input_list, pg.size()
        )
        blobs = [encode(o, "scatter_object_list") for o in scatter_object_input_list]
    sizes = _int64([len(b) for b in blobs] if blobs else [0] * pg.size(), dev)
    C.broadcast(sizes, group=group, group_src=root)
    lengths = sizes.tolist()
    width = max(lengths)
    mine = _bytes_tensor(b"", width, dev)
    parts = [_bytes_tensor(b, width, dev) for b in blobs] if blobs else None
    C.scatter(mine, parts, group=group, group_src=root)
    scatter_object_output_list[0] = decode(_raw(mine, lengths[pg.rank()]), "scatter_object_list")
