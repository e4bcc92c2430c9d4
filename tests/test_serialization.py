"""coretorch.save / coretorch.load of coretorch's own format: round trips, map_location, meta
tensors, storage sharing between views, plain safetensors files."""

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
        "x": x,
        "x_again": x,
        "t": x.t(),  # shared and non-contiguous tensors
        "ints": ct.tensor([1, 2, 3]),
        "flags": ct.tensor([True, False]),
        "half": ct.tensor([1.5, -2.0], dtype=ct.float16),
        "nums": [1, 2.5, float("inf"), float("nan"), -0.0, 2**60, True, None, "s"],
        "tup": (1, (2, "three")),
        7: "int key",
        None: 1.0,
        2.5: "float key",
        "od": OrderedDict([("b", 1), ("a", 2)]),
        "dtype": ct.int16,
        "device": ct.device("cpu"),
        "np": np.arange(4, dtype=np.int32),
        "empty": ct.zeros(0, 3),
        "scalar": ct.tensor(3.5),
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
    assert nums[4] == 0.0 and np.signbit(nums[4]) and nums[5:] == [2**60, True, None, "s"]
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
    header = json.loads(data[8 : 8 + n])
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
    assert got["a"].device.type == "cpu" and got["a"].tolist() == [[1.0] * 3] * 2
    # as in PyTorch, a callable gets each storage (a 1-D cpu tensor) and its saved location
    seen = []
    got = ct.load(path, map_location=lambda s, loc: seen.append((loc, s.shape)) or s.double())
    assert seen == [("cpu", (6,))] and got["a"].dtype is ct.float64 and got["a"].shape == (2, 3)
    got = ct.load(path, map_location=lambda s, loc: None)  # None: the default placement
    assert got["a"].device.type == "cpu"
    with pytest.raises(TypeError, match="map_location must be None, a device"):
        ct.load(path, map_location=3)


def test_meta_tensors_stay_meta(tmp_path):
    path = tmp_path / "m.pt"
    ct.save(
        {"w": ct.ones(4, device="meta"), "p": nn.Parameter(ct.empty(2, 3, device="meta"))}, path
    )
    for where in ("cpu", ct.device("cpu"), {"meta": "cpu"}, lambda s, loc: s):
        got = ct.load(path, map_location=where)
        assert got["w"].device.type == "meta" and got["w"].shape == (4,)
        assert got["p"].device.type == "meta" and isinstance(got["p"], nn.Parameter)


def test_a_record_without_bytes_never_becomes_data(tmp_path):
    import tracemalloc

    path = tmp_path / "crafted.pt"
    # a small file that claims a 1 GiB tensor: it can only ever be a meta tensor
    doc = {
        "format": "coretorch.safetensors/2",
        "object": {
            "__tensor__": {
                "id": 0,
                "meta": True,
                "dtype": "float32",
                "shape": [2**28],
                "device": "cpu",
                "requires_grad": False,
            }
        },
    }
    header = json.dumps({"__metadata__": {"coretorch": json.dumps(doc)}}).encode()
    path.write_bytes(struct.pack("<Q", len(header)) + header)
    assert len(path.read_bytes()) < 300
    tracemalloc.start()
    try:
        got = ct.load(path, map_location="cpu")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert got.device.type == "meta" and got.shape == (2**28,) and peak < 1 << 20
    doc["object"]["__tensor__"].pop("meta")  # neither meta nor backed by bytes
    header = json.dumps({"__metadata__": {"coretorch": json.dumps(doc)}}).encode()
    path.write_bytes(struct.pack("<Q", len(header)) + header)
    with pytest.raises(RuntimeError, match="has no stored bytes and is not a meta tensor"):
        ct.load(path, map_location="cpu")


def test_views_share_storage_with_their_base_after_loading(tmp_path):
    w = ct.arange(12, dtype=ct.float32).reshape(3, 4)
    obj = {"a": w, "v": w[0], "t": w.t(), "cols": w[:, 1:3], "again": w}
    path = tmp_path / "views.pt"
    ct.save(obj, path)
    got = ct.load(path)
    assert got["again"] is got["a"]
    for k in ("v", "t", "cols"):
        assert got[k].untyped_storage() is got["a"].untyped_storage(), k
        np.testing.assert_array_equal(got[k].numpy(), obj[k].numpy())
        assert not got[k]._is_view()  # like PyTorch's loaded tensors: shared, not autograd views
    got["a"][0, 0] = 100.0
    assert float(got["v"][0]) == 100.0 and float(got["t"][0, 0]) == 100.0
    data = path.read_bytes()
    header = json.loads(data[8 : 8 + struct.unpack("<Q", data[:8])[0]])
    entries = [v for k, v in header.items() if k != "__metadata__"]
    assert [e["shape"] for e in entries] == [[12]]  # the 48 bytes of data are stored once
    on_meta = ct.load(path, map_location="meta")
    assert on_meta["cols"].shape == (3, 2) and on_meta["cols"].stride() == (4, 1)


def test_a_slice_saves_only_the_part_it_uses(tmp_path):
    big = ct.arange(100_000, dtype=ct.float32)
    ct.save({"part": big[10:13], "step": big[20:30:5]}, tmp_path / "p.pt")
    assert os.path.getsize(tmp_path / "p.pt") < 1000
    got = ct.load(tmp_path / "p.pt")
    assert got["part"].tolist() == [10.0, 11.0, 12.0] and got["step"].tolist() == [20.0, 25.0]
    assert got["part"].untyped_storage() is got["step"].untyped_storage()


def test_parameters_sharing_storage_stay_shared(tmp_path):
    model = nn.Linear(3, 3)
    tied = {"weight": model.weight, "alias": model.weight, "row": model.weight[0]}
    ct.save(tied, tmp_path / "t.pt")
    got = ct.load(tmp_path / "t.pt")
    assert got["alias"] is got["weight"] and isinstance(got["weight"], nn.Parameter)
    assert got["row"].untyped_storage() is got["weight"].untyped_storage()


def test_plain_safetensors_files_load_as_a_dict_of_tensors(tmp_path):
    from safetensors.numpy import save_file

    path = tmp_path / "plain.safetensors"
    save_file({"a": np.arange(3, dtype=np.float32), "b": np.ones((2, 2), np.int64)}, str(path))
    got = ct.load(path)
    assert sorted(got) == ["a", "b"] and got["a"].tolist() == [0.0, 1.0, 2.0]
    assert got["b"].dtype is ct.int64 and got["b"].shape == (2, 2)
    assert ct.load(path, map_location="meta")["b"].device.type == "meta"


def test_serialization_module_api():
    assert ct.save is serialization.save and ct.load is serialization.load
    for name in (
        "add_safe_globals",
        "get_safe_globals",
        "clear_safe_globals",
        "safe_globals",
        "get_unsafe_globals_in_checkpoint",
        "CheckpointError",
        "DEFAULT_PROTOCOL",
    ):
        assert hasattr(serialization, name), name
    assert issubclass(serialization.CheckpointError, RuntimeError)


def test_map_location_callable_errors_surface_unchanged(tmp_path):
    ct.save({"a": ct.ones(2)}, tmp_path / "a.pt")

    def broken(storage, location):
        raise KeyError("my own bug")

    with pytest.raises(KeyError, match="my own bug"):
        ct.load(tmp_path / "a.pt", map_location=broken)
    with pytest.raises(TypeError, match="map_location must return None or a tensor"):
        ct.load(tmp_path / "a.pt", map_location=lambda s, loc: "cpu")


def test_checkpoints_of_the_first_format_still_load():
    # written by coretorch before storage sharing (one contiguous entry per tensor, "key")
    path = os.path.join(os.path.dirname(__file__), "data", "coretorch_checkpoints", "format1.ckpt")
    got = ct.load(path)
    assert got["w"].tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]] and got["again"] is got["w"]
    assert isinstance(got["p"], nn.Parameter) and got["p"].tolist() == [1.0, -1.0]
    assert got["i"].dtype is ct.int16 and got["m"].device.type == "meta"
    assert got["nums"] == [1, 2.5, float("inf")] and got["tup"] == (1, "a")
    assert got["dtype"] is ct.float16


def test_a_header_length_of_128_is_not_read_as_a_legacy_pickle(tmp_path):
    # safetensors starts with its header length: 128 makes the first byte 0x80, the byte that
    # also starts PyTorch's legacy pickles; the format is told by the magic number instead
    path = tmp_path / "small.pt"
    ct.save({"step": 3, "lr": 0.1}, path)
    assert path.read_bytes()[:8] == (128).to_bytes(8, "little")
    assert ct.load(path) == {"step": 3, "lr": 0.1}
