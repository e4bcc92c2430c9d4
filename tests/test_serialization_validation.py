"""coretorch.load validates before it reads: header first (size-capped, depth-capped), every
offset against the real file size, dtype/shape/byte counts against the safetensors header; tensors
are read by offset (one copy) or memory-mapped; every malformed file raises CheckpointError (a
RuntimeError) naming the file."""

from __future__ import annotations

import io
import json
import os
import pickle
import random
import struct
import tracemalloc

import numpy as np
import pytest

import coretorch as ct
from coretorch.serialization import CheckpointError

MiB = 1 << 20


def _save_plain(path, obj=None):
    ct.save({"w": ct.ones(2, 2), "n": [1, 2]} if obj is None else obj, path)
    return path


def _split(path):
    data = path.read_bytes()
    (n,) = struct.unpack("<Q", data[:8])
    return json.loads(data[8 : 8 + n]), data[8 + n :]


def _write(path, header, body: bytes, raw_header: bytes | None = None):
    text = raw_header if raw_header is not None else json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(text)) + text + body)


def _doc(header):
    return json.loads(header["__metadata__"]["coretorch"])


def _set_doc(header, doc):
    header["__metadata__"]["coretorch"] = json.dumps(doc)


def _peak_while(fn):
    tracemalloc.start()
    try:
        out = fn()
        return out, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


# ---- streaming: the header is read and checked before any data -----------------------------


class _EndlessZeros(io.RawIOBase):
    """A stream of zeros that fails the test once more than 1 MiB has been read from it."""

    def __init__(self):
        self.served = 0

    def readable(self):
        return True

    def readinto(self, b):
        self.served += len(b)
        assert self.served <= MiB, "load() kept reading an endless stream"
        b[:] = bytes(len(b))
        return len(b)


def test_an_endless_stream_is_refused_without_reading_it():
    stream = _EndlessZeros()
    with pytest.raises(CheckpointError, match="not seekable"):
        ct.load(stream)
    assert stream.served == 0


def test_a_huge_file_with_a_valid_start_is_refused_without_reading_it(tmp_path):
    path = _save_plain(tmp_path / "ckpt.pt")
    with open(path, "r+b") as f:
        f.truncate(256 * MiB)  # sparse: the valid checkpoint, then 256 MiB of zeros
    info, peak = _peak_while(lambda: pytest.raises(CheckpointError, ct.load, path))
    assert "need 16 bytes of data, the file has" in str(info.value)
    assert repr(str(path)) in str(info.value)
    assert peak < 4 * MiB


def test_the_header_size_is_capped(tmp_path):
    path = tmp_path / "big_header.pt"
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", 200_000_000) + b"{")
        f.truncate(200_000_100)
    info, peak = _peak_while(lambda: pytest.raises(CheckpointError, ct.load, path))
    assert "claims 200000000 bytes, more than the 100000000-byte limit" in str(info.value)
    assert peak < 4 * MiB


def test_saving_and_loading_peak_at_one_copy_of_the_data(tmp_path):
    path = tmp_path / "ckpt.pt"
    obj = {"w": ct.ones(4 * MiB), "b": ct.zeros(10)}  # 16 MiB of float32
    _, peak = _peak_while(lambda: ct.save(obj, path))
    assert peak < 2 * MiB, f"save() peaked at {peak / MiB:.1f} MiB over its 16 MiB input"
    got, peak = _peak_while(lambda: ct.load(path))
    assert float(got["w"].sum()) == 4 * MiB
    assert peak < 1.25 * 16 * MiB, f"peak {peak / MiB:.1f} MiB for 16 MiB of tensors"


def test_mmap_maps_the_file_copy_on_write(tmp_path):
    path = tmp_path / "ckpt.pt"
    ct.save(
        {"w": ct.arange(4 * MiB, dtype=ct.float32), "i": ct.tensor([1, 2], dtype=ct.int8)}, path
    )
    before = path.read_bytes()
    got, peak = _peak_while(lambda: ct.load(path, mmap=True))
    assert peak < 2 * MiB
    assert float(got["w"][123]) == 123.0 and got["i"].tolist() == [1, 2]
    got["w"].add_(1.0)  # a private copy of the touched pages: the file is unchanged
    assert float(got["w"][123]) == 124.0 and path.read_bytes() == before
    with pytest.raises(ValueError, match="file path in order to use the mmap"):
        ct.load(io.BytesIO(before), mmap=True)


def test_files_that_are_not_regular_are_refused():
    if os.path.exists("/dev/zero"):
        with pytest.raises(CheckpointError, match="'/dev/zero' is not a regular file"):
            ct.load("/dev/zero")


# ---- the JSON skeleton must agree with the safetensors header -------------------------------


def test_a_dtype_that_disagrees_with_the_stored_bytes_is_an_error(tmp_path):
    path = _save_plain(tmp_path / "ckpt.pt")
    header, body = _split(path)
    doc = _doc(header)
    rec = doc["object"]["__dict__"][0][1]["__tensor__"]
    rec["dtype"] = "int8"  # the bytes are F32
    _set_doc(header, doc)
    _write(path, header, body)
    with pytest.raises(CheckpointError, match=r"is int8, but its bytes 't0' are stored as F32"):
        ct.load(path)


def test_a_byte_count_that_disagrees_with_dtype_and_shape_is_an_error(tmp_path):
    path = _save_plain(tmp_path / "ckpt.pt")
    header, body = _split(path)
    header["t0"]["shape"] = [3, 2]  # 24 bytes of F32, but the offsets span 16
    _write(path, header, body)
    with pytest.raises(CheckpointError, match="which is 24 bytes, but its data_offsets span 16"):
        ct.load(path)


def test_a_view_reaching_past_its_storage_is_an_error(tmp_path):
    path = _save_plain(tmp_path / "ckpt.pt")
    header, body = _split(path)
    doc = _doc(header)
    doc["object"]["__dict__"][0][1]["__tensor__"]["offset"] = 1  # 2x2 from element 1 of 4
    _set_doc(header, doc)
    _write(path, header, body)
    with pytest.raises(CheckpointError, match="reach element 5 of a storage of 4 elements"):
        ct.load(path)


# ---- every malformed file raises CheckpointError naming it -----------------------------------


def _mutate_entry(fn):
    def apply(header):
        fn(header["t0"])

    return apply


def _mutate_doc(fn):
    def apply(header):
        doc = _doc(header)
        fn(doc)
        _set_doc(header, doc)

    return apply


def _tensor_rec(doc):
    return doc["object"]["__dict__"][0][1]["__tensor__"]


_MALFORMED = {
    "entry is a string": _mutate_entry(lambda e: (e.clear(), e.update({"x": 1}))),
    "unknown entry dtype": _mutate_entry(lambda e: e.update(dtype="F99")),
    "shape of strings": _mutate_entry(lambda e: e.update(shape=["2", 2])),
    "negative shape": _mutate_entry(lambda e: e.update(shape=[-2, -2])),
    "data_offsets of strings": _mutate_entry(lambda e: e.update(data_offsets=["0", 16])),
    "data_offsets reversed": _mutate_entry(lambda e: e.update(data_offsets=[16, 0])),
    "data_offsets past the end": _mutate_entry(lambda e: e.update(data_offsets=[0, 1 << 40])),
    "metadata not an object": lambda h: h.update({"__metadata__": ["coretorch"]}),
    "metadata value not a string": lambda h: h["__metadata__"].update(coretorch=5),
    "metadata not JSON": lambda h: h["__metadata__"].update(coretorch="{"),
    "document without object": _mutate_doc(lambda d: d.pop("object")),
    "unknown format": _mutate_doc(lambda d: d.update(format="other/9")),
    "document is a list": lambda h: h["__metadata__"].update(coretorch="[1]"),
    "tensor record not an object": _mutate_doc(
        lambda d: d["object"]["__dict__"][0].__setitem__(1, {"__tensor__": 3})
    ),
    "record without bytes": _mutate_doc(lambda d: _tensor_rec(d).pop("storage")),
    "record names a missing entry": _mutate_doc(lambda d: _tensor_rec(d).update(storage="t9")),
    "record with unknown dtype": _mutate_doc(lambda d: _tensor_rec(d).update(dtype="float99")),
    "record stride of another rank": _mutate_doc(lambda d: _tensor_rec(d).update(stride=[1])),
    "record offset a string": _mutate_doc(lambda d: _tensor_rec(d).update(offset="0")),
    "record id a string": _mutate_doc(lambda d: _tensor_rec(d).update(id="x")),
    "requires_grad a string": _mutate_doc(lambda d: _tensor_rec(d).update(requires_grad="yes")),
    "dict items not pairs": _mutate_doc(lambda d: d["object"].update(__dict__=[[1, 2, 3]])),
    "dict items not a list": _mutate_doc(lambda d: d["object"].update(__dict__={"a": 1})),
    "unhashable dict key": _mutate_doc(lambda d: d["object"].update(__dict__=[[[1], 2]])),
    "unknown tag": _mutate_doc(lambda d: d.update(object={"__pickle__": "x"})),
    "node with two keys": _mutate_doc(lambda d: d.update(object={"a": 1, "b": 2})),
    "bad float": _mutate_doc(lambda d: d.update(object={"__float__": "many"})),
    "bad device": _mutate_doc(lambda d: d.update(object={"__device__": "warp:9"})),
    "bad dtype": _mutate_doc(lambda d: d.update(object={"__dtype__": "complex999"})),
    "tuple of a number": _mutate_doc(lambda d: d.update(object={"__tuple__": 5})),
    "ndarray of a list": _mutate_doc(lambda d: d.update(object={"__ndarray__": [1]})),
}


@pytest.mark.parametrize("case", sorted(_MALFORMED))
def test_malformed_files_raise_checkpoint_error_naming_the_file(tmp_path, case):
    path = _save_plain(tmp_path / "ckpt.pt")
    header, body = _split(path)
    _MALFORMED[case](header)
    _write(path, header, body)
    with pytest.raises(CheckpointError) as info:
        ct.load(path)
    assert isinstance(info.value, RuntimeError) and repr(str(path)) in str(info.value)


def test_header_layout_errors(tmp_path):
    path = _save_plain(tmp_path / "ckpt.pt")
    header, body = _split(path)
    cases = {
        b"[1, 2]": "not a JSON object",
        b'{"a": 1, "a": 2}': "duplicate key",
        b"\xff\xfe": "unreadable header",
    }
    for raw, message in cases.items():
        _write(path, None, b"", raw_header=raw)
        with pytest.raises(CheckpointError, match=message):
            ct.load(path)
    _write(path, header, body + b"extra")
    with pytest.raises(CheckpointError, match="need 16 bytes of data, the file has 21"):
        ct.load(path)
    header["t0"]["data_offsets"] = [4, 20]  # a gap before the first tensor
    header["t0"]["shape"] = [4]
    body = body + bytes(4)
    _write(path, header, body)
    with pytest.raises(CheckpointError, match="starts at byte 4 of the data section"):
        ct.load(path)


@pytest.mark.parametrize("where", ["header", "metadata"])
def test_deeply_nested_json_is_refused(tmp_path, where):
    path = tmp_path / "deep.pt"
    deep = "[" * 100_000 + "]" * 100_000
    if where == "header":
        raw = ('{"x": ' + deep + "}").encode()
    else:
        raw = json.dumps(
            {
                "__metadata__": {
                    "coretorch": '{"format": "coretorch.safetensors/2", "object": ' + deep + "}"
                }
            }
        ).encode()
    _write(path, None, b"", raw_header=raw)
    with pytest.raises(CheckpointError, match="nests 100001 levels deep, more than the limit"):
        ct.load(path)


def test_deep_objects_save_and_load(tmp_path):
    # past the JSON depth limit an object is pickled instead: save never writes what load refuses
    deep = [1]
    for _ in range(150):
        deep = [deep]
    ct.save({"deep": deep}, tmp_path / "d.pt")
    got = ct.load(tmp_path / "d.pt")["deep"]
    for _ in range(150):
        got = got[0]
    assert got == [1]


@pytest.mark.parametrize("cut", [0, 5, 8, 20, -40, -1])
def test_truncated_file_raises_clear_error(tmp_path, cut):
    path = tmp_path / "ckpt.pt"
    ct.save({"w": ct.ones(4, 4), "b": ct.zeros(4)}, path)
    data = path.read_bytes()
    path.write_bytes(data[:cut] if cut >= 0 else data[: len(data) + cut])
    with pytest.raises(CheckpointError, match="truncated or corrupted"):
        ct.load(path)


def test_corrupted_header_raises_clear_error(tmp_path):
    path = tmp_path / "ckpt.pt"
    ct.save({"w": ct.ones(4)}, path)
    data = bytearray(path.read_bytes())
    data[12] = 0xFF  # inside the JSON header
    path.write_bytes(bytes(data))
    with pytest.raises(CheckpointError, match="truncated or corrupted"):
        ct.load(path)
    path.write_bytes(struct.pack("<Q", 10**6) + b"{}")
    with pytest.raises(CheckpointError, match="header claims 1000000 bytes but only 2 follow"):
        ct.load(path)


def _fuzz(path, seed: int, rounds: int):
    """Load `rounds` damaged copies of `path`: each loads, or raises a documented error naming
    the file (CheckpointError; UnpicklingError when damage turns a pickle name into a refused
    global)."""
    data = path.read_bytes()
    rng = random.Random(seed)
    bad = path.with_name("damaged_" + path.name)
    for _ in range(rounds):
        b = bytearray(data)
        kind = rng.random()
        if kind < 0.6:
            for _ in range(rng.randint(1, 4)):
                b[rng.randrange(len(b))] = rng.randrange(256)
        elif kind < 0.8:
            del b[rng.randrange(len(b)) :]
        else:
            i = rng.randrange(len(b))
            b[i:i] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 16)))
        bad.write_bytes(bytes(b))
        try:
            ct.load(bad, map_location="cpu")
        except (CheckpointError, pickle.UnpicklingError) as e:
            assert repr(str(bad)) in str(e), str(e)


def test_random_damage_raises_only_documented_errors(tmp_path):
    import warnings

    path = tmp_path / "ckpt.pt"
    w = ct.arange(12, dtype=ct.float32).reshape(3, 4)
    ct.save(
        {
            "w": w,
            "row": w[1],
            "i": ct.tensor([1, 2], dtype=ct.int16),
            "nested": {"a": [1, 2.5, None, "s"], "t": (ct.float16, ct.device("cpu"))},
            "m": ct.empty(3, device="meta"),
        },
        path,
    )
    zipped = tmp_path / "model.pt"
    ct.save({"set": {1, 2}, "w": w, "row": w[1]}, zipped)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _fuzz(path, seed=0, rounds=150)
        _fuzz(zipped, seed=1, rounds=150)
        fixtures = os.path.join(os.path.dirname(__file__), "data", "torch_checkpoints")
        for name in ("views.pt", "views_legacy.pt"):
            copy = tmp_path / name
            copy.write_bytes(open(os.path.join(fixtures, name), "rb").read())
            _fuzz(copy, seed=2, rounds=100)


def test_numpy_payloads_keep_their_dtype(tmp_path):
    arrays = {k: np.arange(3).astype(k) for k in ("uint16", "uint32", "uint64", "int8", "bool")}
    ct.save(arrays, tmp_path / "a.pt")
    got = ct.load(tmp_path / "a.pt")
    for k, a in arrays.items():
        assert got[k].dtype == a.dtype and got[k].tolist() == a.tolist()
