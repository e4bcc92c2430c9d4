"""Argument checks of the collectives, and the DETAIL-mode comparison across ranks."""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from ..dtypes import all_dtypes, int64
from ..tensor.tensor import Tensor
from . import debug
from .errors import DistError
from .reduce_op import ReduceOp

if TYPE_CHECKING:
    from .collectives import _Call
    from .process_group import ProcessGroup

_OPS = (
    "all_reduce",
    "broadcast",
    "reduce",
    "all_gather_into_tensor",
    "all_gather",
    "reduce_scatter_tensor",
    "gather",
    "scatter",
    "all_to_all_single",
)
_REDUCE_OPS = list(ReduceOp)
_MAX_DIMS = 8
_FIELDS = 7  # op, seq, dtype, root, reduce op, ndim, numel; then the dims


def tensor(fn: str, name: str, t) -> None:
    """Check that argument `name` of `fn` is a coretorch Tensor.

    Raises:
        TypeError: when it is not.
    """
    if not isinstance(t, Tensor):
        raise TypeError(f"{fn}(): {name} must be a coretorch.Tensor, got {type(t).__name__}")


def reduce_op(fn: str, op, t: Tensor) -> None:
    """Check that `op` is a ReduceOp usable on `t`'s dtype.

    Raises:
        TypeError: when `op` is not a ReduceOp.
        ValueError: for AVG on a non-float tensor or a bitwise op on a float tensor.
    """
    if not isinstance(op, ReduceOp):
        raise TypeError(f"{fn}(): op must be a ReduceOp (ReduceOp.SUM, ...), got {op!r}")
    if op is ReduceOp.AVG and not t.dtype.is_floating_point:
        raise ValueError(f"{fn}(): ReduceOp.AVG needs a floating-point tensor, got {t.dtype}")
    if op in (ReduceOp.BAND, ReduceOp.BOR, ReduceOp.BXOR) and t.dtype.is_floating_point:
        raise ValueError(
            f"{fn}(): ReduceOp.{op.name} needs an integer or bool tensor, got {t.dtype}"
        )


def root(call: "_Call", rank: int | None, group_rank: int | None, what: str) -> int:
    """The group rank of a collective's root, from a global `rank` or a `group_rank`."""
    pg = call.pg
    if rank is not None and group_rank is not None:
        raise ValueError(f"{call.name}(): pass {what} or group_{what}, not both")
    if group_rank is not None:
        if not isinstance(group_rank, int) or not 0 <= group_rank < pg.size():
            raise ValueError(
                f"{call.name}(): group_{what} must be in [0, {pg.size()}), got {group_rank!r}"
            )
        return group_rank
    if rank is None:
        raise ValueError(f"{call.name}(): {what} (a rank) is required")
    return pg._group_rank(rank, what, call.name)


def peer(call: "_Call", rank: int | None, group_rank: int | None, what: str) -> int:
    """The group rank of a point-to-point peer, from a global or group rank.

    Raises:
        ValueError: when both or neither are given, it is out of range, or it is this rank.
    """
    r = root(call, rank, group_rank, what)
    if r == call.pg.rank():
        raise ValueError(f"{call.name}(): {what} must be another rank than this one ({rank})")
    return r


def tag(call: "_Call", t) -> int:
    """`t` checked as a message tag.

    Raises:
        ValueError: when it is not a non-negative int.
    """
    if not isinstance(t, int) or t < 0:
        raise ValueError(f"{call.name}(): tag must be a non-negative int, got {t!r}")
    return t


def blocks(
    call: "_Call", whole: Tensor, part: Tensor | None, whole_name: str, part_name: str | None
) -> None:
    """`whole` holds group size blocks of `part` (same dtype and device)."""
    n = call.pg.size()
    if part is None:
        if whole.numel() % n:
            raise ValueError(
                f"{call.name}(): {whole_name} has {whole.numel()} elements, not "
                f"divisible by the group size {n}"
            )
        return
    if whole.dtype != part.dtype or whole.device != part.device:
        raise TypeError(
            f"{call.name}(): {whole_name} and {part_name} must have the same dtype "
            f"and device, got {whole.dtype} on {whole.device} and {part.dtype} on "
            f"{part.device}"
        )
    if whole.numel() != n * part.numel():
        raise ValueError(
            f"{call.name}(): {whole_name} must have group size ({n}) × "
            f"{part.numel()} = {n * part.numel()} elements ({part_name} has "
            f"{part.numel()}), got {whole.numel()}"
        )


def same_numel(call: "_Call", a: Tensor, b: Tensor) -> None:
    """Check that output `a` and input `b` have the same number of elements and dtype.

    Raises:
        ValueError: when they differ.
    """
    if a.numel() != b.numel() or a.dtype != b.dtype:
        raise ValueError(
            f"{call.name}(): output and input must have the same size and dtype, "
            f"got {list(a.shape)} {a.dtype} and {list(b.shape)} {b.dtype}"
        )


def tensor_list_for(pg: "ProcessGroup", fn: str, name: str, tensors, like: Tensor) -> None:
    """Check that `tensors` is a list of group-size tensors all like `like`.

    Raises:
        ValueError: for a wrong length, or an entry of another shape, dtype or device.
        TypeError: for an entry that is not a Tensor.
    """
    if not isinstance(tensors, (list, tuple)) or len(tensors) != pg.size():
        got = (
            f"{len(tensors)} entries"
            if isinstance(tensors, (list, tuple))
            else type(tensors).__name__
        )
        raise ValueError(
            f"{fn}(): {name} must be a list of {pg.size()} tensors (the group size), got {got}"
        )
    for i, t in enumerate(tensors):
        tensor(fn, f"{name}[{i}]", t)
        if t.shape != like.shape or t.dtype != like.dtype or t.device != like.device:
            raise ValueError(
                f"{fn}(): {name}[{i}] must match the tensor's shape, dtype and "
                f"device ({list(like.shape)}, {like.dtype}, {like.device}), got "
                f"{list(t.shape)}, {t.dtype}, {t.device}"
            )


def tensor_list(call: "_Call", name: str, tensors, like: Tensor) -> None:
    """`tensor_list_for` on the call's process group (same checks and errors)."""
    tensor_list_for(call.pg, call.name, name, tensors, like)


def root_list(call: "_Call", name: str, tensors, like: Tensor, is_root: bool) -> None:
    """A list on the root; None (or empty) elsewhere."""
    if is_root:
        tensor_list(call, name, tensors, like)
    elif tensors:
        raise ValueError(
            f"{call.name}(): {name} must be None on ranks other than the root "
            f"(this is rank {call.pg.rank()} of the group)"
        )


def stacked_buffer(like: Tensor, n: int) -> Tensor:
    """A contiguous (n, *like.shape) tensor to pack n tensors like `like` into."""
    import coretorch

    return coretorch.empty((n, *like.shape), dtype=like.dtype, device=like.device)


def check_same(call: "_Call", t: Tensor, root: int = -1, op: ReduceOp | None = None) -> None:
    """At debug level DETAIL, compare (operation, sequence number, dtype, shape, root, reduce
    op) across the group before communicating; raise on every rank if any differs."""
    if debug.get_debug_level() < debug.DebugLevel.DETAIL:
        return
    from coretorch import tensor as make

    mine = _record(call, t, root, op)
    width = len(mine)
    be, n = call.backend, call.pg.size()
    out = stacked_buffer(make(mine, dtype=int64, device=t.device), n)
    be.allgather(out, make(mine, dtype=int64, device=t.device)).wait()
    rows = [tuple(r) for r in out.reshape(n, width).tolist()]
    if all(r == rows[0] for r in rows):
        return
    described = ", ".join(
        f"rank {call.pg._ranks[i]} runs {_describe(r)}" for i, r in enumerate(rows)
    )
    raise DistError(
        f"{call.name}(): detected mismatch between collectives on ranks (debug "
        f"level DETAIL): {described}"
    )


def _record(call: "_Call", t: Tensor, root: int, op: ReduceOp | None) -> list[int]:
    dims = list(t.shape)[:_MAX_DIMS]
    return (
        [
            _OPS.index(call.name),
            call.pg._seq,
            all_dtypes.index(t.dtype),
            root,
            -1 if op is None else _REDUCE_OPS.index(op),
            t.dim(),
            t.numel(),
        ]
        + dims
        + [-1] * (_MAX_DIMS - len(dims))
    )


def _describe(r: Sequence[int]) -> str:
    name, seq, dt, root_, op, ndim = _OPS[r[0]], r[1], all_dtypes[r[2]], r[3], r[4], r[5]
    shape = list(r[_FIELDS : _FIELDS + min(ndim, _MAX_DIMS)])
    parts = [f"{dt.name} {shape}"]
    if root_ >= 0:
        parts.append(f"root={root_}")
    if op >= 0:
        parts.append(f"op={_REDUCE_OPS[op].name}")
    return f"{name} #{seq}({', '.join(parts)})"
