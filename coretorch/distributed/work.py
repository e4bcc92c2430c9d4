"""`Work`: the handle of a collective started with ``async_op=True`` (or of `isend`/`irecv`).

A backend subclasses it with `_test` (has the operation finished?) and `_wait` (block until it
has, or raise). The core adds completion steps (copying a packed result back into the caller's
tensors, dividing for AVG) with `_then`; they run once, on the thread that sees completion."""

from __future__ import annotations

from datetime import timedelta
from typing import Any, Callable

from .. import record_function as _rf

__all__ = ["Work"]


class Work:
    """A running operation: ``wait()`` blocks until it has finished (raising its error),
    ``is_completed()`` polls, ``result()`` gives the output tensors."""

    # a point-to-point receive's: the sender (set by the backend) and its global rank
    _source: Any
    source_rank: Callable[[], int]

    def __init__(self, op: str, outputs: list | None = None):
        self._op = op
        self._outputs = outputs if outputs is not None else []
        self._steps: list[Callable[[], None]] = []
        self._done = False
        self._error: BaseException | None = None

    # ---- what a backend implements ----
    def _test(self) -> bool:
        """Whether the operation has finished (drives the backend's progress)."""
        return True

    def _wait(self, timeout: float | None) -> None:
        """Block until the operation has finished; raise `DistBackendError` on failure or when
        `timeout` seconds (None: the group's timeout) pass."""

    # ---- public API ----
    def wait(self, timeout: timedelta | float | None = None) -> bool:
        """Block until the operation finished; raises its error. Returns True."""
        if not self._done:
            seconds = timeout.total_seconds() if isinstance(timeout, timedelta) else timeout
            if _rf.state.active:
                with _rf.record_function(f"c10d::wait({self._op})"):
                    self._block(seconds)
            else:
                self._block(seconds)
        if self._error is not None:
            raise self._error
        return True

    def is_completed(self) -> bool:
        """Whether the operation has finished (without blocking)."""
        if not self._done:
            try:
                finished = self._test()
            except BaseException as e:
                self._done, self._error = True, e
                return True
            if finished:
                self._complete()
        return self._done

    def is_success(self) -> bool:
        """Whether the operation finished without error (False while it runs)."""
        return self.is_completed() and self._error is None

    def exception(self) -> BaseException | None:
        """The error the operation ended with, if any."""
        return self._error

    def result(self) -> list:
        """The output tensors (valid once `wait()` returned)."""
        return list(self._outputs)

    def get_future(self):
        """Not supported: wait() or is_completed() instead.

        Raises:
            NotImplementedError: always.
        """
        raise NotImplementedError(
            "Work.get_future(): futures are not implemented in "
            "coretorch.distributed; call wait() or is_completed()"
        )

    # ---- used by the core ----
    def _then(self, step: Callable[[], None]) -> "Work":
        """Run `step()` once the operation has finished (before `wait()` returns)."""
        self._steps.append(step)
        return self

    def _block(self, seconds: float | None) -> None:
        try:
            self._wait(seconds)
        except BaseException as e:
            self._done, self._error = True, e
            raise
        self._complete()

    def _complete(self) -> None:
        self._done = True
        try:
            for step in self._steps:
                step()
        except BaseException as e:
            self._error = e
            raise

    def __repr__(self) -> str:
        state = "failed" if self._error else ("completed" if self._done else "running")
        return f"<Work {self._op} {state}>"


class CompletedWork(Work):
    """A Work for an operation that finished at once (for example, a group of one rank)."""
