"""`save` / `load`: checkpoints as safetensors files, never pickle.

A checkpoint is one safetensors file: every tensor of the object is a safetensors entry, and the
nested structure around them (dicts, lists, tuples, numbers, strings, None, dtypes, devices) is
JSON in the file's ``__metadata__``. Loading parses JSON and raw arrays only, so it can never
execute code. Writes go to a temporary file in the target directory that is renamed over the
target (``os.replace``), so a crash mid-save leaves the previous file intact.
"""
from __future__ import annotations

import io
import json
import math
import os
import struct
import tempfile
from collections import OrderedDict
from typing import Any, Callable

import numpy as np

from . import dtypes as _dt
from .device import device as _device
from .nn.parameter import Parameter
from .ops import aten
from .ops.factories_public import from_numpy
from .tensor.tensor import Tensor

__all__ = ["save", "load"]

_FORMAT = "coretorch.safetensors/1"
_META_KEY = "coretorch"


# ---- encoding ---------------------------------------------------------------------------------

class _Encoder:
    """Walks an object, collecting tensors as numpy arrays and returning its JSON skeleton."""

    def __init__(self) -> None:
        self.arrays: dict[str, np.ndarray] = {}
        self._seen: dict[int, str] = {}

    def encode(self, obj: Any) -> Any:
        if obj is None or isinstance(obj, (int, str)):  # bool is an int
            return obj
        if isinstance(obj, float):
            # JSON has no nan/inf
            return obj if math.isfinite(obj) else {"__float__": repr(obj)}
        if isinstance(obj, Tensor):
            return self._tensor(obj)
        if isinstance(obj, _dt.dtype):
            return {"__dtype__": obj.name}
        if isinstance(obj, _device):
            return {"__device__": str(obj)}
        if isinstance(obj, np.ndarray):
            return self._array(obj)
        if isinstance(obj, np.generic):
            return self.encode(obj.item())
        if isinstance(obj, (dict, OrderedDict)):
            items = [[self.encode(k), self.encode(v)] for k, v in obj.items()]
            for k in obj:
                if not isinstance(k, (str, int, float, bool, type(None))):
                    raise TypeError(f"save(): dict keys must be str, int, float, bool or None, "
                                    f"got {type(k).__name__}")
            tag = "__odict__" if isinstance(obj, OrderedDict) else "__dict__"
            return {tag: items}
        if isinstance(obj, tuple):
            return {"__tuple__": [self.encode(v) for v in obj]}
        if isinstance(obj, list):
            return [self.encode(v) for v in obj]
        if isinstance(obj, (set, frozenset)):
            raise TypeError("save(): sets have no stable order; convert to a list first")
        raise TypeError(f"save(): cannot save an object of type {type(obj).__module__}."
                        f"{type(obj).__qualname__}; coretorch checkpoints hold tensors, numpy "
                        f"arrays, dicts, lists, tuples, numbers, strings, None, dtypes and "
                        f"devices (no pickle, so loading never runs code)")

    def _tensor(self, t: Tensor) -> dict:
        info = {"dtype": t.dtype.name, "shape": list(t.shape), "device": str(t.device),
                "requires_grad": bool(t.requires_grad)}
        if isinstance(t, Parameter):
            info["parameter"] = True
        if t.device.type == "meta":
            info["meta"] = True
            return {"__tensor__": info}
        key = self._seen.get(id(t))
        if key is None:
            key = f"t{len(self.arrays)}"
            self.arrays[key] = np.array(t.detach().numpy(force=True), order="C", copy=None)
            self._seen[id(t)] = key
        info["key"] = key
        return {"__tensor__": info}

    def _array(self, a: np.ndarray) -> dict:
        if a.dtype.kind not in "biuf":
            raise TypeError(f"save(): numpy arrays of dtype {a.dtype} cannot be saved")
        key = f"t{len(self.arrays)}"
        self.arrays[key] = np.array(a, order="C", copy=None)
        return {"__ndarray__": key}


def _serialize(obj: Any) -> bytes:
    from safetensors.numpy import save as st_save
    enc = _Encoder()
    skeleton = enc.encode(obj)
    meta = {_META_KEY: json.dumps({"format": _FORMAT, "object": skeleton}, allow_nan=False)}
    return st_save(enc.arrays, metadata=meta)


def _atomic_write(path: str, data: bytes) -> None:
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".tmp",
                               dir=directory)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def save(obj: Any, f, pickle_module=None, pickle_protocol: int = 2,
         _use_new_zipfile_serialization: bool = True) -> None:
    """Save `obj` (a state dict, or nested dicts/lists/tuples of tensors and plain values) to `f`,
    a path or a binary file object. Paths are written atomically.

    ``pickle_module``/``pickle_protocol`` exist for signature compatibility with PyTorch and must
    be left at their defaults: coretorch never pickles.
    """
    if pickle_module is not None:
        raise ValueError("save(): coretorch checkpoints never use pickle; leave pickle_module "
                         "unset")
    data = _serialize(obj)
    if isinstance(f, (str, os.PathLike)):
        _atomic_write(os.fspath(f), data)
    elif hasattr(f, "write"):
        f.write(data)
    else:
        raise TypeError(f"save(): expected a path or a writable binary file, got "
                        f"{type(f).__name__}")


# ---- decoding ---------------------------------------------------------------------------------

def _corrupt(src: str, why: str) -> RuntimeError:
    return RuntimeError(f"load(): {src} is not a valid coretorch checkpoint ({why}); the file is "
                        f"truncated or corrupted")


def _parse(data: bytes, src: str) -> tuple[dict, dict]:
    """(skeleton, arrays) of a checkpoint's bytes, with every size checked first."""
    if len(data) < 8:
        raise _corrupt(src, f"{len(data)} bytes, shorter than the 8-byte header size")
    (n,) = struct.unpack("<Q", data[:8])
    if n > len(data) - 8:
        raise _corrupt(src, f"header claims {n} bytes but only {len(data) - 8} follow")
    try:
        header = json.loads(data[8:8 + n].decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise _corrupt(src, f"unreadable header: {e}") from None
    if not isinstance(header, dict):
        raise _corrupt(src, "header is not a JSON object")
    body = len(data) - 8 - n
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        try:
            begin, end = entry["data_offsets"]
        except (TypeError, KeyError, ValueError):
            raise _corrupt(src, f"entry {name!r} has no data_offsets") from None
        if not 0 <= begin <= end <= body:
            raise _corrupt(src, f"tensor {name!r} needs bytes {begin}..{end} of a {body}-byte "
                                f"data section")
    meta = header.get("__metadata__") or {}
    if _META_KEY not in meta:
        raise RuntimeError(f"load(): {src} is a safetensors file without coretorch metadata; "
                           f"read it with safetensors directly")
    try:
        doc = json.loads(meta[_META_KEY])
    except json.JSONDecodeError as e:
        raise _corrupt(src, f"unreadable metadata: {e}") from None
    if not isinstance(doc, dict) or doc.get("format") != _FORMAT:
        fmt = doc.get("format") if isinstance(doc, dict) else doc
        raise _corrupt(src, f"unknown format {fmt!r}")
    from safetensors import SafetensorError
    from safetensors.numpy import load as st_load
    try:
        arrays = st_load(data)
    except (SafetensorError, ValueError) as e:
        raise _corrupt(src, str(e)) from None
    return doc["object"], arrays


class _Decoder:
    def __init__(self, arrays: dict, map_location, src: str) -> None:
        self.arrays = arrays
        self.map_location = map_location
        self.src = src
        self._made: dict[str, Tensor] = {}
        # a callable map_location is applied to each tensor after loading it on cpu
        self._callable_map = callable(map_location) and not isinstance(
            map_location, (str, _device, dict))

    def decode(self, node: Any) -> Any:
        if isinstance(node, list):
            return [self.decode(v) for v in node]
        if not isinstance(node, dict):
            return node
        if len(node) != 1:
            raise _corrupt(self.src, f"unexpected node {sorted(node)}")
        (tag, value), = node.items()
        if tag == "__tensor__":
            return self._tensor(value)
        if tag == "__ndarray__":
            return self._array(value)
        if tag in ("__dict__", "__odict__"):
            pairs = ((self.decode(k), self.decode(v)) for k, v in value)
            return OrderedDict(pairs) if tag == "__odict__" else dict(pairs)
        if tag == "__tuple__":
            return tuple(self.decode(v) for v in value)
        if tag == "__float__":
            return float(value)
        if tag == "__dtype__":
            return _dtype_named(value, self.src)
        if tag == "__device__":
            return _device(value)
        raise _corrupt(self.src, f"unknown tag {tag!r}")

    def _array(self, key: str) -> np.ndarray:
        if key not in self.arrays:
            raise _corrupt(self.src, f"missing array {key!r}")
        return self.arrays[key]

    def _target_device(self, saved: str):
        m = self.map_location
        if m is None:
            return saved
        if isinstance(m, dict):
            return m.get(saved, saved)
        if isinstance(m, (str, _device)):
            return m
        raise TypeError(f"load(): map_location must be None, a device, a string or a dict "
                        f"(callables are applied after loading), got {type(m).__name__}")

    def _tensor(self, info: dict) -> Tensor:
        dtype = _dtype_named(info["dtype"], self.src)
        saved = info["device"]
        if self._callable_map:
            dev = saved if info.get("meta") else "cpu"
        else:
            dev = self._target_device(saved)
        if info.get("meta"):
            t = aten.empty(tuple(info["shape"]), dtype=dtype, device=dev)
        else:
            key = info["key"]
            if key in self._made:
                t = self._made[key]
            else:
                arr = np.array(self._array(key), copy=True)
                if list(arr.shape) != list(info["shape"]):
                    raise _corrupt(self.src, f"tensor {key!r} has shape {list(arr.shape)}, the "
                                             f"metadata says {info['shape']}")
                t = from_numpy(arr)
                if t.dtype is not dtype:
                    t = t.to(dtype)
                t = t.to(dev)
                self._made[key] = t
        if self._callable_map:
            t = self.map_location(t, saved)
        if info.get("parameter"):
            return Parameter(t, requires_grad=info.get("requires_grad", True))
        if info.get("requires_grad"):
            t = t.detach().requires_grad_(True)
        return t


def _dtype_named(name: str, src: str):
    d = getattr(_dt, name, None)
    if not isinstance(d, _dt.dtype):
        raise _corrupt(src, f"unknown dtype {name!r}")
    return d


def load(f, map_location: "str | _device | dict | Callable | None" = None, pickle_module=None,
         *, weights_only: bool | None = None, mmap: bool | None = None, **pickle_load_args):
    """Load an object saved by `save` from a path or a binary file object.

    `map_location`: a device (or string) to put every tensor on, a dict mapping saved device
    strings to new ones, or a callable ``fn(tensor, saved_device_str) -> tensor``. Loading never
    executes code (``weights_only`` is accepted for PyTorch compatibility; it is always true).
    A truncated or corrupted file raises RuntimeError.
    """
    if pickle_module is not None:
        raise ValueError("load(): coretorch checkpoints never use pickle; leave pickle_module "
                         "unset")
    if pickle_load_args:
        raise TypeError(f"load(): unexpected arguments {sorted(pickle_load_args)} (coretorch "
                        f"checkpoints are not pickles)")
    if weights_only is False:
        raise ValueError("load(weights_only=False): coretorch checkpoints never contain code; "
                         "they always load as weights_only")
    if isinstance(f, (str, os.PathLike)):
        src = os.fspath(f)
        with open(src, "rb") as fh:
            data = fh.read()
    elif hasattr(f, "read"):
        src = getattr(f, "name", "<file object>")
        data = f.read()
        if isinstance(f, io.TextIOBase) or not isinstance(data, (bytes, bytearray)):
            raise TypeError("load(): expected a binary file object (open it with 'rb')")
    else:
        raise TypeError(f"load(): expected a path or a readable binary file, got "
                        f"{type(f).__name__}")
    skeleton, arrays = _parse(bytes(data), repr(src))
    return _Decoder(arrays, map_location, repr(src)).decode(skeleton)
