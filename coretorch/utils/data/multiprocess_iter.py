"""The multi-process DataLoader iterator: worker processes, prefetching, ordered delivery and a
shutdown that leaves no process behind (mirrors PyTorch's ``_MultiProcessingDataLoaderIter``).

Each worker reads its tasks from its own pipe and all answer on one queue. Shutdown: when an
epoch ends (without persistent workers), when the iterator is garbage collected, or on error,
the main process sets the shared `done_event`, sends ``None`` to every worker, joins them for a
while and terminates any that remain. Workers are daemonic, so ``multiprocessing`` also ends
them when the main process exits (KeyboardInterrupt included), and a worker whose main process
died (SIGKILL) sees its task pipe close and exits (or notices its new parent within
``MP_STATUS_CHECK_INTERVAL`` seconds). A worker that dies is reported at once through SIGCHLD.
"""

from __future__ import annotations

import itertools
import queue
import socket
from multiprocessing.reduction import ForkingPickler

from ... import multiprocessing as _mp
from ...multiprocessing.fd_handoff import receiving_fds, recv_fds
from . import worker_signals
from .dataloader import DataLoader, _BaseDataLoaderIter
from .exception_wrapper import ExceptionWrapper
from .fetch import ITERABLE
from .worker import IterableDatasetStopIteration, ResumeIteration, worker_loop

__all__ = ["MultiProcessingDataLoaderIter"]


def _status_check_interval() -> float:
    from . import worker

    return worker.MP_STATUS_CHECK_INTERVAL


class MultiProcessingDataLoaderIter(_BaseDataLoaderIter):
    """Iterates once over the DataLoader's dataset (every epoch, with persistent workers) with
    `num_workers` worker processes and `prefetch_factor` batches in flight per worker."""

    def __init__(self, loader: DataLoader) -> None:
        super().__init__(loader)
        assert loader.prefetch_factor is not None  # the loader sets 2 with workers
        self._prefetch_factor = loader.prefetch_factor
        self._in_order = loader.in_order
        if self._prefetch_factor <= 0:
            raise ValueError(
                f"DataLoader: prefetch_factor must be positive with num_workers > 0,"
                f" got {self._prefetch_factor}"
            )
        context = loader.multiprocessing_context or _mp
        self._worker_init_fn = loader.worker_init_fn
        self._shutdown = False
        self._worker_pids_set = False
        self._index_senders = []  # one pipe per worker: the main process writes, it reads
        self._fd_channels = []  # one Unix socket per worker: the descriptors of its batches
        self._workers = []
        self._workers_status = [True] * self._num_workers
        self._worker_result_queue = context.Queue()
        self._workers_done_event = context.Event()
        try:
            for i in range(self._num_workers):
                receiver, sender = context.Pipe(duplex=False)
                self._index_senders.append(sender)
                main_end, worker_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
                self._fd_channels.append(main_end)
                w = context.Process(
                    target=worker_loop,
                    args=(
                        self._dataset_kind,
                        self._dataset,
                        (receiver, sender),
                        self._worker_result_queue,
                        (worker_end, main_end),
                        self._workers_done_event,
                        self._auto_collation,
                        self._collate_fn,
                        self._drop_last,
                        self._base_seed,
                        self._worker_init_fn,
                        i,
                        self._num_workers,
                        self._persistent_workers,
                    ),
                )
                w.daemon = True
                w.start()
                receiver.close()  # the worker has its own
                worker_end.close()
                self._workers.append(w)
        except BaseException:
            self._shutdown_workers()
            raise
        worker_signals.set_worker_pids(id(self), tuple(w.pid for w in self._workers))
        worker_signals.set_sigchld_handler()
        self._worker_pids_set = True
        self._reset(loader, first_iter=True)

    def _reset(self, loader: DataLoader, first_iter: bool = False) -> None:
        super()._reset(loader, first_iter)
        self._send_idx = 0  # the next task to send to a worker
        self._rcvd_idx = 0  # the next task to return from __next__
        # task index -> (worker,) while outstanding, (worker, data) once it arrived early
        self._task_info: dict[int, tuple] = {}
        self._tasks_outstanding = 0
        self._workers_status = [True] * self._num_workers
        self._workers_num_tasks = [0] * self._num_workers
        self._worker_queue_idx_cycle = itertools.cycle(range(self._num_workers))
        if not first_iter:
            for sender in self._index_senders:
                sender.send(ResumeIteration())
            remaining = self._num_workers
            while remaining > 0:
                idx, _ = self._get_data()
                if isinstance(idx, ResumeIteration):
                    remaining -= 1
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    def _try_get_data(self, timeout: float):
        try:
            return True, self._worker_result_queue.get(timeout=timeout)
        except Exception as e:
            failed = []
            for worker_id, w in enumerate(self._workers):
                if self._workers_status[worker_id] and not w.is_alive():
                    failed.append(w)
                    self._mark_worker_as_unavailable(worker_id)
            if failed:
                pids = ", ".join(str(w.pid) for w in failed)
                raise RuntimeError(f"DataLoader worker (pid(s) {pids}) exited unexpectedly") from e
            if isinstance(e, queue.Empty):
                return False, None
            raise

    def _get_data(self):
        """The next (task index, data) a worker sent, its batch unpickled (mapping the shared
        memory of its tensors)."""
        if self._timeout > 0:
            ok, data = self._try_get_data(self._timeout)
            if not ok:
                raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")
        else:
            ok, data = False, None
            while not ok:
                ok, data = self._try_get_data(_status_check_interval())
        idx, message = data
        if message is None:  # the acknowledgement of a ResumeIteration
            return idx, None
        worker_id, nfds, payload = message
        fds = recv_fds(self._fd_channels[worker_id], nfds) if nfds else []
        with receiving_fds(fds):
            return idx, ForkingPickler.loads(payload)

    def _next_data(self):
        while True:
            # skip tasks whose worker ended its IterableDataset copy
            while self._rcvd_idx < self._send_idx:
                info = self._task_info.get(self._rcvd_idx)
                if info:
                    if len(info) == 2 or self._workers_status[info[0]]:
                        break
                    del self._task_info[self._rcvd_idx]
                self._rcvd_idx += 1
            else:
                if not self._persistent_workers:
                    self._shutdown_workers()
                raise StopIteration
            if len(self._task_info[self._rcvd_idx]) == 2:  # it arrived earlier
                worker_id, data = self._task_info.pop(self._rcvd_idx)
                self._rcvd_idx += 1
                return self._process_data(data, worker_id)
            idx, data = self._get_data()
            self._tasks_outstanding -= 1
            if self._dataset_kind == ITERABLE and isinstance(data, IterableDatasetStopIteration):
                if self._persistent_workers:
                    self._workers_status[data.worker_id] = False
                else:
                    self._mark_worker_as_unavailable(data.worker_id)
                self._try_put_index()
                continue
            if idx != self._rcvd_idx:
                if not self._in_order:
                    worker_id = self._task_info.pop(idx)[0]
                    return self._process_data(data, worker_id)
                self._task_info[idx] += (data,)
            else:
                worker_id = self._task_info.pop(idx)[0]
                self._rcvd_idx += 1
                return self._process_data(data, worker_id)

    def _try_put_index(self) -> None:
        max_tasks = self._prefetch_factor * self._num_workers
        try:
            index = self._next_index()
        except StopIteration:
            return
        for _ in range(self._num_workers):  # the next active worker, if any
            worker_queue_idx = next(self._worker_queue_idx_cycle)
            if self._workers_status[worker_queue_idx]:
                if self._in_order or (
                    self._workers_num_tasks[worker_queue_idx]
                    < max_tasks // sum(self._workers_status)
                ):
                    break
        else:
            return
        self._index_senders[worker_queue_idx].send((self._send_idx, index))
        self._task_info[self._send_idx] = (worker_queue_idx,)
        self._workers_num_tasks[worker_queue_idx] += 1
        self._tasks_outstanding += 1
        self._send_idx += 1

    def _process_data(self, data, worker_idx: int):
        self._workers_num_tasks[worker_idx] -= 1
        self._try_put_index()
        if isinstance(data, ExceptionWrapper):
            data.reraise()
        return data

    def _mark_worker_as_unavailable(self, worker_id: int) -> None:
        # the worker is told to exit; it is joined at shutdown
        try:
            self._index_senders[worker_id].send(None)
        except OSError:
            pass  # it is gone already
        self._workers_status[worker_id] = False

    def _shutdown_workers(self) -> None:
        if worker_signals.python_exiting() or self._shutdown:
            return
        self._shutdown = True
        try:
            self._workers_done_event.set()
            for worker_id in range(len(self._workers)):
                # a persistent worker marked done for this epoch still needs the exit signal
                if self._persistent_workers or self._workers_status[worker_id]:
                    self._mark_worker_as_unavailable(worker_id)
            for w in self._workers:
                w.join(timeout=_status_check_interval())
        finally:
            if self._worker_pids_set:
                worker_signals.remove_worker_pids(id(self))
                self._worker_pids_set = False
            for w in self._workers:
                if w.is_alive():
                    w.terminate()
                    w.join(timeout=_status_check_interval())
                if w.is_alive():
                    w.kill()
                    w.join()
            for conn in self._index_senders + self._fd_channels:
                conn.close()
            self._worker_result_queue.cancel_join_thread()
            self._worker_result_queue.close()

    def __del__(self) -> None:
        if getattr(self, "_workers", None) is not None:
            self._shutdown_workers()
