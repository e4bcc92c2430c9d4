"""DataLoader with worker processes: the same batches as in the main process, delivered through
shared memory; per-worker seeding as PyTorch's; worker_init_fn and get_worker_info; prefetch;
persistent workers; errors, timeouts, dead workers and KeyboardInterrupt leaving no process or
shared memory behind."""

from __future__ import annotations

import gc
import os
import random
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest
from shared_memory_usage import mapped_by_memfd, memfd_usage, shm_names, wait_dead

import coretorch as ct
from coretorch.utils.data import (
    DataLoader,
    Dataset,
    IterableDataset,
    TensorDataset,
    get_worker_info,
)
from coretorch.utils.data.worker import numpy_seed_for_worker


class FromFunction(Dataset):
    """`n` items; item i is ``fn(i)`` (module-level functions, so spawn can pickle them)."""

    def __init__(self, fn, n):
        self.fn, self.n = fn, n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return self.fn(i)


def _record(i):
    return {
        "x": ct.tensor([float(i), float(i * i)]),
        "y": i,
        "name": f"s{i}",
        "img": np.full((2, 2), i, dtype=np.int32),
    }


def _who_loads(i):
    """The index and what the loading process knows about itself."""
    info = get_worker_info()
    return i, (-1 if info is None else info.id), os.getpid()


def _fails_at_3(i):
    if i == 3:
        raise ValueError(f"item {i} is broken")
    return i


def _sleeps(i):
    time.sleep(1)
    return i


def _dies(i):
    os.kill(os.getpid(), signal.SIGKILL)


def _as_lists(batch):
    return {k: (v.tolist() if isinstance(v, ct.Tensor) else v) for k, v in batch.items()}


def test_workers_give_the_main_process_batches_through_shared_memory():
    ref = [_as_lists(b) for b in DataLoader(FromFunction(_record, 11), batch_size=3)]
    loader = DataLoader(FromFunction(_record, 11), batch_size=3, num_workers=2)
    got = list(loader)
    assert len(loader) == 4 and [_as_lists(b) for b in got] == ref
    for b in got:
        for t in (b["x"], b["y"], b["img"]):
            assert t.is_shared() and mapped_by_memfd(t.data_ptr())
    assert got[0]["x"].dtype is ct.float32 and got[0]["img"].dtype is ct.int32
    # TensorDataset batches (one gather per tensor, written to shared memory by the worker)
    ds = TensorDataset(ct.arange(20, dtype=ct.float64).reshape(10, 2), ct.arange(10))
    batches = list(
        DataLoader(
            ds, batch_size=4, shuffle=True, num_workers=2, generator=ct.Generator().manual_seed(3)
        )
    )
    same = list(DataLoader(ds, batch_size=4, shuffle=True, generator=ct.Generator().manual_seed(3)))
    assert [b[1].tolist() for b in batches] == [b[1].tolist() for b in same]
    assert all(b[0].is_shared() for b in batches)
    # batch_size=None: samples one by one; unordered delivery still gives every batch once
    items = list(DataLoader(FromFunction(_who_loads, 12), batch_size=None, num_workers=2))
    assert [int(i) for i, _, _ in items] == list(range(12))
    assert {int(w) for _, w, _ in items} == {0, 1} and os.getpid() not in {p for *_, p in items}
    unordered = list(
        DataLoader(FromFunction(_who_loads, 12), batch_size=2, num_workers=2, in_order=False)
    )
    assert sorted(int(i) for b in unordered for i in b[0]) == list(range(12))
    # more tensors in one batch than one message can carry descriptors for
    many = next(
        iter(
            DataLoader(
                FromFunction(_who_loads, 2),
                batch_size=2,
                num_workers=1,
                collate_fn=lambda b: [ct.full((2,), float(k)) for k in range(300)],
            )
        )
    )
    assert [t.tolist() for t in many] == [[float(k)] * 2 for k in range(300)]
    assert all(t.is_shared() for t in many)


class RecordsSeeds(Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        info = get_worker_info()
        return info.id, info.seed, ct.initial_seed(), FIRST_DRAWS[info.id]


FIRST_DRAWS: dict[int, tuple] = {}


def _record_first_draws(worker_id):
    FIRST_DRAWS[worker_id] = (random.random(), float(np.random.random()), float(ct.rand(1).item()))


def test_worker_seeding_follows_pytorch():
    def run(seed):
        loader = DataLoader(
            RecordsSeeds(),
            batch_size=None,
            num_workers=2,
            worker_init_fn=_record_first_draws,
            generator=ct.Generator().manual_seed(seed),
        )
        return {int(w): (int(s), int(init), draws) for w, s, init, draws in loader}

    first = run(7)
    assert set(first) == {0, 1}
    base = first[0][0]
    assert first[1][0] == base + 1  # seed = base_seed + worker_id
    for wid, (seed, initial, (py, npy, ctr)) in first.items():
        assert initial == seed
        assert py == random.Random(seed).random()
        np_state = np.random.RandomState(numpy_seed_for_worker(base, wid))
        assert npy == np_state.random_sample()
        assert ctr == ct.rand(1, generator=ct.Generator().manual_seed(seed)).item()
    assert run(7) == first  # the loader's generator decides the seeds
    assert run(8)[0][0] != base


def test_numpy_seed_matches_pytorch_worker_seed_hash():
    torch_worker = pytest.importorskip("torch.utils.data._utils.worker")
    for base, wid in [(0, 0), (1, 3), (2**63 - 1, 7), (123456789012345, 2)]:
        assert numpy_seed_for_worker(base, wid) == torch_worker._generate_state(base, wid)


class Shards(IterableDataset):
    """Yields 0..n-1; each worker takes its own stride of it."""

    def __init__(self, n):
        self.n = n

    def __iter__(self):
        info = get_worker_info()
        start, step = (0, 1) if info is None else (info.id, info.num_workers)
        return iter(range(start, self.n, step))


class Tagged(Dataset):
    tag = "untagged"

    def __len__(self):
        return 12

    def __getitem__(self, i):
        return self.tag


def test_get_worker_info_and_worker_init_fn():
    assert get_worker_info() is None
    ds = Tagged()
    loader = DataLoader(
        ds,
        batch_size=4,
        num_workers=2,
        worker_init_fn=lambda wid: setattr(get_worker_info().dataset, "tag", f"worker {wid}"),
    )
    assert [b for b in loader] == [["worker 0"] * 4, ["worker 1"] * 4, ["worker 0"] * 4]
    assert ds.tag == "untagged"  # each worker changed its own copy of the dataset
    got = sorted(int(v) for b in DataLoader(Shards(13), batch_size=3, num_workers=2) for v in b)
    assert got == list(range(13))
    assert sorted(int(v) for v in DataLoader(Shards(5), batch_size=None, num_workers=2)) == list(
        range(5)
    )


class Counted(Dataset):
    """Counts fetches in shared memory, so the main process can see what the workers did."""

    def __init__(self, n):
        self.n = n
        self.fetched = ct.zeros(1, dtype=ct.int64).share_memory_()
        self.calls = 0

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        self.calls += 1
        self.fetched.add_(1)
        return i, self.calls


def test_prefetch_factor_bounds_batches_in_flight():
    ds = Counted(20)
    loader = DataLoader(ds, batch_size=1, num_workers=2, prefetch_factor=2)
    it = iter(loader)
    time.sleep(1.0)
    assert ds.fetched.item() == 4  # prefetch_factor * num_workers, no more
    next(it)
    time.sleep(0.5)
    assert ds.fetched.item() == 5  # one taken, one more asked for
    assert len(list(it)) == 19


def test_persistent_workers_live_across_epochs():
    ds = Counted(6)
    loader = DataLoader(ds, batch_size=2, num_workers=2, persistent_workers=True)
    first = list(loader)
    pids = [w.pid for w in loader._iterator._workers]
    second = list(loader)
    assert [w.pid for w in loader._iterator._workers] == pids
    assert (
        [b[0].tolist() for b in first]
        == [b[0].tolist() for b in second]
        == [[0, 1], [2, 3], [4, 5]]
    )
    # a worker's dataset copy kept its state: its second epoch continues the call count
    assert max(c for b in second for c in b[1].tolist()) > max(
        c for b in first for c in b[1].tolist()
    )
    del loader, first, second  # the workers end with the loader
    gc.collect()
    assert not wait_dead(pids, 10)


def test_worker_error_is_raised_in_the_main_process_and_workers_end():
    it = iter(DataLoader(FromFunction(_fails_at_3, 8), batch_size=2, num_workers=2))
    pids = [w.pid for w in it._workers]
    assert next(it).tolist() == [0, 1]
    with pytest.raises(
        ValueError,
        match=r"(?s)Caught ValueError in DataLoader worker process "
        r"1\.\nOriginal Traceback.*item 3 is broken",
    ):
        next(it)
    assert next(it).tolist() == [4, 5]  # the loader goes on, as PyTorch's does
    del it
    gc.collect()
    assert not wait_dead(pids, 10)


def test_unpicklable_batch_is_an_error_not_a_hang():
    loader = DataLoader(
        FromFunction(_who_loads, 12),
        batch_size=2,
        num_workers=1,
        timeout=30,
        collate_fn=lambda b: lambda: b,
    )
    with pytest.raises(Exception, match="Caught .* in DataLoader worker process 0"):
        next(iter(loader))


def test_timeout_and_dead_worker_are_reported():
    with pytest.raises(RuntimeError, match="DataLoader timed out after 0.3 seconds"):
        next(iter(DataLoader(FromFunction(_sleeps, 4), num_workers=1, timeout=0.3)))
    with pytest.raises(
        RuntimeError,
        match=r"DataLoader worker \(pid.*(killed by signal|"
        r"exited unexpectedly)",
    ):
        next(iter(DataLoader(FromFunction(_dies, 4), num_workers=1)))


def test_validation_and_options():
    ds = FromFunction(_who_loads, 12)
    with pytest.raises(ValueError, match="prefetch_factor option could only be specified"):
        DataLoader(ds, prefetch_factor=2)
    with pytest.raises(ValueError, match="persistent_workers option needs num_workers > 0"):
        DataLoader(ds, persistent_workers=True)
    with pytest.raises(ValueError, match="num_workers option should be non-negative"):
        DataLoader(ds, num_workers=-1)
    with pytest.raises(ValueError, match="multiprocessing_context can only be used"):
        DataLoader(ds, multiprocessing_context="fork")
    with pytest.raises(ValueError, match="should specify a valid start method"):
        DataLoader(ds, num_workers=1, multiprocessing_context="teleport")
    with pytest.raises(TypeError, match="should be a valid context object"):
        DataLoader(ds, num_workers=1, multiprocessing_context=object())
    loader = DataLoader(ds, batch_size=4)
    with pytest.raises(ValueError, match="batch_size attribute should not be set"):
        loader.batch_size = 2
    with pytest.warns(UserWarning, match="no accelerator is found"):
        batches = list(
            DataLoader(
                ds, batch_size=6, num_workers=1, pin_memory=True, multiprocessing_context="spawn"
            )
        )
    assert [b[0].tolist() for b in batches] == [list(range(6)), list(range(6, 12))]
    with pytest.warns(UserWarning, match="This DataLoader will create 64 worker processes"):
        DataLoader(ds, num_workers=64)


def test_loading_leaves_no_shared_memory_behind():
    gc.collect()
    before, names = memfd_usage(), shm_names()
    batches = list(DataLoader(FromFunction(_record, 20), batch_size=4, num_workers=2))
    assert memfd_usage()[1] > before[1]
    del batches
    gc.collect()
    assert memfd_usage() == before
    assert shm_names() <= names


_INTERRUPTED_SCRIPT = textwrap.dedent("""
    import time
    from coretorch.utils.data import DataLoader, Dataset

    class Slow(Dataset):
        def __getitem__(self, i):
            time.sleep(0.05)
            return i

    it = iter(DataLoader(Slow(), batch_size=2, num_workers=2, persistent_workers=True,
                         sampler=range(1000)))
    print(" ".join(str(w.pid) for w in it._workers), flush=True)
    for batch in it:
        print("batch", flush=True)
""")


@pytest.mark.parametrize("how", ["ctrl-c", "SIGINT", "SIGKILL"])
def test_interrupted_main_process_leaves_no_worker_behind(how, tmp_path):
    # ctrl-c: SIGINT to the whole process group, as a terminal sends it; SIGINT / SIGKILL: to
    # the main process only (a killed main process cannot stop its workers: they notice)
    script = tmp_path / "loader.py"
    script.write_text(_INTERRUPTED_SCRIPT)
    proc = subprocess.Popen(
        [sys.executable, str(script)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        pids = [int(p) for p in proc.stdout.readline().split()]
        assert len(pids) == 2
        assert proc.stdout.readline().strip() == "batch"
        if how == "ctrl-c":
            os.killpg(proc.pid, signal.SIGINT)
        else:
            proc.send_signal(getattr(signal, how))
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    if how != "SIGKILL":
        assert "KeyboardInterrupt" in err and "Error" not in err.replace("KeyboardInterrupt", "")
    assert not wait_dead(pids, 5)
