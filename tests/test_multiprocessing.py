"""coretorch.multiprocessing: share_memory_ in place, tensors through queues and process
arguments (fork and spawn), spawn's error reporting, Hogwild training of one set of weights by
two processes, and shared memory returned to the system afterwards."""

from __future__ import annotations

import gc
import multiprocessing as std_mp

import numpy as np
import pytest
from shared_memory_usage import mapped_by_memfd, memfd_usage, shm_names

import coretorch as ct
import coretorch.multiprocessing as mp

FORK = mp.get_context("fork")


def test_namespace_mirrors_torch_multiprocessing():
    for name in std_mp.__all__:
        assert hasattr(mp, name), name
    for name in (
        "spawn",
        "start_processes",
        "ProcessContext",
        "ProcessRaisedException",
        "ProcessExitedException",
        "set_sharing_strategy",
        "get_sharing_strategy",
        "get_all_sharing_strategies",
    ):
        assert hasattr(mp, name), name
    assert mp.get_sharing_strategy() == "file_descriptor"
    assert mp.get_all_sharing_strategies() == {"file_descriptor"}
    with pytest.raises(RuntimeError, match="file descriptors only"):
        mp.set_sharing_strategy("file_system")
    with pytest.raises(AssertionError, match="invalid sharing strategy"):
        mp.set_sharing_strategy("carrier_pigeon")
    mp.set_sharing_strategy("file_descriptor")


def test_share_memory_is_in_place_and_views_follow():
    t = ct.arange(8, dtype=ct.float64)
    v = t[2:6]
    assert v.tolist() == [2.0, 3.0, 4.0, 5.0]  # the view has cached its (private) buffer
    storage = t.untyped_storage()
    assert not t.is_shared() and not v.is_shared()
    assert t.share_memory_() is t
    assert t.is_shared() and v.is_shared()
    assert t.untyped_storage() is storage and v.untyped_storage() is storage
    assert mapped_by_memfd(t.data_ptr()) and v.data_ptr() == t.data_ptr() + 16
    t[3] = 100.0
    assert v.tolist() == [2.0, 100.0, 4.0, 5.0]
    v.mul_(2)
    np.testing.assert_array_equal(t.numpy(), [0, 1, 4, 200, 8, 10, 6, 7])
    ptr = t.data_ptr()
    t.share_memory_()  # already shared: nothing moves
    assert t.data_ptr() == ptr
    fresh = ct.ones(3).share_memory_()  # a tensor no other one shares a storage with
    assert fresh.is_shared() and fresh.tolist() == [1.0, 1.0, 1.0]
    empty = ct.empty(0).share_memory_()
    assert empty.is_shared() and empty.shape == (0,)


def test_share_memory_refuses_non_cpu_tensors():
    m = ct.empty(2, device="meta")
    with pytest.raises(RuntimeError, match=r"share_memory_\(\): only cpu tensors"):
        m.share_memory_()
    assert not m.is_shared()


def test_module_share_memory_covers_parameters_grads_and_buffers():
    model = ct.nn.Sequential(ct.nn.Linear(3, 2), ct.nn.BatchNorm1d(2))
    model(ct.randn(4, 3)).sum().backward()
    weight = model[0].weight
    before = weight.detach().clone()
    assert model.share_memory() is model
    assert model[0].weight is weight
    tensors = (
        list(model.parameters()) + list(model.buffers()) + [p.grad for p in model.parameters()]
    )
    assert all(t.is_shared() for t in tensors)
    np.testing.assert_array_equal(weight.detach().numpy(), before.numpy())


def _add_and_send_back(q, t):
    t += 1
    q.put(t[1:3])
    q.put(ct.nn.Parameter(ct.zeros(2)))


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_tensors_through_process_arguments_and_queues(method):
    ctx = mp.get_context(method)
    t = ct.arange(4, dtype=ct.float32)
    if method == "fork":
        t.share_memory_()  # a forked child inherits memory as a private copy otherwise
    # under spawn the argument is pickled, which moves it to shared memory itself
    q = ctx.Queue()
    p = ctx.Process(target=_add_and_send_back, args=(q, t))
    p.start()
    back, param = q.get(timeout=60), q.get(timeout=60)
    p.join(timeout=60)
    assert p.exitcode == 0
    assert t.is_shared() and t.tolist() == [1.0, 2.0, 3.0, 4.0]  # the child's write
    assert back.tolist() == [2.0, 3.0] and back.untyped_storage() is t.untyped_storage()
    back[0] = -1.0
    assert t[1].item() == -1.0
    assert type(param) is ct.nn.Parameter and param.requires_grad and param.is_shared()


def test_sending_refuses_what_cannot_cross():
    q = FORK.SimpleQueue()
    with pytest.raises(RuntimeError, match="Cowardly refusing to serialize non-leaf tensor"):
        q.put(ct.ones(2, requires_grad=True) * 2)
    with pytest.raises(RuntimeError, match="only cpu tensors can be shared"):
        q.put(ct.empty(2, device="meta"))
    q.close()


def _fill_row(i, shared):
    shared[i] = float(i + 1)


def _fail_in_one(i):
    if i == 1:
        raise ValueError("process one broke")


def test_spawn_shares_arguments_and_reports_the_failing_process():
    shared = ct.zeros(2, 3)
    mp.spawn(_fill_row, args=(shared,), nprocs=2)
    assert shared.tolist() == [[1.0] * 3, [2.0] * 3]
    with pytest.raises(mp.ProcessRaisedException, match="process one broke") as info:
        mp.start_processes(_fail_in_one, nprocs=2, start_method="fork")
    assert info.value.error_index == 1
    ctx = mp.start_processes(_fill_row, args=(shared,), nprocs=1, join=False, start_method="fork")
    assert isinstance(ctx, mp.ProcessContext)
    while not ctx.join():
        pass


# ---- Hogwild: processes training one shared set of weights ------------------------------
def _regression_data(seed: int = 0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((32, 4))
    y = x @ np.array([[1.5], [-2.0], [0.5], [3.0]]) + 0.1
    return x, y


def _sgd_turns(rank, model, barrier, x, y, steps, lr):
    """Take every other SGD step on shared weights (process `rank` on even/odd turns)."""
    opt = ct.optim.SGD(model.parameters(), lr=lr)
    xs, ys = ct.tensor(x), ct.tensor(y)
    for turn in range(2 * steps):
        if turn % 2 == rank:
            opt.zero_grad()
            ct.nn.functional.mse_loss(model(xs), ys).backward()
            opt.step()
        barrier.wait()


def test_hogwild_two_processes_update_one_set_of_weights():
    x, y = _regression_data()
    shards = [(x[:16], y[:16]), (x[16:], y[16:])]
    model = ct.nn.Linear(4, 1).double()
    w0 = model.weight.detach().numpy().copy()
    b0 = model.bias.detach().numpy().copy()
    model.share_memory()
    barrier, steps, lr = FORK.Barrier(2), 5, 0.05
    procs = [
        FORK.Process(target=_sgd_turns, args=(r, model, barrier, *shards[r], steps, lr))
        for r in range(2)
    ]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=60)
    assert [p.exitcode for p in procs] == [0, 0]
    # the same alternating gradient steps in numpy: each process read the other's update
    w, b = w0.T.copy(), b0.copy()
    for turn in range(2 * steps):
        xs, ys = shards[turn % 2]
        err = xs @ w + b - ys
        gw, gb = 2 * xs.T @ err / err.size, 2 * err.sum(0) / err.size
        w, b = w - lr * gw, b - lr * gb
    np.testing.assert_allclose(model.weight.detach().numpy(), w.T, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(model.bias.detach().numpy(), b, rtol=1e-12, atol=1e-12)


def _hogwild_train(rank, model, x, y, steps):
    ct.manual_seed(rank)
    opt = ct.optim.SGD(model.parameters(), lr=0.02, momentum=0.5)
    xs, ys = ct.tensor(x), ct.tensor(y)
    for _ in range(steps):
        idx = ct.randint(0, xs.shape[0], (8,))
        opt.zero_grad()
        ct.nn.functional.mse_loss(model(xs[idx]), ys[idx]).backward()
        opt.step()


def test_hogwild_free_running_processes_train_the_parents_model():
    # the shape of PyTorch's mnist_hogwild example: share_memory, then Process per rank
    x, y = _regression_data(1)
    model = ct.nn.Linear(4, 1).double()
    model.share_memory()

    def loss() -> float:
        return ct.nn.functional.mse_loss(model(ct.tensor(x)), ct.tensor(y)).item()

    start = loss()
    procs = [FORK.Process(target=_hogwild_train, args=(r, model, x, y, 150)) for r in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=60)
    assert [p.exitcode for p in procs] == [0, 0]
    assert loss() < 0.01 * start


def _big_parallel_ops(q):
    a = ct.ones(1 << 20, dtype=ct.float64)
    q.put(float((ct.exp(a * 0) + a).sum()))


def test_forked_child_runs_parallel_kernels_after_the_parent_did():
    # the parent's first large kernels start the cpu backend's threads before the fork
    a = ct.ones(1 << 20, dtype=ct.float64)
    assert float((ct.exp(a * 0) + a).sum()) == 2.0 * (1 << 20)
    q = FORK.SimpleQueue()
    p = FORK.Process(target=_big_parallel_ops, args=(q,))
    p.start()
    p.join(timeout=60)
    assert p.exitcode == 0 and q.get() == 2.0 * (1 << 20)


def test_shared_memory_is_returned_when_tensors_die():
    gc.collect()
    before, names = memfd_usage(), shm_names()
    ts = [ct.randn(100).share_memory_() for _ in range(5)]
    views = [t[10:] for t in ts]
    q = FORK.Queue()
    p = FORK.Process(target=_add_and_send_back, args=(q, ts[0]))
    p.start()
    got = [q.get(timeout=60), q.get(timeout=60)]
    p.join(timeout=60)
    fds, maps = memfd_usage()
    assert fds >= before[0] + 6 and maps >= before[1] + 6
    del ts, views, got
    gc.collect()
    assert memfd_usage() == before
    assert shm_names() <= names
