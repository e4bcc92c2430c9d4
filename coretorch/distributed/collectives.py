"""Collectives on tensors, in place (mirrors ``torch.distributed``'s functions).

Each call checks its arguments, picks the group's backend for the tensor's device, hands it
contiguous tensors (a non-contiguous one is packed once and copied back on completion) and
either waits (inside a ``c10d::<name>`` RecordFunction, so traces show communication beside
compute) or returns the `Work` when ``async_op=True``. With the debug level at DETAIL the ranks
first compare what each is about to run (`checks.check_same`)."""

from __future__ import annotations

from typing import Sequence

from .. import record_function as _rf
from ..autograd import no_grad
from ..tensor.tensor import Tensor
from . import checks
from .process_group import ProcessGroup, _resolve
from .reduce_op import ReduceOp
from .work import Work

__all__ = [
    "all_reduce",
    "broadcast",
    "reduce",
    "all_gather",
    "all_gather_into_tensor",
    "reduce_scatter",
    "reduce_scatter_tensor",
    "gather",
    "scatter",
    "all_to_all_single",
    "send",
    "recv",
    "isend",
    "irecv",
    "barrier",
]


class _Call:
    """One collective on its way: its group, backend, RecordFunction and debug record."""

    __slots__ = ("name", "pg", "backend", "rf")

    def __init__(
        self, name: str, pg: ProcessGroup, device_type: str, tensors: Sequence, extra: dict | None
    ):
        self.name, self.pg = name, pg
        self.backend = pg._backend_for(device_type, name)
        pg._seq += 1
        self.rf = None
        if _rf.state.active:
            rf = _rf.RecordFunction(
                f"c10d::{name}", _rf.RecordScope.USER_SCOPE, args=tuple(tensors)
            )
            if rf.active:
                nbytes = sum(t.numel() * t.element_size() for t in tensors)
                rf.note(
                    "collective",
                    {
                        "name": name,
                        "bytes": nbytes,
                        "dtype": tensors[0].dtype.name if tensors else "",
                        "group_size": pg.size(),
                        "seq": pg._seq,
                        "backend": self.backend.name,
                        **(extra or {}),
                    },
                )
                self.rf = rf
                rf.__enter__()

    def run(self, work: Work, async_op: bool) -> Work | None:
        """Return `work` for ``async_op``; else wait for it inside the RecordFunction."""
        try:
            if not async_op:
                work.wait()
        finally:
            if self.rf is not None:
                self.rf.__exit__(None, None, None)
        return work if async_op else None

    def abandon(self) -> None:
        if self.rf is not None:
            self.rf.__exit__(None, None, None)


def _start(name: str, group, tensor: Tensor | None, tensors: Sequence, extra=None):
    pg = _resolve(group)
    if pg is None:
        return None
    dev = tensor.device.type if tensor is not None else next(iter(pg._backends))
    return _Call(name, pg, dev, tensors, extra)


def _packed(t: Tensor) -> Tensor:
    return t if t.is_contiguous() else t.contiguous()


def _copy_back(work: Work, dst: Tensor, buf: Tensor) -> None:
    """After completion, make `dst` hold `buf`'s values (and count it as changed in place)."""
    if buf is dst:
        work._then(dst._bump_version)
    else:

        def copy():
            with no_grad():
                dst.copy_(buf)

        work._then(copy)


def _average(work: Work, buf: Tensor, n: int) -> None:
    def divide():
        with no_grad():
            buf.div_(n)

    work._then(divide)


def _issue(call: _Call, fn, *args) -> Work:
    """Run the backend's starter; close the RecordFunction if it raises."""
    try:
        return fn(*args)
    except BaseException:
        call.abandon()
        raise


def _into(
    call: _Call, output: Tensor, start, args: tuple, async_op: bool, op: ReduceOp | None = None
) -> Work | None:
    """Run ``start(out, *args)`` into `output` (packed if need be); AVG divides; on completion
    the values land in `output`."""
    out = _packed(output)
    work = _issue(call, start, out, *args)
    work._outputs = [output]
    if op is ReduceOp.AVG:
        _average(work, out, call.pg.size())
    _copy_back(work, output, out)
    return call.run(work, async_op)


def _wire_op(op: ReduceOp) -> ReduceOp:
    return ReduceOp.SUM if op is ReduceOp.AVG else op


def all_reduce(
    tensor: Tensor,
    op: ReduceOp = ReduceOp.SUM,
    group: ProcessGroup | None = None,
    async_op: bool = False,
    _extra: dict | None = None,
) -> Work | None:
    """Reduce `tensor` across the group with `op`; every rank ends with the result."""
    checks.tensor("all_reduce", "tensor", tensor)
    checks.reduce_op("all_reduce", op, tensor)
    call = _start("all_reduce", group, tensor, [tensor], _extra)
    if call is None:
        return None
    checks.check_same(call, tensor, op=op)
    buf = _packed(tensor)
    work = _issue(call, call.backend.allreduce, buf, _wire_op(op))
    work._outputs = [tensor]
    if op is ReduceOp.AVG:
        _average(work, buf, call.pg.size())
    _copy_back(work, tensor, buf)
    return call.run(work, async_op)


def broadcast(
    tensor: Tensor,
    src: int | None = None,
    group: ProcessGroup | None = None,
    async_op: bool = False,
    group_src: int | None = None,
) -> Work | None:
    """Copy `tensor` from rank `src` (a global rank; `group_src` for a group rank) to all."""
    checks.tensor("broadcast", "tensor", tensor)
    call = _start("broadcast", group, tensor, [tensor])
    if call is None:
        return None
    root = checks.root(call, src, group_src, "src")
    checks.check_same(call, tensor, root=root)
    buf = _packed(tensor)
    work = _issue(call, call.backend.broadcast, buf, root)
    work._outputs = [tensor]
    _copy_back(work, tensor, buf)
    return call.run(work, async_op)


def reduce(
    tensor: Tensor,
    dst: int | None = None,
    op: ReduceOp = ReduceOp.SUM,
    group: ProcessGroup | None = None,
    async_op: bool = False,
    group_dst: int | None = None,
) -> Work | None:
    """Reduce `tensor` across the group into rank `dst`'s `tensor` (others keep theirs)."""
    checks.tensor("reduce", "tensor", tensor)
    checks.reduce_op("reduce", op, tensor)
    call = _start("reduce", group, tensor, [tensor])
    if call is None:
        return None
    root = checks.root(call, dst, group_dst, "dst")
    checks.check_same(call, tensor, root=root, op=op)
    buf = _packed(tensor)
    work = _issue(call, call.backend.reduce, buf, root, _wire_op(op))
    work._outputs = [tensor]
    if call.pg.rank() == root:
        if op is ReduceOp.AVG:
            _average(work, buf, call.pg.size())
        _copy_back(work, tensor, buf)
    return call.run(work, async_op)


def all_gather_into_tensor(
    output_tensor: Tensor,
    input_tensor: Tensor,
    group: ProcessGroup | None = None,
    async_op: bool = False,
) -> Work | None:
    """Gather every rank's `input_tensor` into `output_tensor`, rank after rank (its size is
    group size × the input's: concatenated along dim 0, or stacked)."""
    checks.tensor("all_gather_into_tensor", "output_tensor", output_tensor)
    checks.tensor("all_gather_into_tensor", "input_tensor", input_tensor)
    call = _start("all_gather_into_tensor", group, input_tensor, [input_tensor])
    if call is None:
        return None
    checks.blocks(call, output_tensor, input_tensor, "output_tensor", "input_tensor")
    checks.check_same(call, input_tensor)
    return _into(call, output_tensor, call.backend.allgather, (_packed(input_tensor),), async_op)


def all_gather(
    tensor_list: list[Tensor],
    tensor: Tensor,
    group: ProcessGroup | None = None,
    async_op: bool = False,
) -> Work | None:
    """Gather every rank's `tensor` into `tensor_list` (one tensor per rank, rank order)."""
    checks.tensor("all_gather", "tensor", tensor)
    call = _start("all_gather", group, tensor, [tensor])
    if call is None:
        return None
    checks.tensor_list(call, "tensor_list", tensor_list, tensor)
    checks.check_same(call, tensor)
    out = checks.stacked_buffer(tensor, call.pg.size())
    work = _issue(call, call.backend.allgather, out, _packed(tensor))
    work._outputs = list(tensor_list)
    work._then(lambda: _unstack(out, tensor_list))
    return call.run(work, async_op)


def _unstack(buf: Tensor, tensors: Sequence[Tensor]) -> None:
    with no_grad():
        for i, t in enumerate(tensors):
            t.copy_(buf[i])


def _stack_into(buf: Tensor, tensors: Sequence[Tensor]) -> Tensor:
    with no_grad():
        for i, t in enumerate(tensors):
            buf[i].copy_(t)
    return buf


def reduce_scatter_tensor(
    output: Tensor,
    input: Tensor,
    op: ReduceOp = ReduceOp.SUM,  # noqa: A002
    group: ProcessGroup | None = None,
    async_op: bool = False,
) -> Work | None:
    """Reduce `input` (group size blocks, concatenated or stacked) across the group; rank r
    receives the reduced block r in `output`."""
    checks.tensor("reduce_scatter_tensor", "output", output)
    checks.tensor("reduce_scatter_tensor", "input", input)
    checks.reduce_op("reduce_scatter_tensor", op, input)
    call = _start("reduce_scatter_tensor", group, input, [input])
    if call is None:
        return None
    checks.blocks(call, input, output, "input", "output")
    checks.check_same(call, input, op=op)
    return _into(
        call, output, call.backend.reduce_scatter, (_packed(input), _wire_op(op)), async_op, op
    )


def reduce_scatter(
    output: Tensor,
    input_list: list[Tensor],
    op: ReduceOp = ReduceOp.SUM,
    group: ProcessGroup | None = None,
    async_op: bool = False,
) -> Work | None:
    """Reduce the ranks' `input_list`s element-wise; rank r receives entry r in `output`."""
    checks.tensor("reduce_scatter", "output", output)
    pg = _resolve(group)
    if pg is None:
        return None
    checks.tensor_list_for(pg, "reduce_scatter", "input_list", input_list, output)
    packed = _stack_into(checks.stacked_buffer(output, pg.size()), input_list)
    return reduce_scatter_tensor(output, packed, op, group, async_op)


def _rooted(name: str, tensor: Tensor, lst, list_name: str, rank, group_rank, what: str, group):
    """The start of gather/scatter: (call, root, whether this rank is the root), or None."""
    checks.tensor(name, "tensor", tensor)
    call = _start(name, group, tensor, [tensor])
    if call is None:
        return None
    root = checks.root(call, 0 if rank is None and group_rank is None else rank, group_rank, what)
    is_root = call.pg.rank() == root
    checks.root_list(call, list_name, lst, tensor, is_root)
    checks.check_same(call, tensor, root=root)
    return call, root, is_root


def gather(
    tensor: Tensor,
    gather_list: list[Tensor] | None = None,
    dst: int | None = None,
    group: ProcessGroup | None = None,
    async_op: bool = False,
    group_dst: int | None = None,
) -> Work | None:
    """Gather every rank's `tensor` into `gather_list` on rank `dst` (None elsewhere)."""
    started = _rooted("gather", tensor, gather_list, "gather_list", dst, group_dst, "dst", group)
    if started is None:
        return None
    call, root, is_root = started
    out = checks.stacked_buffer(tensor, call.pg.size()) if is_root else None
    work = _issue(call, call.backend.gather, out, _packed(tensor), root)
    if is_root:
        assert out is not None and gather_list is not None  # the root's, checked by _rooted
        outputs = gather_list
        work._outputs = list(outputs)
        work._then(lambda: _unstack(out, outputs))
    return call.run(work, async_op)


def scatter(
    tensor: Tensor,
    scatter_list: list[Tensor] | None = None,
    src: int | None = None,
    group: ProcessGroup | None = None,
    async_op: bool = False,
    group_src: int | None = None,
) -> Work | None:
    """Send entry r of `scatter_list` (on rank `src`) to rank r's `tensor`."""
    started = _rooted("scatter", tensor, scatter_list, "scatter_list", src, group_src, "src", group)
    if started is None:
        return None
    call, root, is_root = started
    packed = (
        _stack_into(checks.stacked_buffer(tensor, call.pg.size()), scatter_list)
        if is_root and scatter_list is not None
        else None
    )
    buf = _packed(tensor)
    work = _issue(call, call.backend.scatter, buf, packed, root)
    work._outputs = [tensor]
    _copy_back(work, tensor, buf)
    return call.run(work, async_op)


def all_to_all_single(
    output: Tensor,
    input: Tensor,
    output_split_sizes=None,  # noqa: A002
    input_split_sizes=None,
    group: ProcessGroup | None = None,
    async_op: bool = False,
) -> Work | None:
    """Split `input` into group size equal blocks along dim 0; block r goes to rank r, and
    `output`'s block r comes from rank r."""
    checks.tensor("all_to_all_single", "output", output)
    checks.tensor("all_to_all_single", "input", input)
    if output_split_sizes is not None or input_split_sizes is not None:
        raise NotImplementedError(
            "all_to_all_single(): uneven split sizes are not implemented; pass equal-sized blocks"
        )
    call = _start("all_to_all_single", group, input, [input])
    if call is None:
        return None
    checks.same_numel(call, output, input)
    checks.blocks(call, input, None, "input", None)
    checks.check_same(call, input)
    return _into(call, output, call.backend.alltoall, (_packed(input),), async_op)


def barrier(
    group: ProcessGroup | None = None, async_op: bool = False, device_ids=None
) -> Work | None:
    """Block until every rank of the group has reached the barrier."""
    call = _start("barrier", group, None, [])
    if call is None:
        return None
    return call.run(_issue(call, call.backend.barrier), async_op)


def _p2p(name: str, tensor: Tensor, rank, group_rank, group, tag, receiving: bool):
    checks.tensor(f"i{name}", "tensor", tensor)
    call = _start(name, group, tensor, [tensor])
    if call is None:
        return None
    what = "src" if receiving else "dst"
    any_source = receiving and rank is None and group_rank is None
    peer = None if any_source else checks.peer(call, rank, group_rank, what)
    buf = _packed(tensor)
    start = call.backend.recv if receiving else call.backend.send
    work = _issue(call, start, buf, peer, checks.tag(call, tag))
    if receiving:
        work._outputs = [tensor]
        _copy_back(work, tensor, buf)
        pg = call.pg
        work.source_rank = lambda: pg._ranks[work._source]  # the sender's global rank
    return call.run(work, True)


def isend(
    tensor: Tensor,
    dst: int | None = None,
    group: ProcessGroup | None = None,
    tag: int = 0,
    group_dst: int | None = None,
) -> Work | None:
    """Start sending `tensor` to rank `dst`; returns a Work."""
    return _p2p("send", tensor, dst, group_dst, group, tag, False)


def irecv(
    tensor: Tensor,
    src: int | None = None,
    group: ProcessGroup | None = None,
    tag: int = 0,
    group_src: int | None = None,
) -> Work | None:
    """Start receiving into `tensor` from rank `src` (None: any rank); returns a Work whose
    ``source_rank()`` is the sender once it completed."""
    return _p2p("recv", tensor, src, group_src, group, tag, True)


def send(
    tensor: Tensor,
    dst: int | None = None,
    group: ProcessGroup | None = None,
    tag: int = 0,
    group_dst: int | None = None,
) -> None:
    """Send `tensor` to rank `dst` and wait until it may be reused."""
    work = isend(tensor, dst, group, tag, group_dst)
    if work is not None:
        work.wait()


def recv(
    tensor: Tensor,
    src: int | None = None,
    group: ProcessGroup | None = None,
    tag: int = 0,
    group_src: int | None = None,
) -> int:
    """Receive into `tensor` from rank `src` (None: any rank); returns the sender's rank."""
    work = irecv(tensor, src, group, tag, group_src)
    if work is None:
        return -1
    work.wait()
    return work.source_rank()
