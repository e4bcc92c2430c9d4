"""The DataLoader worker process: seeding, the fetch loop and its shutdown protocol.

The main process sends ``(task index, sampler output)`` on the worker's task pipe; the worker
answers ``(task index, (worker id, n, pickled batch))`` on the shared result queue. Tensors in a
batch travel as shared memory (see ``coretorch.multiprocessing``): the pickled batch is small and
the `n` descriptors of its memory go over the worker's own Unix socket. ``None`` on the
pipe (or its end) means exit; `ResumeIteration` starts a new epoch for persistent workers.
"""

from __future__ import annotations

import os
import random
from dataclasses import dataclass
from multiprocessing.reduction import ForkingPickler

import numpy as np

from ...multiprocessing.fd_handoff import collecting_fds, drop_pending_handoffs, send_fds
from ...random import manual_seed
from .exception_wrapper import ExceptionWrapper
from .fetch import ITERABLE, create_fetcher
from .worker_info import WorkerInfo, set_worker_info

__all__ = [
    "worker_loop",
    "numpy_seed_for_worker",
    "MP_STATUS_CHECK_INTERVAL",
    "ResumeIteration",
    "IterableDatasetStopIteration",
]

# seconds between a waiting worker's (or the main process's) checks that the other side lives
MP_STATUS_CHECK_INTERVAL = 5.0


@dataclass(frozen=True)
class IterableDatasetStopIteration:
    """A worker's IterableDataset copy is exhausted."""

    worker_id: int


@dataclass(frozen=True)
class ResumeIteration:
    """Start a new epoch (persistent workers); the worker acknowledges it."""


_MASK32 = 0xFFFFFFFF


def _hash_mix(value: int, mult_state: list[int], mult: int) -> int:
    value = (value ^ mult_state[0]) & _MASK32
    mult_state[0] = (mult_state[0] * mult) & _MASK32
    value = (value * mult_state[0]) & _MASK32
    return (value ^ (value >> 16)) & _MASK32


def numpy_seed_for_worker(base_seed: int, worker_id: int) -> list[int]:
    """The four 32-bit words worker `worker_id` seeds ``numpy.random`` with: numpy's SeedSequence
    hashing of (worker_id, base_seed), as PyTorch's DataLoader computes it, so that numpy's
    stream differs from the ``random``/coretorch ones seeded with ``base_seed + worker_id``."""
    entropy = [worker_id, base_seed & _MASK32, base_seed >> 32, 0]
    state_a = [0x43B0D7E5]
    pool = [_hash_mix(e, state_a, 0x931E8875) for e in entropy]
    for src in range(4):
        for dst in range(4):
            if src != dst:
                h = _hash_mix(pool[src], state_a, 0x931E8875)
                x = (0xCA01F9DD * pool[dst]) & _MASK32
                y = (0x4973F715 * h) & _MASK32
                r = (x - y) & _MASK32
                pool[dst] = (r ^ (r >> 16)) & _MASK32
    state_b = [0x8B51F9DD]
    return [_hash_mix(p, state_b, 0x58F38DED) for p in pool]


class _ManagerWatchdog:
    """Whether the process that started this worker still lives."""

    def __init__(self) -> None:
        self.manager_pid = os.getppid()
        self.manager_dead = False

    def is_alive(self) -> bool:
        if not self.manager_dead:
            self.manager_dead = os.getppid() != self.manager_pid
        return not self.manager_dead


def _pack(data, worker_id: int, fd_channel) -> tuple[int, int, bytes]:
    """(worker_id, number of descriptors sent on `fd_channel`, pickled data). Pickled here
    rather than in the queue's feeder thread, so that an unpicklable batch becomes an error the
    main process sees instead of a batch that never arrives."""
    try:
        with collecting_fds() as fds:
            payload = bytes(ForkingPickler.dumps(data))
        send_fds(fd_channel, fds)  # while `data` keeps the descriptors open
        return worker_id, len(fds), payload
    except Exception:
        wrapped = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
        return worker_id, 0, bytes(ForkingPickler.dumps(wrapped))


def worker_loop(
    dataset_kind: int,
    dataset,
    index_pipe: tuple,
    data_queue,
    fd_sockets: tuple,
    done_event,
    auto_collation: bool,
    collate_fn,
    drop_last: bool,
    base_seed: int,
    init_fn,
    worker_id: int,
    num_workers: int,
    persistent_workers: bool,
) -> None:
    """Run in a worker process until told to exit (or until the main process dies)."""
    tasks, sender = index_pipe
    sender.close()  # only the main process writes: when it dies, `tasks` reaches its end
    fd_channel, main_end = fd_sockets
    main_end.close()
    watchdog = _ManagerWatchdog()
    main_gone = False
    try:
        seed = base_seed + worker_id
        random.seed(seed)
        manual_seed(seed)
        np.random.seed(numpy_seed_for_worker(base_seed, worker_id))
        set_worker_info(
            WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed, dataset=dataset)
        )
        init_exception = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = create_fetcher(dataset_kind, dataset, auto_collation, collate_fn, drop_last)
        except Exception:
            init_exception = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
        iteration_end = False
        while watchdog.is_alive():
            try:
                if not tasks.poll(MP_STATUS_CHECK_INTERVAL):
                    continue
                r = tasks.recv()
            except (EOFError, OSError):
                main_gone = True
                break
            if isinstance(r, ResumeIteration):
                data_queue.put((r, None))
                iteration_end = False
                if init_exception is None:
                    fetcher = create_fetcher(
                        dataset_kind, dataset, auto_collation, collate_fn, drop_last
                    )
                continue
            if r is None:  # the final signal
                break
            if done_event.is_set() or iteration_end:
                continue  # shutting down or exhausted: wait for the final signal
            idx, index = r
            if init_exception is not None:
                data, init_exception = init_exception, None
            else:
                try:
                    data = fetcher.fetch(index)
                except Exception as e:
                    if isinstance(e, StopIteration) and dataset_kind == ITERABLE:
                        # a marker
                        data = IterableDatasetStopIteration(worker_id)  # type: ignore[assignment]
                        iteration_end = True
                    else:
                        data = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
            data_queue.put((idx, _pack(data, worker_id, fd_channel)))
            del data, idx, index, r
    except KeyboardInterrupt:
        pass  # the main process gets it too and shuts the workers down
    if done_event.is_set() or main_gone or not watchdog.is_alive():
        data_queue.cancel_join_thread()
        data_queue.close()
    # every batch sent before the exit signal has been received: nobody will take the rest
    drop_pending_handoffs()
