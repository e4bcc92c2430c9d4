"""`MPIBackend`: the collectives of one MPI communicator on cpu tensors.

Buffers are the tensors' own memory (the core hands over contiguous tensors; `Tensor.numpy()`
shares their storage), so nothing is copied on the way to MPI. Every operation is MPI's
nonblocking form (``Iallreduce``, ``Ibcast``, ...), returned as an `MPIWork`."""

from __future__ import annotations

import atexit
import os
import sys
import threading

from coretorch.distributed.backend import Backend
from coretorch.distributed.reduce_op import ReduceOp

from .faults import CHECK_EVERY, FaultMonitor, _alive
from .work import MPIWork

_monitor: FaultMonitor | None = None
_we_finalize = False


def _array(t):
    """The flat numpy view of a contiguous cpu tensor's memory."""
    if t.device.type != "cpu":
        raise TypeError(
            f"the mpi process-group backend serves cpu tensors, got one on "
            f"{t.device}; use the nccl backend for cuda tensors"
        )
    return (t.detach() if t.requires_grad else t).numpy().reshape(-1)


class MPIBackend(Backend):
    """The process-group backend over MPI (mpi4py): collectives and point-to-point on cpu
    tensors."""

    name = "mpi"

    def __init__(self, comm, members: list[int], timeout: float):
        super().__init__(comm.Get_rank(), comm.Get_size(), timeout)
        from mpi4py import MPI

        self.MPI, self.comm, self.members = MPI, comm, members
        self.monitor = _monitor
        self._seq = 0
        self._ops = {
            ReduceOp.SUM: MPI.SUM,
            ReduceOp.PRODUCT: MPI.PROD,
            ReduceOp.MIN: MPI.MIN,
            ReduceOp.MAX: MPI.MAX,
            ReduceOp.BAND: MPI.BAND,
            ReduceOp.BOR: MPI.BOR,
            ReduceOp.BXOR: MPI.BXOR,
        }
        # MPI reduces C bools with the logical operations only
        self._bool_ops = {
            ReduceOp.SUM: MPI.LOR,
            ReduceOp.MAX: MPI.LOR,
            ReduceOp.BOR: MPI.LOR,
            ReduceOp.PRODUCT: MPI.LAND,
            ReduceOp.MIN: MPI.LAND,
            ReduceOp.BAND: MPI.LAND,
            ReduceOp.BXOR: MPI.LXOR,
        }

    @classmethod
    def world(cls, timeout: float) -> "MPIBackend":
        """The backend of all the job's processes (starts MPI if needed)."""
        global _monitor, _we_finalize
        if "mpi4py.MPI" not in sys.modules:
            import mpi4py

            mpi4py.rc.finalize = False  # _at_exit finalizes, unless that would hang
            _we_finalize = True
        from mpi4py import MPI

        if not MPI.Is_initialized():
            MPI.Init_thread()
        world = MPI.COMM_WORLD
        if _monitor is None:
            _monitor = FaultMonitor(world, timeout)
            if world.Get_size() > 1:  # alone, an exception has nobody to tell
                _monitor.install()
            atexit.register(_at_exit)
        _monitor.timeout = timeout
        return cls(world.Dup(), list(range(world.Get_size())), timeout)

    def _next_seq(self) -> int:
        self._seq += 1
        return self._seq

    def _op(self, op: ReduceOp, t):
        return (self._bool_ops if t.dtype.name == "bool" else self._ops)[op]

    def _work(self, name: str, req, *keep, status=None) -> MPIWork:
        return MPIWork(self, name, [req], keep, status)

    # ---- collectives ----
    def allreduce(self, tensor, op):
        a = _array(tensor)
        return self._work(
            "all_reduce", self.comm.Iallreduce(self.MPI.IN_PLACE, a, self._op(op, tensor)), a
        )

    def broadcast(self, tensor, root):
        a = _array(tensor)
        return self._work("broadcast", self.comm.Ibcast(a, root), a)

    def reduce(self, tensor, root, op):
        a = _array(tensor)
        mop = self._op(op, tensor)
        if self._rank == root:
            return self._work("reduce", self.comm.Ireduce(self.MPI.IN_PLACE, a, mop, root), a)
        return self._work("reduce", self.comm.Ireduce(a, None, mop, root), a)

    def allgather(self, output, input):  # noqa: A002
        o, i = _array(output), _array(input)
        return self._work("all_gather", self.comm.Iallgather(i, o), o, i)

    def reduce_scatter(self, output, input, op):  # noqa: A002
        o, i = _array(output), _array(input)
        return self._work(
            "reduce_scatter", self.comm.Ireduce_scatter_block(i, o, self._op(op, input)), o, i
        )

    def gather(self, output, input, root):  # noqa: A002
        o, i = (None if output is None else _array(output)), _array(input)
        return self._work("gather", self.comm.Igather(i, o, root), o, i)

    def scatter(self, output, input, root):  # noqa: A002
        o, i = _array(output), (None if input is None else _array(input))
        return self._work("scatter", self.comm.Iscatter(i, o, root), o, i)

    def alltoall(self, output, input):  # noqa: A002
        o, i = _array(output), _array(input)
        return self._work("all_to_all_single", self.comm.Ialltoall(i, o), o, i)

    def send(self, tensor, dst, tag):
        a = _array(tensor)
        return self._work("send", self.comm.Isend(a, dst, tag), a)

    def recv(self, tensor, src, tag):
        a = _array(tensor)
        status = self.MPI.Status()
        source = self.MPI.ANY_SOURCE if src is None else src
        return self._work("recv", self.comm.Irecv(a, source, tag), a, status=status)

    def barrier(self):
        return self._work("barrier", self.comm.Ibarrier())

    # ---- groups ----
    def split(self, ranks):
        sub = self.comm.Create(self.comm.Get_group().Incl(list(ranks)))
        if sub == self.MPI.COMM_NULL:
            return None
        return MPIBackend(sub, [self.members[r] for r in ranks], self.timeout)

    def shutdown(self) -> None:
        if self.comm != self.MPI.COMM_NULL and not self.MPI.Is_finalized():
            self.comm.Free()


def _at_exit() -> None:
    """Finalize MPI at exit, unless a peer failed or exited early: MPI_Finalize would then wait
    for it forever. A watchdog ends the process if a peer dies during MPI_Finalize."""
    m = _monitor
    if m is None or m.MPI.Is_finalized():
        return
    m.uninstall()
    if not m.safe_to_finalize():
        if not _we_finalize:  # mpi4py's own finalizer would hang: leave before it runs
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(1)
        return
    if _we_finalize:
        done = threading.Event()

        def watch() -> None:
            while not done.wait(CHECK_EVERY):
                if any(not _alive(pid) for pid in m.local_pids.values()):
                    sys.stdout.flush()
                    sys.stderr.flush()
                    os._exit(1)

        threading.Thread(target=watch, name="mpi-finalize-watchdog", daemon=True).start()
        m.MPI.Finalize()
        done.set()
