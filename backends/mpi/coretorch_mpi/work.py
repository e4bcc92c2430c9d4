"""`MPIWork`: a nonblocking MPI operation, waited on by polling.

Waiting polls ``MPI_Testall`` (which drives MPI's progress like ``MPI_Wait`` does), and every
`CHECK_EVERY` seconds looks for failure notices, exited peers and the timeout, so a wait never
hangs silently. After a short spin it yields the core between polls: on a machine with fewer
cores than ranks, a waiting rank then does not slow down the ranks it waits for."""

from __future__ import annotations

import os
import time

from coretorch.distributed.errors import DistBackendError
from coretorch.distributed.work import Work

from .faults import CHECK_EVERY

_SPIN = 2048  # polls before yielding the core between polls


class MPIWork(Work):
    """A pending MPI operation: wait() completes its requests, failing with DistBackendError on an
    MPI error or timeout."""

    def __init__(self, backend, op: str, requests: list, keep: tuple = (), status=None):
        super().__init__(op)
        self._be, self._reqs, self._keep, self._status = backend, requests, keep, status
        self._desc = f"{op} #{backend._next_seq()} (group of {backend.size()} ranks, mpi)"
        self._source = None

    def _test(self) -> bool:
        be = self._be
        try:
            done = be.MPI.Request.Testall(self._reqs, self._statuses())
        except be.MPI.Exception as e:
            raise DistBackendError(f"{self._desc}: MPI error: {e}") from e
        if done:
            self._finished()
        else:
            be.monitor.check(self._desc, be.members)
        return done

    def _statuses(self):
        return None if self._status is None else [self._status]

    def _finished(self) -> None:
        if self._status is not None:
            self._source = self._status.Get_source()
        self._keep = ()

    def _wait(self, timeout: float | None) -> None:
        be = self._be
        testall, reqs, statuses = be.MPI.Request.Testall, self._reqs, self._statuses()
        limit = be.timeout if timeout is None else timeout
        start = time.monotonic()
        next_check = start + CHECK_EVERY
        spins = 0
        try:
            while not testall(reqs, statuses):
                spins += 1
                if spins < _SPIN:
                    continue
                os.sched_yield()
                now = time.monotonic()
                if now >= next_check:
                    be.monitor.check(self._desc, be.members)
                    if now - start > limit:
                        raise be.monitor.timed_out(self._desc, now - start)
                    next_check = now + CHECK_EVERY
        except be.MPI.Exception as e:
            raise DistBackendError(f"{self._desc}: MPI error: {e}") from e
        self._finished()
