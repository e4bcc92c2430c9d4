"""`Backend`: what a process-group backend plugin implements for the device types it serves.

The core hands a backend contiguous tensors on its device and group-local ranks; packing,
copying results back, AVG, argument checks, RecordFunction scopes and the debug-mode comparison
across ranks all happen once in the core. Every method starts the operation and returns a `Work`
(which the core waits on at once unless the caller asked for ``async_op=True``)."""

from __future__ import annotations

from typing import Sequence

from .reduce_op import ReduceOp
from .work import Work

__all__ = ["Backend"]


class Backend:
    """Base class of a communication library bound to one group of processes.

    `rank`/`size` are this process's rank in the group and the group's size. `ReduceOp.AVG`
    never reaches a backend (the core sums, then divides)."""

    name = "backend"

    def __init__(self, rank: int, size: int, timeout: float):
        self._rank, self._size, self.timeout = rank, size, timeout

    def rank(self) -> int:
        """This process's rank in the group."""
        return self._rank

    def size(self) -> int:
        """The number of processes in the group."""
        return self._size

    def _missing(self, what: str):
        return NotImplementedError(
            f"{what}() is not implemented by the '{self.name}' process-group backend"
        )

    # ---- collectives (ranks are group-local; tensors contiguous) ----
    def allreduce(self, tensor, op: ReduceOp) -> Work:
        """Reduce `tensor` with `op` across the group, in place on every rank.

        Raises:
            NotImplementedError: when the backend does not implement it.
        """
        raise self._missing("all_reduce")

    def broadcast(self, tensor, root: int) -> Work:
        """Copy `tensor` from group rank `root` into every rank's `tensor`.

        Raises:
            NotImplementedError: when the backend does not implement it.
        """
        raise self._missing("broadcast")

    def reduce(self, tensor, root: int, op: ReduceOp) -> Work:
        """Reduce `tensor` with `op` into group rank `root`'s tensor.

        Raises:
            NotImplementedError: when the backend does not implement it.
        """
        raise self._missing("reduce")

    def allgather(self, output, input) -> Work:  # noqa: A002
        """`output` holds ``size`` blocks of ``input.numel()`` elements, rank order."""
        raise self._missing("all_gather")

    def reduce_scatter(self, output, input, op: ReduceOp) -> Work:  # noqa: A002
        """`input` holds ``size`` blocks of ``output.numel()`` elements; block r goes to rank r."""
        raise self._missing("reduce_scatter")

    def gather(self, output, input, root: int) -> Work:  # noqa: A002
        """Like `allgather` into `output` on `root` only (None elsewhere)."""
        raise self._missing("gather")

    def scatter(self, output, input, root: int) -> Work:  # noqa: A002
        """Block r of `input` (on `root`; None elsewhere) goes to rank r's `output`."""
        raise self._missing("scatter")

    def alltoall(self, output, input) -> Work:  # noqa: A002
        """Block r of `input` goes to rank r; block r of `output` comes from rank r."""
        raise self._missing("all_to_all_single")

    def send(self, tensor, dst: int, tag: int) -> Work:
        """Send `tensor` to group rank `dst` with message tag `tag`.

        Raises:
            NotImplementedError: when the backend does not implement it.
        """
        raise self._missing("send")

    def recv(self, tensor, src: int | None, tag: int) -> Work:
        """Receive from `src` (None: any rank); the Work's ``_source`` is the sender."""
        raise self._missing("recv")

    def barrier(self) -> Work:
        """Wait until every rank of the group reaches the barrier.

        Raises:
            NotImplementedError: when the backend does not implement it.
        """
        raise self._missing("barrier")

    # ---- groups ----
    def split(self, ranks: Sequence[int]) -> "Backend | None":
        """A backend for the sub-group of these (group-local) ranks, or None on a rank outside
        it. Called by every rank of this group, in the same order."""
        raise self._missing("new_group")

    def shutdown(self) -> None:
        """Release the communication resources."""
