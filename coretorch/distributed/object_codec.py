"""The encoding of the object collectives: JSON plus raw buffers, never pickle.

An encoded value is laid out as safetensors files are: an 8-byte little-endian header length, a
JSON header, then the raw bytes of every tensor, numpy array and bytes object, each referred to
by its span. Decoding builds only the supported types (None, bool, int, float, str, bytes, list,
tuple, dict, coretorch.Tensor, numeric numpy.ndarray) and never runs code from the data, so a
rank cannot make another execute anything by what it sends."""

from __future__ import annotations

import json
import struct
from typing import Any

import numpy as np

__all__ = ["encode", "decode", "SUPPORTED"]

SUPPORTED = (
    "None, bool, int, float, str, bytes, list, tuple, dict, coretorch.Tensor and "
    "numeric numpy.ndarray"
)
_NUMERIC_KINDS = "biuf"


def encode(obj: Any, fn: str = "encode") -> bytes:
    """`obj` as bytes; TypeError naming `fn` for a type outside `SUPPORTED`."""
    chunks: list[bytes] = []
    offset = [0]

    def span(raw: bytes) -> list[int]:
        start = offset[0]
        chunks.append(raw)
        offset[0] += len(raw)
        return [start, offset[0]]

    def node(x: Any) -> Any:
        from coretorch import Tensor

        if x is None or isinstance(x, (bool, int, float, str)):
            return x
        if isinstance(x, list):
            return [node(v) for v in x]
        if isinstance(x, tuple):
            return {"t": "tuple", "items": [node(v) for v in x]}
        if isinstance(x, dict):
            return {"t": "dict", "items": [[node(k), node(v)] for k, v in x.items()]}
        if isinstance(x, (bytes, bytearray)):
            return {"t": "bytes", "span": span(bytes(x))}
        if isinstance(x, Tensor):
            arr = np.ascontiguousarray(x.detach().numpy(force=True))
            return {
                "t": "tensor",
                "dtype": x.dtype.name,
                "shape": list(x.shape),
                "device": str(x.device),
                "requires_grad": x.requires_grad,
                "span": span(arr.tobytes()),
            }
        if isinstance(x, np.ndarray) and x.dtype.kind in _NUMERIC_KINDS:
            return {
                "t": "ndarray",
                "dtype": x.dtype.str,
                "shape": list(x.shape),
                "span": span(np.ascontiguousarray(x).tobytes()),
            }
        raise TypeError(
            f"{fn}(): cannot send an object of type {type(x).__name__}; objects "
            f"are encoded as JSON plus raw buffers (never pickled), which covers "
            f"{SUPPORTED}"
        )

    header = json.dumps({"format": 1, "tree": node(obj)}, separators=(",", ":")).encode()
    return struct.pack("<Q", len(header)) + header + b"".join(chunks)


def decode(raw: bytes, fn: str = "decode") -> Any:
    """The object `encode` made `raw` from."""
    import coretorch

    if len(raw) < 8:
        raise ValueError(f"{fn}(): received {len(raw)} bytes, too short for an encoded object")
    (n,) = struct.unpack("<Q", raw[:8])
    if 8 + n > len(raw):
        raise ValueError(f"{fn}(): header length {n} exceeds the {len(raw)} bytes received")
    tree = json.loads(raw[8 : 8 + n].decode())["tree"]
    data = memoryview(raw)[8 + n :]

    def buf(s: list[int]) -> bytes:
        start, end = s
        if not 0 <= start <= end <= len(data):
            raise ValueError(f"{fn}(): a buffer span {s} lies outside the {len(data)} data bytes")
        return bytes(data[start:end])

    def array(dtype, shape, s) -> np.ndarray:
        return np.frombuffer(buf(s), dtype=dtype).reshape(shape).copy()

    def node(x: Any) -> Any:
        if isinstance(x, list):
            return [node(v) for v in x]
        if not isinstance(x, dict):
            return x
        kind = x["t"]
        if kind == "tuple":
            return tuple(node(v) for v in x["items"])
        if kind == "dict":
            return {_key(node(k)): node(v) for k, v in x["items"]}
        if kind == "bytes":
            return buf(x["span"])
        if kind == "tensor":
            dt = getattr(coretorch, x["dtype"])
            t = coretorch.from_numpy(array(dt.numpy, x["shape"], x["span"])).to(x["device"])
            return t.requires_grad_(True) if x["requires_grad"] else t
        if kind == "ndarray":
            dt = np.dtype(x["dtype"])
            if dt.kind not in _NUMERIC_KINDS:
                raise ValueError(f"{fn}(): refusing numpy dtype {x['dtype']!r}")
            return array(dt, x["shape"], x["span"])
        raise ValueError(f"{fn}(): unknown encoded type {kind!r}")

    return node(tree)


def _key(k: Any) -> Any:
    return tuple(k) if isinstance(k, list) else k
