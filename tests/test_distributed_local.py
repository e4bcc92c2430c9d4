"""coretorch.distributed pieces that run in one process: the sampler, the object encoding,
backend discovery and argument errors."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import coretorch as ct
import coretorch.distributed as dist
from coretorch.distributed.object_codec import decode, encode
from coretorch.utils.data.distributed import DistributedSampler


# ---- DistributedSampler ----
@pytest.mark.parametrize("n,replicas", [(10, 3), (12, 4), (7, 2), (2, 5), (1, 1)])
@pytest.mark.parametrize("drop_last", [False, True])
@pytest.mark.parametrize("shuffle", [False, True])
def test_sampler_partitions_the_dataset(n, replicas, drop_last, shuffle):
    data = list(range(n))
    shares = [
        list(DistributedSampler(data, replicas, r, shuffle=shuffle, seed=3, drop_last=drop_last))
        for r in range(replicas)
    ]
    lengths = {len(s) for s in shares}
    assert len(lengths) == 1, "every rank gets the same number of samples"
    per = lengths.pop()
    assert per == len(DistributedSampler(data, replicas, 0, drop_last=drop_last))
    flat = [i for s in shares for i in s]
    if drop_last:
        assert per == n // replicas
        assert len(set(flat)) == len(flat), "drop_last: no index twice"
    else:
        assert per == -(-n // replicas)
        assert set(flat) == set(data), "every index is used"
        counts = np.bincount(flat, minlength=n)
        assert counts.max() - counts.min() <= max(1, -(-replicas // n)), "padding repeats few"


def test_sampler_matches_pytorch_without_shuffle_and_reshuffles_per_epoch():
    torch = pytest.importorskip("torch")
    from torch.utils.data.distributed import DistributedSampler as TorchSampler

    for n, reps, drop in ((10, 3, False), (10, 3, True), (3, 5, False)):
        for r in range(reps):
            want = list(TorchSampler(range(n), reps, r, shuffle=False, drop_last=drop))
            assert (
                list(DistributedSampler(range(n), reps, r, shuffle=False, drop_last=drop)) == want
            )
    del torch
    s = [DistributedSampler(range(50), 2, r, shuffle=True, seed=1) for r in range(2)]
    e0 = [list(x) for x in s]
    for x in s:
        x.set_epoch(1)
    e1 = [list(x) for x in s]
    assert e0 != e1 and sorted(e0[0] + e0[1]) == sorted(e1[0] + e1[1]) == list(range(50))
    again = DistributedSampler(range(50), 2, 0, shuffle=True, seed=1)
    assert list(again) == e0[0], "same seed and epoch, same order on every rank"


def test_sampler_errors():
    with pytest.raises(ValueError, match=r"Invalid rank 3, rank should be in the interval"):
        DistributedSampler(range(4), num_replicas=3, rank=3)
    with pytest.raises(RuntimeError, match="init_process_group"):
        DistributedSampler(range(4))


# ---- object encoding ----
def test_object_encoding_round_trips_supported_types():
    obj = {
        "a": [1, 2.5, None, True, "s"],
        7: (b"\x00\xff", float("inf")),
        (1, 2): np.arange(6, dtype=np.int32).reshape(2, 3),
        "t": ct.tensor([[1.0, 2.0]], requires_grad=True),
        "big": 2**80,
    }
    back = decode(encode(obj))
    assert back.keys() == obj.keys()
    assert back["a"] == obj["a"] and back[7] == obj[7] and back["big"] == 2**80
    assert back[(1, 2)].dtype == np.int32 and np.array_equal(back[(1, 2)], obj[(1, 2)])
    assert back["t"].requires_grad and np.array_equal(back["t"].detach().numpy(), [[1.0, 2.0]])


def test_object_encoding_refuses_arbitrary_objects_and_code():
    class Custom:
        pass

    with pytest.raises(TypeError, match=r"f\(\): cannot send an object of type Custom"):
        encode([Custom()], "f")
    with pytest.raises(TypeError, match="never pickled"):
        encode(np.array([object()], dtype=object))
    bad = encode(np.arange(3)).replace(b'"<i8"', b'"|O8"')
    with pytest.raises((ValueError, TypeError)):
        decode(bad)
    raw = encode(b"abc")
    with pytest.raises(ValueError, match="outside"):
        decode(raw[:-2])


# ---- discovery and errors without a job ----
def test_backends_are_discovered_with_their_status():
    found = dist.distributed_backends()
    assert found["mpi"].status == "available" and found["mpi"].device_types == ["cpu"]
    nccl = found.get("nccl")
    if nccl is not None:
        assert nccl.device_types == ["cuda"]
        assert nccl.status in ("available", "unavailable") and nccl.reason
        assert dist.is_nccl_available() == (nccl.status == "available")
    assert dist.is_available() and dist.is_mpi_available()


def test_python_m_coretorch_lists_distributed_backends():
    r = subprocess.run(
        [sys.executable, "-m", "coretorch"],
        capture_output=True,
        text=True,
        timeout=120,
        env={"COLUMNS": "200", **__import__("os").environ},
    )
    assert r.returncode == 0, r.stderr
    assert "distributed (process-group) backends" in r.stdout
    assert "mpi" in r.stdout and "available: mpi4py" in r.stdout


@pytest.mark.skipif(dist.is_nccl_available(), reason="a GPU with NCCL is present here")
def test_nccl_unavailable_says_why():
    with pytest.raises(RuntimeError, match="backend 'nccl' is unavailable: "):
        dist.init_process_group("nccl")
    assert not dist.is_initialized()


def test_calls_before_init_and_bad_arguments():
    assert not dist.is_initialized()
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        dist.all_reduce(ct.ones(2))
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        dist.get_rank()
    with pytest.raises(ValueError, match="unknown backend 'gloo'"):
        dist.init_process_group("gloo")
    with pytest.raises(NotImplementedError, match="init_method='tcp://h:1'"):
        dist.init_process_group("mpi", init_method="tcp://h:1")
    with pytest.raises(TypeError, match="timeout must be a datetime.timedelta"):
        dist.init_process_group("mpi", timeout=5)
    with pytest.raises(ValueError, match="expected one of OFF, INFO, DETAIL"):
        __import__("os").environ["TORCH_DISTRIBUTED_DEBUG"] = "LOUD"
        try:
            dist.set_debug_level_from_env()
        finally:
            del __import__("os").environ["TORCH_DISTRIBUTED_DEBUG"]
