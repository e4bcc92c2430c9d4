"""coretorch.save / coretorch.load: safetensors + JSON metadata, no pickle, atomic writes,
corruption detection, map_location."""
from __future__ import annotations

import io
import json
import os
import struct
from collections import OrderedDict

import numpy as np
import pytest

import coretorch as ct
import coretorch.nn as nn
import coretorch.optim as optim
import coretorch.serialization as serialization


def _model():
    ct.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 3), nn.BatchNorm1d(3), nn.Linear(3, 2))


def test_round_trip_nested_values(tmp_path):
    x = ct.arange(6, dtype=ct.float32).reshape(2, 3)
    obj = {
        "x": x, "x_again": x, "t": x.t(),  # shared and non-contiguous tensors
        "ints": ct.tensor([1, 2, 3]), "flags": ct.tensor([True, False]),
        "half": ct.tensor([1.5, -2.0], dtype=ct.float16),
        "nums": [1, 2.5, float("inf"), float("nan"), -0.0, 2 ** 60, True, None, "s"],
        "tup": (1, (2, "three")), 7: "int key", None: 1.0, 2.5: "float key",
        "od": OrderedDict([("b", 1), ("a", 2)]), "dtype": ct.int16, "device": ct.device("cpu"),
        "np": np.arange(4, dtype=np.int32), "empty": ct.zeros(0, 3), "scalar": ct.tensor(3.5),
    }
    path = tmp_path / "ckpt.pt"
    ct.save(obj, path)
    got = ct.load(path)
    assert list(got) == list(obj)
    np.testing.assert_array_equal(got["x"].numpy(), x.numpy())
    assert got["x"].dtype is ct.float32 and got["x"] is got["x_again"]
    np.testing.assert_array_equal(got["t"].numpy(), x.numpy().T)
    assert got["ints"].dtype is ct.int64 and got["ints"].tolist() == [1, 2, 3]
    assert got["flags"].dtype is ct.bool and got["flags"].tolist() == [True, False]
    assert got["half"].dtype is ct.float16 and got["half"].tolist() == [1.5, -2.0]
    nums = got["nums"]
    assert nums[:3] == [1, 2.5, float("inf")] and np.isnan(nums[3])
    assert nums[4] == 0.0 and np.signbit(nums[4]) and nums[5:] == [2 ** 60, True, None, "s"]
    assert type(nums[6]) is bool and type(nums[0]) is int
    assert got["tup"] == (1, (2, "three")) and got[7] == "int key" and got[None] == 1.0
    assert got[2.5] == "float key"
    assert isinstance(got["od"], OrderedDict) and list(got["od"]) == ["b", "a"]
    assert got["dtype"] is ct.int16 and got["device"] == ct.device("cpu")
    np.testing.assert_array_equal(got["np"], np.arange(4, dtype=np.int32))
    assert got["empty"].shape == (0, 3) and got["scalar"].shape == ()
    assert float(got["scalar"]) == 3.5


def test_the_file_is_plain_safetensors(tmp_path):
    from safetensors.numpy import load_file
    path = tmp_path / "w.safetensors"
    ct.save({"w": ct.ones(2, 2)}, path)
    arrays = load_file(str(path))
    assert len(arrays) == 1 and np.all(next(iter(arrays.values())) == 1)
    data = path.read_bytes()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    assert "coretorch" in header["__metadata__"]


def test_model_and_optimizer_checkpoint(tmp_path):
    model = _model()
    opt = optim.Adam(model.parameters(), lr=0.01)
    for p in model.parameters():
        p.grad = ct.ones_like(p)
    opt.step()
    path = tmp_path / "ckpt.pt"
    ct.save({"model": model.state_dict(), "optim": opt.state_dict(), "epoch": 3}, path)

    ck = ct.load(path)
    assert ck["epoch"] == 3
    m2 = _model()
    m2.load_state_dict(ck["model"])
    for (n, a), (_, b) in zip(model.state_dict().items(), m2.state_dict().items()):
        np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=n)
    assert m2[1].num_batches_tracked.dtype is ct.int64
    o2 = optim.Adam(m2.parameters(), lr=0.5)
    o2.load_state_dict(ck["optim"])
    assert o2.param_groups[0]["lr"] == 0.01 and o2.param_groups[0]["betas"] == (0.9, 0.999)
    st = o2.state[next(iter(m2.parameters()))]
    assert float(st["step"]) == 1.0 and st["exp_avg"].shape == (3, 4)
    assert sorted(ck["optim"]["state"]) == list(range(6))


def test_parameters_and_requires_grad_survive(tmp_path):
    p = nn.Parameter(ct.ones(2))
    q = ct.zeros(2).requires_grad_()
    ct.save({"p": p, "q": q, "r": ct.zeros(1)}, tmp_path / "a")
    got = ct.load(tmp_path / "a")
    assert isinstance(got["p"], nn.Parameter) and got["p"].requires_grad
    assert got["q"].requires_grad and not isinstance(got["q"], nn.Parameter)
    assert not got["r"].requires_grad


def test_file_objects():
    buf = io.BytesIO()
    ct.save({"a": ct.tensor([1.0, 2.0])}, buf)
    buf.seek(0)
    assert ct.load(buf)["a"].tolist() == [1.0, 2.0]
    with pytest.raises(TypeError, match="expected a path or a writable binary file"):
        ct.save({}, 42)


def test_map_location(tmp_path):
    path = tmp_path / "m"
    ct.save({"a": ct.ones(2, 3), "m": ct.empty(4, device="meta")}, path)
    got = ct.load(path, map_location="meta")
    assert got["a"].device.type == "meta" and got["a"].shape == (2, 3)
    got = ct.load(path, map_location={"cpu": "meta"})
    assert got["a"].device.type == "meta" and got["m"].device.type == "meta"
    got = ct.load(path, map_location=ct.device("cpu"))
    assert got["a"].device.type == "cpu" and got["m"].device.type == "cpu"
    assert got["m"].shape == (4,)
    seen = []
    got = ct.load(path, map_location=lambda t, loc: seen.append(loc) or t.to(ct.float64))
    assert sorted(seen) == ["cpu", "meta"] and got["a"].dtype is ct.float64
    got = ct.load(path)
    assert got["a"].device.type == "cpu" and got["m"].device.type == "meta"


def test_loading_never_executes_code(tmp_path):
    # a pickle payload that would run code if unpickled is just rejected as not a checkpoint
    import pickle

    class Evil:
        def __reduce__(self):
            return (os.system, ("echo pwned > " + str(tmp_path / "pwned"),))

    path = tmp_path / "evil.pt"
    path.write_bytes(pickle.dumps(Evil()))
    with pytest.raises(RuntimeError, match="not a valid coretorch checkpoint"):
        ct.load(path)
    assert not (tmp_path / "pwned").exists()
    with pytest.raises(TypeError, match="cannot save an object of type"):
        ct.save({"f": Evil()}, tmp_path / "x")
    with pytest.raises(TypeError, match="not pickled"):
        pickle.dumps(ct.ones(1))
    with pytest.raises(ValueError, match="never contain code"):
        ct.load(path, weights_only=False)


def test_atomic_write_keeps_old_file_on_crash(tmp_path, monkeypatch):
    path = tmp_path / "ckpt.pt"
    ct.save({"v": ct.tensor([1.0])}, path)
    before = path.read_bytes()

    def crash(*args, **kwargs):
        raise OSError("disk full (simulated)")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(OSError, match="simulated"):
        ct.save({"v": ct.tensor([2.0])}, path)
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert ct.load(path)["v"].tolist() == [1.0]
    assert sorted(os.listdir(tmp_path)) == ["ckpt.pt"]  # no temp file left behind

    # a failure while writing the temp file (e.g. killed mid-write) also leaves the old file
    real_fdopen = os.fdopen

    class Dying:
        def __init__(self, f):
            self.f = f

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.f.close()

        def write(self, data):
            self.f.write(data[: len(data) // 2])
            raise KeyboardInterrupt

    monkeypatch.setattr(os, "fdopen", lambda fd, mode: Dying(real_fdopen(fd, mode)))
    with pytest.raises(KeyboardInterrupt):
        ct.save({"v": ct.tensor([3.0])}, path)
    monkeypatch.undo()
    assert ct.load(path)["v"].tolist() == [1.0]
    assert sorted(os.listdir(tmp_path)) == ["ckpt.pt"]


@pytest.mark.parametrize("cut", [0, 5, 8, 20, -40, -1])
def test_truncated_file_raises_clear_error(tmp_path, cut):
    path = tmp_path / "ckpt.pt"
    ct.save({"w": ct.ones(4, 4), "b": ct.zeros(4)}, path)
    data = path.read_bytes()
    path.write_bytes(data[:cut] if cut >= 0 else data[:len(data) + cut])
    with pytest.raises(RuntimeError, match="truncated or corrupted"):
        ct.load(path)


def test_corrupted_header_raises_clear_error(tmp_path):
    path = tmp_path / "ckpt.pt"
    ct.save({"w": ct.ones(4)}, path)
    data = bytearray(path.read_bytes())
    data[12] = 0xFF  # inside the JSON header
    path.write_bytes(bytes(data))
    with pytest.raises(RuntimeError, match="truncated or corrupted"):
        ct.load(path)
    path.write_bytes(struct.pack("<Q", 10 ** 12) + b"{}")
    with pytest.raises(RuntimeError, match="header claims"):
        ct.load(path)


def test_plain_safetensors_without_metadata_is_reported(tmp_path):
    from safetensors.numpy import save_file
    path = tmp_path / "plain.safetensors"
    save_file({"a": np.zeros(2, dtype=np.float32)}, str(path))
    with pytest.raises(RuntimeError, match="without coretorch metadata"):
        ct.load(path)


def test_serialization_module_api():
    assert ct.save is serialization.save and ct.load is serialization.load
