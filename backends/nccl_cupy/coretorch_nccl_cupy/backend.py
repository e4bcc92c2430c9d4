"""`NCCLBackend`: collectives on cuda tensors through ``cupy.cuda.nccl``.

Each operation is queued on the tensor's current CUDA stream and returns an `NCCLWork` that
records a CUDA event after it; waiting polls the event, and past the group timeout aborts the
communicator and raises `DistBackendError` (the NCCL watchdog's role). Gather, scatter and
all-to-all are grouped point-to-point transfers. Each rank drives the GPU numbered by its local
rank on the node (``MPI_LOCALRANKID``, ``OMPI_COMM_WORLD_LOCAL_RANK`` or ``LOCAL_RANK``).
"""

from __future__ import annotations

import os
import time

from coretorch.distributed.backend import Backend
from coretorch.distributed.errors import DistBackendError
from coretorch.distributed.reduce_op import ReduceOp
from coretorch.distributed.work import Work

_LOCAL_RANK_VARS = ("MPI_LOCALRANKID", "OMPI_COMM_WORLD_LOCAL_RANK", "LOCAL_RANK")
_UNIQUE_ID_BYTES = 128


def _local_rank() -> int:
    for var in _LOCAL_RANK_VARS:
        if os.environ.get(var, "").isdigit():
            return int(os.environ[var])
    return 0


class NCCLWork(Work):
    """A pending NCCL operation: completes when its CUDA event is done; wait() times out with
    DistBackendError and aborts the communicator."""

    def __init__(self, backend: "NCCLBackend", op: str, stream, keep: tuple):
        import cupy

        super().__init__(op)
        self._be, self._keep = backend, keep
        self._event = cupy.cuda.Event(disable_timing=True)
        self._event.record(stream)

    def _test(self) -> bool:
        return self._event.done

    def _wait(self, timeout: float | None) -> None:
        limit = self._be.timeout if timeout is None else timeout
        start = time.monotonic()
        while not self._event.done:
            if time.monotonic() - start > limit:
                self._be.comm.abort()
                raise DistBackendError(
                    f"{self._op} (nccl, group of {self._be.size()} ranks): "
                    f"timed out after {limit:g} s; the communicator was "
                    f"aborted"
                )
            time.sleep(0.0001)
        self._keep = ()


class NCCLBackend(Backend):
    """The process-group backend over NCCL (CuPy) for cuda tensors; one communicator per group."""

    name = "nccl"

    def __init__(self, comm, bootstrap, device: int, timeout: float):
        super().__init__(bootstrap.rank(), bootstrap.size(), timeout)
        import cupy
        from cupy.cuda import nccl

        self.cupy, self.nccl, self.comm, self.bootstrap, self.device = (
            cupy,
            nccl,
            comm,
            bootstrap,
            device,
        )
        self._ops = {
            ReduceOp.SUM: nccl.NCCL_SUM,
            ReduceOp.PRODUCT: nccl.NCCL_PROD,
            ReduceOp.MIN: nccl.NCCL_MIN,
            ReduceOp.MAX: nccl.NCCL_MAX,
        }
        self._types = {
            "float16": nccl.NCCL_FLOAT16,
            "float32": nccl.NCCL_FLOAT32,
            "float64": nccl.NCCL_FLOAT64,
            "int32": nccl.NCCL_INT32,
            "int64": nccl.NCCL_INT64,
            "int8": nccl.NCCL_INT8,
            "uint8": nccl.NCCL_UINT8,
            "bool": nccl.NCCL_UINT8,
        }

    @classmethod
    def create(cls, bootstrap, timeout: float) -> "NCCLBackend":
        """A communicator over `bootstrap`'s ranks; rank 0's unique id goes through it."""
        import cupy
        from cupy.cuda import nccl

        import coretorch

        device = _local_rank() % cupy.cuda.runtime.getDeviceCount()
        cupy.cuda.Device(device).use()
        # the id is 128 signed chars: sent as their unsigned bytes
        sent = (
            [b & 0xFF for b in nccl.get_unique_id()]
            if bootstrap.rank() == 0
            else [0] * _UNIQUE_ID_BYTES
        )
        buf = coretorch.tensor(sent, dtype=coretorch.uint8)
        bootstrap.broadcast(buf, 0).wait()
        uid = tuple(int(b) if b < 128 else int(b) - 256 for b in buf.tolist())
        comm = nccl.NcclCommunicator(bootstrap.size(), uid, bootstrap.rank())
        return cls(comm, bootstrap, device, timeout)

    # ---- arguments, streams, works ----
    def _args(self, t) -> tuple[int, int, int]:
        if t.device.type != "cuda":
            raise TypeError(
                f"the nccl process-group backend serves cuda tensors, got one on {t.device}"
            )
        dt = self._types.get(t.dtype.name)
        if dt is None:
            raise TypeError(f"nccl: dtype {t.dtype} is not supported")
        return t.data_ptr(), t.numel(), dt

    def _op(self, op: ReduceOp) -> int:
        if op not in self._ops:
            raise ValueError(
                f"nccl: ReduceOp.{op.name} is not supported (SUM, PRODUCT, MIN, MAX, AVG are)"
            )
        return self._ops[op]

    def _stream(self, t) -> int:
        import coretorch

        return coretorch.cuda.current_stream(t.device).cuda_stream

    def _work(self, name: str, t, *keep) -> NCCLWork:
        return NCCLWork(self, name, self.cupy.cuda.ExternalStream(self._stream(t)), (t, *keep))

    # ---- collectives ----
    def allreduce(self, tensor, op):
        p, n, dt = self._args(tensor)
        self.comm.allReduce(p, p, n, dt, self._op(op), self._stream(tensor))
        return self._work("all_reduce", tensor)

    def broadcast(self, tensor, root):
        p, n, dt = self._args(tensor)
        self.comm.broadcast(p, p, n, dt, root, self._stream(tensor))
        return self._work("broadcast", tensor)

    def reduce(self, tensor, root, op):
        p, n, dt = self._args(tensor)
        self.comm.reduce(p, p, n, dt, self._op(op), root, self._stream(tensor))
        return self._work("reduce", tensor)

    def allgather(self, output, input):  # noqa: A002
        pi, n, dt = self._args(input)
        self.comm.allGather(pi, self._args(output)[0], n, dt, self._stream(input))
        return self._work("all_gather", output, input)

    def reduce_scatter(self, output, input, op):  # noqa: A002
        po, n, dt = self._args(output)
        self.comm.reduceScatter(self._args(input)[0], po, n, dt, self._op(op), self._stream(output))
        return self._work("reduce_scatter", output, input)

    def _grouped(self, name: str, t, transfers, *keep) -> NCCLWork:
        """Point-to-point transfers ``(send?, ptr, count, dtype, peer)`` as one NCCL group."""
        s = self._stream(t)
        self.nccl.groupStart()
        try:
            for is_send, ptr, count, dt, peer in transfers:
                (self.comm.send if is_send else self.comm.recv)(ptr, count, dt, peer, s)
        finally:
            self.nccl.groupEnd()
        return self._work(name, t, *keep)

    def _blocks(self, whole, part) -> list[tuple[int, int, int]]:
        base, _, dt = self._args(whole)
        n = part.numel()
        return [(base + r * n * whole.element_size(), n, dt) for r in range(self._size)]

    def _rooted(self, name: str, mine, whole, root: int, mine_sends: bool) -> NCCLWork:
        """Gather (`mine` goes to the root's `whole`) or scatter (the reverse) as grouped
        point-to-point transfers."""
        p, n, dt = self._args(mine)
        moves = [(mine_sends, p, n, dt, root)]
        if self._rank == root:
            moves += [
                (not mine_sends, bp, c, d, r)
                for r, (bp, c, d) in enumerate(self._blocks(whole, mine))
            ]
        return self._grouped(name, mine, moves, whole)

    def gather(self, output, input, root):  # noqa: A002
        return self._rooted("gather", input, output, root, True)

    def scatter(self, output, input, root):  # noqa: A002
        return self._rooted("scatter", output, input, root, False)

    def alltoall(self, output, input):  # noqa: A002
        block = input.reshape(self._size, -1)[0]
        moves = [(True, p, c, d, r) for r, (p, c, d) in enumerate(self._blocks(input, block))]
        moves += [(False, p, c, d, r) for r, (p, c, d) in enumerate(self._blocks(output, block))]
        return self._grouped("all_to_all_single", output, moves, input)

    def send(self, tensor, dst, tag):
        p, n, dt = self._args(tensor)
        return self._grouped("send", tensor, [(True, p, n, dt, dst)])

    def recv(self, tensor, src, tag):
        if src is None:
            raise NotImplementedError("nccl: recv() needs src (NCCL cannot receive from any rank)")
        p, n, dt = self._args(tensor)
        work = self._grouped("recv", tensor, [(False, p, n, dt, src)])
        work._source = src
        return work

    def barrier(self):
        import coretorch

        one = coretorch.ones(1, device=f"cuda:{self.device}")
        return self.allreduce(one, ReduceOp.SUM)

    # ---- groups ----
    def split(self, ranks):
        sub = self.bootstrap.split(ranks)
        if sub is None:
            return None
        return NCCLBackend.create(sub, self.timeout)

    def shutdown(self) -> None:
        self.comm.destroy()
