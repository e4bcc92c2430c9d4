"""Checkpoints the way PyTorch programs write them: PyTorch's own files (zip and legacy formats,
recorded by tests/data/torch_checkpoints/record.py) load without PyTorch; save(model) and any
picklable object; weights_only=True by default with PyTorch's refusal message, safe globals,
and the TORCH_FORCE_*_WEIGHTS_ONLY_LOAD environment variables."""

from __future__ import annotations

import dataclasses
import io
import os
import pickle
import sys
import warnings
from collections import OrderedDict

import numpy as np
import pytest

import coretorch as ct
import coretorch.nn as nn
import coretorch.optim as optim
from coretorch import serialization
from coretorch.serialization import CheckpointError

DATA = os.path.join(os.path.dirname(__file__), "data", "torch_checkpoints")
EXPECTED = np.load(os.path.join(DATA, "expected.npz"))


def fixture(name: str) -> str:
    return os.path.join(DATA, name)


def _check(prefix: str, loaded: dict) -> None:
    keys = [k.split("/", 1)[1] for k in EXPECTED.files if k.startswith(prefix + "/")]
    assert keys
    for k in keys:
        want = EXPECTED[f"{prefix}/{k}"]
        got = loaded[k].detach().numpy()
        assert got.shape == want.shape, k
        np.testing.assert_array_equal(got, want.astype(got.dtype), err_msg=k)


@pytest.fixture(autouse=True)
def _clean_safe_globals():
    serialization.clear_safe_globals()
    yield
    serialization.clear_safe_globals()


# ---- reading PyTorch's files ------------------------------------------------------------------


def test_reads_a_pytorch_state_dict_into_a_coretorch_model():
    sd = ct.load(fixture("state_dict.pt"))
    assert isinstance(sd, OrderedDict) and list(sd)[:2] == ["0.weight", "0.bias"]
    _check("state_dict", sd)
    assert sd["1.num_batches_tracked"].dtype is ct.int64
    model = nn.Sequential(nn.Linear(4, 3), nn.BatchNorm1d(3), nn.Linear(3, 2))
    model.load_state_dict(sd)
    np.testing.assert_array_equal(model[0].weight.detach().numpy(), EXPECTED["state_dict/0.weight"])


def test_reads_a_pytorch_training_checkpoint():
    ck = ct.load(fixture("training.pt"))
    assert ck["epoch"] == 3
    _check("training_model", ck["model"])
    _check("training_exp_avg", {str(k): v["exp_avg"] for k, v in ck["optim"]["state"].items()})
    model = nn.Sequential(nn.Linear(4, 3), nn.BatchNorm1d(3), nn.Linear(3, 2))
    model.load_state_dict(ck["model"])
    opt = optim.Adam(model.parameters(), lr=0.5)
    opt.load_state_dict(ck["optim"])
    assert opt.param_groups[0]["lr"] == 0.01 and opt.param_groups[0]["betas"] == (0.9, 0.999)


def test_reads_tensors_of_every_dtype():
    with pytest.warns(UserWarning) as record:
        got = ct.load(fixture("dtypes.pt"))
    notes = " ".join(str(w.message) for w in record)
    assert "bfloat16" not in notes  # loaded as itself
    assert "uint16" in notes and "uint32" in notes
    want = {
        "float16": ct.float16,
        "float32": ct.float32,
        "float64": ct.float64,
        "bfloat16": ct.bfloat16,
        "int8": ct.int8,
        "uint8": ct.uint8,
        "int16": ct.int16,
        "int32": ct.int32,
        "int64": ct.int64,
        "bool": ct.bool,
        "uint16": ct.int32,
        "uint32": ct.int64,
    }
    assert {k: v.dtype for k, v in got.items()} == want
    _check("dtypes", got)


@pytest.mark.parametrize("name", ["views.pt", "views_legacy.pt"])
def test_reads_views_parameters_meta_and_python_values(name):
    ck = ct.load(fixture(name))
    v, extras = ck["views"], ck["extras"]
    _check("views", v)
    for k in ("row", "t", "cols"):
        assert v[k].untyped_storage() is v["a"].untyped_storage(), k
    assert v["t"].stride() == (1, 4) and v["cols"].storage_offset() == 1
    assert isinstance(v["p"], nn.Parameter) and v["p"].requires_grad
    assert v["grad"].requires_grad and v["grad"].is_leaf
    assert v["meta"].device.type == "meta" and v["meta"].shape == (2, 3)
    assert v["scalar"].shape == () and v["empty"].shape == (0, 3)
    assert extras == {
        "int": 7,
        "float": 0.25,
        "str": "x",
        "none": None,
        "tuple": (1, "two"),
        "list": [1.5, 2],
        "dtype": ct.float16,
        "device": ct.device("cpu"),
        "size": (2, 3),
    }
    assert isinstance(extras["size"], ct.Size)
    on_meta = ct.load(fixture(name), map_location="meta")["views"]
    assert on_meta["cols"].device.type == "meta" and on_meta["cols"].shape == (3, 2)


def test_reads_pytorch_files_without_pytorch(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # `import torch` now fails
    with pytest.raises(ImportError):
        import torch  # noqa: F401
    _check("state_dict", ct.load(fixture("state_dict.pt")))
    _check("views", ct.load(fixture("views_legacy.pt"))["views"])


def test_a_whole_pytorch_model_needs_weights_only_false():
    with pytest.raises(pickle.UnpicklingError) as info:
        ct.load(fixture("model.pt"))
    msg = str(info.value)
    assert "Weights only load failed" in msg
    assert (
        "Unsupported global: GLOBAL torch.nn.modules.container.Sequential was not an allowed "
        "global by default. Please use `coretorch.serialization.add_safe_globals("
        "[torch.nn.modules.container.Sequential])`"
    ) in msg
    model = ct.load(fixture("model.pt"), weights_only=False)  # torch.nn.X -> coretorch.nn.X
    assert isinstance(model, nn.Sequential) and isinstance(model[1], nn.Tanh)
    y = model(ct.from_numpy(EXPECTED["model/x"]))
    np.testing.assert_allclose(y.detach().numpy(), EXPECTED["model/y"], rtol=1e-6, atol=1e-7)
    # allowlisting the coretorch classes lets weights_only=True rebuild it too
    with serialization.safe_globals([nn.Sequential, nn.Linear, nn.Tanh]):
        assert isinstance(ct.load(fixture("model.pt")), nn.Sequential)


def test_complex_checkpoint_loads():
    z = ct.load(fixture("complex.pt"))["z"]
    assert z.dtype is ct.complex64 and z.tolist() == [1 + 2j]


def test_what_coretorch_cannot_represent_is_a_clear_error():
    with pytest.raises(CheckpointError, match="is a TorchScript archive"):
        ct.load(fixture("scripted.pt"))


def test_reads_plain_safetensors_written_by_pytorch():
    got = ct.load(fixture("plain_bf16.safetensors"))
    assert got["bf"].dtype is ct.bfloat16
    np.testing.assert_array_equal(got["bf"].float().numpy(), EXPECTED["dtypes/bfloat16"])
    np.testing.assert_array_equal(got["f"].numpy(), EXPECTED["dtypes/float32"])


# ---- save(model) and any picklable object -----------------------------------------------------


@dataclasses.dataclass
class Config:
    width: int
    tags: set


class TinyNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
        self.register_buffer("scale", ct.tensor([2.0]))

    def forward(self, x):
        return self.fc(x) * self.scale


def test_save_a_whole_model(tmp_path):
    ct.manual_seed(0)
    model = TinyNet()
    path = tmp_path / "model.pt"
    ct.save(model, path)
    with pytest.raises(
        pickle.UnpicklingError, match=f"GLOBAL {__name__}.TinyNet was not an allowed"
    ):
        ct.load(path)
    got = ct.load(path, weights_only=False)
    x = ct.randn(4, 3)
    np.testing.assert_array_equal(got(x).detach().numpy(), model(x).detach().numpy())
    assert isinstance(got.fc.weight, nn.Parameter) and got.fc.weight.requires_grad
    with serialization.safe_globals([TinyNet, nn.Linear]):
        again = ct.load(path)
    np.testing.assert_array_equal(again(x).detach().numpy(), model(x).detach().numpy())


def test_save_any_picklable_object(tmp_path):
    w = ct.arange(6, dtype=ct.float32).reshape(2, 3)
    obj = {
        "cfg": Config(4, {"a"}),
        "blob": b"\x00\x01",
        "w": w,
        "row": w[1],
        "counts": {1, 2, 3},
        "frozen": frozenset([1]),
    }
    path = tmp_path / "obj.pt"
    ct.save(obj, path)
    with open(path, "rb") as f:
        assert f.read(4) == b"PK\x03\x04"  # PyTorch's zip format
    with pytest.raises(pickle.UnpicklingError, match=f"GLOBAL {__name__}.Config was not"):
        ct.load(path)
    got = ct.load(path, weights_only=False)
    assert got["cfg"] == Config(4, {"a"}) and got["blob"] == b"\x00\x01"
    assert got["counts"] == {1, 2, 3} and got["frozen"] == frozenset([1])
    assert got["row"].untyped_storage() is got["w"].untyped_storage()
    assert got["row"].tolist() == [3.0, 4.0, 5.0]
    serialization.add_safe_globals([Config, frozenset])  # frozenset is not allowed by default
    assert ct.load(path)["cfg"] == Config(4, {"a"})


_CALLS: list = []


def _record_call(arg):
    _CALLS.append(arg)
    return arg


class _RunsCodeWhenUnpickled:
    def __reduce__(self):
        return (_record_call, ("ran",))


class _RunsShellWhenUnpickled:
    def __reduce__(self):
        return (os.system, ("echo unsafe",))


def test_weights_only_load_never_runs_code(tmp_path):
    path = tmp_path / "payload.pt"
    path.write_bytes(pickle.dumps(_RunsShellWhenUnpickled(), protocol=2))
    with pytest.raises(
        pickle.UnpicklingError, match="whose module posix is blocked|whose module nt is blocked"
    ):
        ct.load(path)
    ct.save({"x": _RunsCodeWhenUnpickled()}, path)  # save pickles it (as torch.save would)
    _CALLS.clear()
    with pytest.raises(pickle.UnpicklingError, match="_record_call was not an allowed global"):
        ct.load(path)
    assert _CALLS == []
    assert ct.load(path, weights_only=False) == {"x": "ran"} and _CALLS == ["ran"]


def test_safe_globals_api():
    serialization.add_safe_globals([Config, (TinyNet, "old.module.Net")])
    assert set(serialization.get_safe_globals()) == {Config, (TinyNet, "old.module.Net")}
    with serialization.safe_globals([nn.Linear]):
        assert nn.Linear in serialization.get_safe_globals()
    assert nn.Linear not in serialization.get_safe_globals()
    serialization.clear_safe_globals()
    assert serialization.get_safe_globals() == []
    with pytest.raises(ValueError, match="tuple of length 2"):
        serialization.add_safe_globals([(Config,)])


def test_get_unsafe_globals_in_checkpoint(tmp_path):
    assert serialization.get_unsafe_globals_in_checkpoint(fixture("model.pt")) == [
        "torch.nn.modules.activation.Tanh",
        "torch.nn.modules.container.Sequential",
        "torch.nn.modules.linear.Linear",
    ]
    assert serialization.get_unsafe_globals_in_checkpoint(fixture("state_dict.pt")) == []
    ct.save({"w": ct.ones(1)}, tmp_path / "plain.pt")
    assert serialization.get_unsafe_globals_in_checkpoint(tmp_path / "plain.pt") == []


def test_force_weights_only_environment_variables(tmp_path, monkeypatch):
    path = tmp_path / "cfg.pt"
    ct.save({"cfg": Config(1, set())}, path)
    monkeypatch.setenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")
    with pytest.warns(UserWarning, match="forcing weights_only=False"):
        assert ct.load(path)["cfg"] == Config(1, set())
    with pytest.raises(pickle.UnpicklingError):  # an explicit weights_only=True still holds
        ct.load(path, weights_only=True)
    monkeypatch.delenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD")
    monkeypatch.setenv("TORCH_FORCE_WEIGHTS_ONLY_LOAD", "true")
    with pytest.raises(pickle.UnpicklingError):  # even an explicit weights_only=False
        ct.load(path, weights_only=False)
    monkeypatch.setenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "yes")
    with pytest.raises(RuntimeError, match="Only one of"):
        ct.load(path)


def test_pickle_arguments(tmp_path):
    path = tmp_path / "cfg.pt"
    ct.save({"cfg": Config(1, set())}, path)
    with pytest.raises(
        RuntimeError, match="Can not safely load weights when explicit pickle_module"
    ):
        ct.load(path, pickle_module=pickle)
    assert ct.load(path, pickle_module=pickle, weights_only=False)["cfg"].width == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(UserWarning, match="pickle_load_args only works"):
            ct.load(path, encoding="latin1")
    with pytest.raises(TypeError, match="unexpected keyword arguments"):
        ct.load(path, weights_only=False, colour="red")
    with pytest.raises(NotImplementedError, match="legacy format"):
        ct.save({"a": 1}, io.BytesIO(), _use_new_zipfile_serialization=False)
    buf = io.BytesIO()
    ct.save({"cfg": Config(2, set())}, buf, pickle_protocol=4)
    buf.seek(0)
    assert ct.load(buf, weights_only=False)["cfg"].width == 2


def test_weights_only_reads_newer_pickle_protocols(tmp_path):
    for protocol in (2, 3, 4, 5):
        buf = io.BytesIO()
        w = ct.arange(3, dtype=ct.float32)
        ct.save(
            {"s": {1, 2}, "w": w, "v": w[1:], "b": b"xy", "n": (None, 1.5, -7, 2**70)},
            buf,
            pickle_protocol=protocol,
        )
        buf.seek(0)
        got = ct.load(buf)
        assert got["s"] == {1, 2} and got["b"] == b"xy" and got["n"] == (None, 1.5, -7, 2**70)
        assert got["v"].untyped_storage() is got["w"].untyped_storage(), protocol


def test_saved_locations_follow_map_location(tmp_path, monkeypatch):
    from coretorch.serialization import torch_zip

    path = tmp_path / "gpu.pt"
    monkeypatch.setattr(torch_zip, "location", lambda dev: "cuda:3")  # as if saved on a GPU
    ct.save({"w": ct.ones(2), "tags": {"gpu"}}, path)
    monkeypatch.undo()
    if not ct.cuda.is_available():
        with pytest.raises(
            CheckpointError,
            match="saved on 'cuda:3' that cannot be placed on 'cuda:3'.*map_location='cpu'",
        ):
            ct.load(path)
    for where in ("cpu", {"cuda:3": "cpu"}, ct.device("cpu")):
        assert ct.load(path, map_location=where)["w"].device.type == "cpu"
    seen = []
    ct.load(path, map_location=lambda s, loc: seen.append(loc) or s)
    assert seen == ["cuda:3"]


# ---- PyTorch itself, when installed -----------------------------------------------------------


def test_pytorch_reads_coretorch_pickled_checkpoints(tmp_path):
    torch = pytest.importorskip("torch")
    w = ct.arange(6, dtype=ct.float32).reshape(2, 3)
    obj = {
        "w": w,
        "row": w[1],
        "t": w.t(),
        "p": nn.Parameter(ct.ones(2)),
        "i": ct.tensor([1, 2], dtype=ct.int16),
        "m": ct.empty(2, device="meta"),
        "dtype": ct.float16,
        "device": ct.device("cpu"),
        "size": ct.Size([2]),
        "tags": {"x"},
    }
    path = tmp_path / "ct.pt"
    ct.save(obj, path)
    got = torch.load(path, weights_only=True)
    assert got["w"].tolist() == w.tolist() and got["t"].tolist() == w.t().tolist()
    assert got["row"].untyped_storage().data_ptr() == got["w"].untyped_storage().data_ptr()
    assert isinstance(got["p"], torch.nn.Parameter) and got["i"].dtype == torch.int16
    assert got["m"].device.type == "meta" and got["dtype"] == torch.float16
    assert got["device"] == torch.device("cpu") and got["size"] == torch.Size([2])
    assert got["tags"] == {"x"}
    got = torch.load(path, weights_only=True, mmap=True)  # records are 64-byte aligned
    assert got["w"].tolist() == w.tolist()


def test_coretorch_reads_what_pytorch_writes_now(tmp_path):
    torch = pytest.importorskip("torch")
    g = torch.Generator().manual_seed(0)
    base = torch.randn(5, 6, generator=g)
    obj = {
        "base": base,
        "slice": base[1:4, ::2],
        "t": base.t(),
        "h": base.half(),
        "bf": base.bfloat16(),
        "big": torch.arange(70000, dtype=torch.int64),
    }
    for new_format in (True, False):
        path = tmp_path / f"t{new_format}.pt"
        torch.save(obj, path, _use_new_zipfile_serialization=new_format)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = ct.load(path)
        for k, v in obj.items():
            want = (v.float() if v.dtype == torch.bfloat16 else v).numpy()
            np.testing.assert_array_equal(
                got[k].float().numpy() if k == "bf" else got[k].numpy(), want, err_msg=k
            )
        assert got["slice"].untyped_storage() is got["base"].untyped_storage()
