"""Failure detection between the ranks of an MPI job.

MPI itself would leave the other ranks waiting forever when one raises or dies. Three things
turn that into an error naming the rank and the collective, within the group timeout:

- **notices**: a rank that ends with an unhandled exception first sends a short JSON notice
  (its rank, the error) to every other rank on a communicator of its own; a rank waiting in a
  collective polls for notices and raises `DistBackendError` naming the failed rank;
- **liveness**: ranks on the same host know each other's process ids and check, while waiting,
  whether a peer's process has exited (killed, crashed in native code);
- **the timeout**: a wait that outlasts the group timeout raises.

A rank that failed lingers (up to the timeout, at most `LINGER_MAX` seconds) until every peer
has sent its own notice or exited, so the peers get to report before ``mpiexec`` tears the job
down. No pickle crosses ranks: notices are JSON.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sys
import time
import zlib
from typing import Callable

import numpy as np

from coretorch.distributed.errors import DistBackendError

TAG = 7401
LINGER_MAX = 30.0
CHECK_EVERY = 0.05  # seconds between notice/liveness checks while waiting


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] != b"Z"  # a zombie has exited
    except FileNotFoundError:
        return False
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True


class FaultMonitor:
    """One per process: the notice channel and the peers' process ids (world ranks)."""

    def __init__(self, world, timeout: float):
        from mpi4py import MPI

        self.MPI = MPI
        self.ctrl = world.Dup()
        self.rank, self.size = world.Get_rank(), world.Get_size()
        host = zlib.crc32(socket.gethostname().encode())
        table = np.zeros((self.size, 2), dtype=np.int64)
        world.Allgather(np.array([host, os.getpid()], dtype=np.int64), table)
        self.local_pids = {
            r: int(pid) for r, (h, pid) in enumerate(table.tolist()) if h == host and r != self.rank
        }
        self.timeout = timeout
        self.notices: dict[int, dict] = {}
        self.dead: set[int] = set()
        self.broken: str | None = None
        self._announced = False
        self._prev_hook: Callable | None = None

    # ---- while waiting ----
    def poll(self) -> None:
        """Receive pending notices; note peers whose process has exited."""
        MPI, st = self.MPI, self.MPI.Status()
        while self.ctrl.Iprobe(source=MPI.ANY_SOURCE, tag=TAG, status=st):
            buf = bytearray(st.Get_count(MPI.BYTE))
            self.ctrl.Recv([buf, MPI.BYTE], source=st.Get_source(), tag=TAG)
            try:
                notice = json.loads(buf.decode())
            except ValueError:
                notice = {"rank": st.Get_source(), "error": "(unreadable notice)"}
            self.notices.setdefault(st.Get_source(), notice)
        for r, pid in self.local_pids.items():
            if r not in self.dead and not _alive(pid):
                self.dead.add(r)

    def check(self, what: str, members: list[int]) -> None:
        """Raise if a rank of `members` (world ranks) has failed or exited."""
        self.poll()
        for r in members:
            n = self.notices.get(r)
            if n is not None:
                origin = n.get("origin", r)
                cause = f"rank {r} failed: {n.get('error')}"
                if origin != r:
                    cause = f"rank {origin} failed (rank {r} reports: {n.get('error')})"
                self._raise(f"{what}: {cause}")
        for r in members:
            if r in self.dead:
                self._raise(
                    f"{what}: rank {r} (process {self.local_pids[r]}) exited while this "
                    f"rank waited for it"
                )

    def _raise(self, message: str):
        raise self._failed(DistBackendError(message))

    def timed_out(self, what: str, waited: float) -> DistBackendError:
        """The DistBackendError for a call `what` that waited `waited` seconds for the other ranks
        (recorded as this rank's failure)."""
        return self._failed(
            DistBackendError(
                f"{what}: timed out after {waited:.1f} s "
                f"(group timeout {self.timeout:g} s) waiting "
                f"for the other ranks; a rank is stuck, or called a different collective (set "
                f"TORCH_DISTRIBUTED_DEBUG=DETAIL to compare the calls across ranks)"
            )
        )

    def _failed(self, err: DistBackendError) -> DistBackendError:
        """Record that this rank's group is broken and tell the peers at once (the caller may
        catch the error and exit without passing through the exception hook)."""
        self.broken = str(err)
        self.announce(err)
        return err

    # ---- when this rank fails ----
    def announce(self, exc: BaseException) -> None:
        """Tell every other rank (once) that this one failed with `exc`."""
        if self._announced:
            return
        self._announced = True
        origin = self.rank
        if isinstance(exc, DistBackendError):
            origin = next(
                (n.get("origin", r) for r, n in sorted(self.notices.items())),
                min(self.dead) if self.dead else self.rank,
            )
        body = json.dumps(
            {"rank": self.rank, "origin": origin, "error": f"{type(exc).__name__}: {exc}"[:2000]}
        ).encode()
        reqs = [
            self.ctrl.Isend([body, self.MPI.BYTE], dest=r, tag=TAG)
            for r in range(self.size)
            if r != self.rank and r not in self.dead
        ]
        self._drive(reqs, min(self.timeout, 2.0))

    def linger(self) -> None:
        """Wait until every peer has sent a notice or exited (bounded), so they can report."""
        deadline = time.monotonic() + min(self.timeout, LINGER_MAX)
        others = set(range(self.size)) - {self.rank}
        while time.monotonic() < deadline:
            self.poll()
            if others <= set(self.notices) | self.dead:
                return
            time.sleep(0.01)

    def safe_to_finalize(self) -> bool:
        """Whether MPI_Finalize can complete: no failure seen and every local peer still runs
        (a peer that exited before this rank finalized never reached MPI_Finalize)."""
        if self.broken is not None:
            return False
        self.poll()
        return not self.notices and not self.dead

    def _drive(self, reqs: list, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while reqs and not self.MPI.Request.Testall(reqs) and time.monotonic() < deadline:
            time.sleep(0.001)

    # ---- the process's unhandled-exception hook ----
    def install(self) -> None:
        """Install the excepthook reporting a rank's failure, and ignore the launcher's SIGUSR1."""
        self._prev_hook = sys.excepthook
        sys.excepthook = self._excepthook
        # MPICH's launcher signals SIGUSR1 to the other ranks when one dies (when it does not
        # tear the job down); its default action would end this rank before it can report
        try:
            if signal.getsignal(signal.SIGUSR1) in (signal.SIG_DFL, None):
                signal.signal(signal.SIGUSR1, lambda signum, frame: None)
        except (ValueError, AttributeError):  # not the main thread, or no SIGUSR1 here
            pass

    def uninstall(self) -> None:
        """Restore the previous excepthook."""
        if self._prev_hook is not None and sys.excepthook == self._excepthook:
            sys.excepthook = self._prev_hook
        self._prev_hook = None

    def _excepthook(self, exc_type, exc, tb) -> None:
        prev = self._prev_hook or sys.__excepthook__
        print(
            f"coretorch.distributed: rank {self.rank} of {self.size} failed with "
            f"{exc_type.__name__}: {exc}",
            file=sys.stderr,
        )
        prev(exc_type, exc, tb)
        try:
            self.announce(exc)
            self.linger()
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            # MPI_Finalize could wait forever on peers that failed: leave without it
            os._exit(1)
