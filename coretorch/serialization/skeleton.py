"""coretorch's own checkpoint format: one safetensors file whose ``__metadata__["coretorch"]`` is
the JSON "skeleton" of the saved object (dicts, lists, tuples, numbers, strings, None, dtypes,
devices, tensors, numpy arrays). Loading it parses JSON and reads arrays: no code can run.

Format 2 stores each storage once: the tensors that share a storage (a weight and its views) are
records ``{"storage", "offset", "shape", "stride", ...}`` over one safetensors entry holding the
span of the storage they use, and load back sharing it. An entry used by exactly one contiguous
tensor has that tensor's shape, so plain safetensors readers see ordinary tensors. Format 1
(one contiguous entry per tensor, ``"key"``) still loads.
"""

from __future__ import annotations

import functools
import json
import math
from collections import OrderedDict
from typing import Any, BinaryIO, Callable

import numpy as np

from .. import dtypes as _dt
from ..device import device as _device
from ..nn.parameter import Parameter
from ..sparse.functional import sparse_coo_tensor
from ..sparse.tensor import SparseTensor
from ..tensor.tensor import Tensor
from .context import LoadContext
from .errors import CheckpointError, corrupt
from .safetensors_file import MAX_JSON_DEPTH, Entry, parse_json, read_header, write_safetensors
from .storages import base_from_array, empty_base, finish, meta_tensor, view_of
from .stored_types import (
    BY_NAME,
    core_dtype,
    is_paired,
    paired_storage,
    stored_type_of,
    to_core_array,
)

__all__ = ["plan_safetensors", "load_safetensors", "NotPlain", "META_KEY", "FORMAT"]

FORMAT = "coretorch.safetensors/2"
_FORMAT_V1 = "coretorch.safetensors/1"
META_KEY = "coretorch"


class NotPlain(Exception):
    """The object holds a value the JSON skeleton cannot carry exactly (it is pickled instead)."""


def location(dev: _device) -> str:
    """The device string a storage is tagged with (PyTorch's: 'cpu', 'cuda:0')."""
    if dev.type in ("cpu", "meta") or dev.index is not None:
        return str(dev)
    return f"{dev.type}:0"


def _same(a: np.ndarray) -> np.ndarray:
    return a


def _host_array_shaped(t: Tensor, shape: tuple) -> np.ndarray:
    return host_array(t).reshape(shape)


def _host_array_pairs(t: Tensor, shape: tuple, raw: Any) -> np.ndarray:
    """A complex tensor's values as (real, imaginary) pairs of the `raw` real dtype."""
    return host_array(t).reshape(shape).view(raw).reshape(shape + (2,))


def host_array(t: Tensor) -> np.ndarray:
    """The values of `t` as a numpy array (no copy for a cpu tensor)."""
    t = t.detach()
    return t.numpy() if t.device.type == "cpu" else t.cpu().numpy()


class _Group:
    """The tensors of one checkpoint over one storage (and dtype)."""

    __slots__ = ("key", "members")

    def __init__(self, key: str):
        self.key = key
        self.members: list[tuple[dict, Tensor]] = []


class _Encoder:
    def __init__(self) -> None:
        self.groups: dict[tuple[int, str], _Group] = {}
        self.records: dict[int, dict] = {}  # id(tensor) -> its record (identity kept)
        self.keep: list[Any] = []  # what the ids refer to stays alive while encoding
        self.arrays: list[tuple[str, np.ndarray]] = []
        self.n_keys = 0

    def _key(self) -> str:
        self.n_keys += 1
        return f"t{self.n_keys - 1}"

    def encode(self, obj: Any, depth: int) -> Any:
        if depth > MAX_JSON_DEPTH - 4:
            raise NotPlain("nested too deeply")
        if obj is None or type(obj) in (bool, int, str):
            return obj
        if type(obj) is float:
            return obj if math.isfinite(obj) else {"__float__": repr(obj)}
        if isinstance(obj, SparseTensor):  # its two dense tensors and its size
            return {
                "__sparse_coo__": {
                    "indices": self.encode(obj._indices(), depth + 2),
                    "values": self.encode(obj._values(), depth + 2),
                    "size": list(obj.shape),
                    "coalesced": obj.is_coalesced(),
                }
            }
        if isinstance(obj, Tensor):
            return {"__tensor__": self._tensor(obj)}
        if isinstance(obj, _dt.dtype):
            return {"__dtype__": obj.name}
        if isinstance(obj, _device):
            return {"__device__": str(obj)}
        if type(obj) is np.ndarray:
            return {"__ndarray__": self._array(obj)}
        if isinstance(obj, np.generic) and obj.dtype.kind in "biuf":
            return self.encode(obj.item(), depth)
        if type(obj) in (dict, OrderedDict):
            items = []
            for k, v in obj.items():
                if not (k is None or type(k) in (str, int, float, bool)):
                    raise NotPlain("dict key")
                items.append([self.encode(k, depth + 3), self.encode(v, depth + 3)])
            return {"__odict__" if type(obj) is OrderedDict else "__dict__": items}
        if type(obj) is tuple:
            return {"__tuple__": [self.encode(v, depth + 2) for v in obj]}
        if type(obj) is list:
            return [self.encode(v, depth + 1) for v in obj]
        raise NotPlain(type(obj).__qualname__)

    def _tensor(self, t: Tensor) -> dict:
        rec = self.records.get(id(t))
        if rec is not None:
            return rec
        if type(t) not in (Tensor, Parameter):
            raise NotPlain("tensor subclass")
        rec = {
            "id": len(self.records),
            "dtype": t.dtype.name,
            "shape": list(t.shape),
            "stride": list(t.stride()),
            "device": location(t.device),
            "requires_grad": bool(t.requires_grad),
        }
        if isinstance(t, Parameter):
            rec["parameter"] = True
        if t.device.type == "meta":
            rec["meta"] = True
        else:
            gk = (id(t.untyped_storage()), t.dtype.name)
            g = self.groups.get(gk)
            if g is None:
                g = self.groups[gk] = _Group(self._key())
            g.members.append((rec, t))
        self.records[id(t)] = rec
        self.keep.append(t)
        return rec

    def _array(self, a: np.ndarray) -> str:
        st = BY_NAME.get(a.dtype.name)
        if a.dtype.kind not in "biuf" or st is None or not st.numpy_exact:
            raise NotPlain(f"numpy {a.dtype}")
        key = self._key()
        self.arrays.append((key, a))
        return key

    def entries(self) -> list[tuple[str, Any, tuple, Callable[[], np.ndarray]]]:
        """The safetensors entries; fills each tensor record's storage key and offset."""
        out: list[tuple[str, Any, tuple, Callable[[], np.ndarray]]] = []
        for g in self.groups.values():
            used = [t for _, t in g.members if t.numel()]
            lo = min((t.storage_offset() for t in used), default=0)
            hi = max(
                (
                    t.storage_offset() + sum((s - 1) * st for s, st in zip(t.shape, t.stride())) + 1
                    for t in used
                ),
                default=0,
            )
            for rec, t in g.members:
                rec["storage"] = g.key
                rec["offset"] = t.storage_offset() - lo if t.numel() else 0
            first = g.members[0][1]
            if len(g.members) == 1 and first.numel() == hi - lo and first.is_contiguous():
                shape = tuple(first.shape)
            else:
                shape = (hi - lo,)
            span = first.detach().as_strided((hi - lo,), (1,), lo)
            st = paired_storage(first.dtype)
            if st is None:
                out.append(
                    (
                        g.key,
                        stored_type_of(first.dtype),
                        shape,
                        functools.partial(_host_array_shaped, span, shape),
                    )
                )
            else:  # no safetensors code: the real view, (real, imaginary) pairs
                out.append(
                    (
                        g.key,
                        st,
                        shape + (2,),
                        functools.partial(_host_array_pairs, span, shape, st.raw),
                    )
                )
        for key, a in self.arrays:
            out.append((key, BY_NAME[a.dtype.name], a.shape, functools.partial(_same, a)))
        # widest items first: every entry then starts aligned to its item size
        out.sort(key=lambda e: -e[1].itemsize)
        return out


def plan_safetensors(obj: Any) -> Callable[[BinaryIO], None] | None:
    """A function writing `obj` as a coretorch safetensors checkpoint, or None when `obj` holds
    something only pickle can carry."""
    enc = _Encoder()
    try:
        skeleton = enc.encode(obj, 1)
    except NotPlain:
        return None
    entries = enc.entries()
    doc = json.dumps({"format": FORMAT, "object": skeleton}, separators=(",", ":"), allow_nan=False)
    return lambda f: write_safetensors(f, entries, {META_KEY: doc})


# ---- loading --------------------------------------------------------------------------------


class _Decoder:
    def __init__(self, ctx: LoadContext, entries: dict[str, Entry], version: int):
        self.ctx, self.src, self.entries, self.version = ctx, ctx.name, entries, version
        self.made: dict[Any, Tensor] = {}

    def decode(self, node: Any) -> Any:
        if isinstance(node, list):
            out: Any = []
            for v in node:
                out.append(self.decode(v))
            return out
        if not isinstance(node, dict):
            return node
        if len(node) != 1:
            raise corrupt(self.src, f"unexpected node with keys {sorted(node)[:5]}")
        ((tag, value),) = node.items()
        if tag == "__tensor__":
            return self._tensor(value)
        if tag in ("__dict__", "__odict__"):
            if not isinstance(value, list):
                raise corrupt(self.src, f"{tag} holds {type(value).__name__}, not a list")
            out = OrderedDict() if tag == "__odict__" else {}
            for pair in value:
                if not (isinstance(pair, list) and len(pair) == 2):
                    raise corrupt(self.src, f"{tag} item is not a [key, value] pair")
                k = self.decode(pair[0])
                if not (k is None or type(k) in (str, int, float, bool)):
                    raise corrupt(self.src, f"dict key of type {type(k).__name__}")
                out[k] = self.decode(pair[1])
            return out
        if tag == "__tuple__":
            if not isinstance(value, list):
                raise corrupt(self.src, "__tuple__ does not hold a list")
            out = []
            for v in value:
                out.append(self.decode(v))
            return tuple(out)
        if tag == "__sparse_coo__":
            return self._sparse(value)
        if not isinstance(value, str):
            raise corrupt(self.src, f"{tag} holds {type(value).__name__}, not a string")
        if tag == "__float__":
            try:
                return float(value)
            except ValueError:
                raise corrupt(self.src, f"bad float {value!r:.40}") from None
        if tag == "__dtype__":
            return self._dtype(value)
        if tag == "__device__":
            try:
                return _device(value)
            except (RuntimeError, ValueError) as e:
                raise corrupt(self.src, f"bad device {value!r:.40}: {e}") from None
        if tag == "__ndarray__":
            entry = self._entry(value, "array")
            if not entry.stored.numpy_exact:
                raise corrupt(self.src, f"array {value!r} has non-numpy dtype {entry.stored.name}")
            return entry.read(self.ctx.src).reshape(entry.shape)
        raise corrupt(self.src, f"unknown tag {tag!r:.40}")

    def _sparse(self, info: Any) -> Tensor:
        if not isinstance(info, dict) or set(info) != {"indices", "values", "size", "coalesced"}:
            raise corrupt(self.src, "a sparse_coo record is not {indices, values, size, coalesced}")
        indices, values = self.decode(info["indices"]), self.decode(info["values"])
        size, coalesced = info["size"], info["coalesced"]
        if not (
            isinstance(indices, Tensor)
            and isinstance(values, Tensor)
            and isinstance(size, list)
            and all(type(n) is int for n in size)
            and type(coalesced) is bool
        ):
            raise corrupt(self.src, "a sparse_coo record holds the wrong kinds of values")
        try:
            return sparse_coo_tensor(
                indices,
                values.detach(),
                size,
                requires_grad=values.requires_grad,
                is_coalesced=coalesced,
            )
        except RuntimeError as e:
            raise corrupt(self.src, f"bad sparse_coo tensor: {e}") from None

    def _dtype(self, name: Any) -> _dt.dtype:
        d = getattr(_dt, name, None) if isinstance(name, str) else None
        if not isinstance(d, _dt.dtype):
            raise corrupt(self.src, f"unknown dtype {name!r:.40}")
        return d

    def _entry(self, key: Any, what: str) -> Entry:
        if not isinstance(key, str) or key not in self.entries:
            raise corrupt(self.src, f"{what} refers to {key!r:.40}, which is not in the file")
        return self.entries[key]

    def _base(self, key: str, entry: Entry, saved: Any, paired=None) -> Tensor:
        """The flat tensor over stored bytes `key`; `paired`: the complex dtype whose
        (real, imaginary) pairs they hold."""
        if not isinstance(saved, str):
            raise corrupt(self.src, f"tensor {key!r} has device {saved!r:.40}, not a string")
        ctx = self.ctx

        def make() -> Tensor:
            dtype = paired or core_dtype(entry.stored, ctx.name)
            numel = entry.numel // 2 if paired else entry.numel
            if ctx.placement.skips_data(saved):
                return empty_base(dtype, numel, "meta")
            arr = to_core_array(entry.read(ctx.src), entry.stored, ctx.name, ctx.notes)
            if paired:
                arr = arr.view(paired.numpy)
            return ctx.placement.place(base_from_array(arr), saved)

        return ctx.cache.get(key, make)

    def _tensor(self, info: Any) -> Tensor:
        if not isinstance(info, dict):
            raise corrupt(self.src, "a tensor record is not an object")
        ident = info.get("id") if self.version >= 2 else info.get("key")
        if self.version >= 2 and type(ident) is not int:
            raise corrupt(self.src, f"tensor record id {ident!r:.40} is not an integer")
        if ident is not None and ident in self.made:
            return self.made[ident]
        what = f"tensor {ident!r}"
        dtype = self._dtype(info.get("dtype"))
        if info.get("meta") is True:
            t = meta_tensor(dtype, info.get("shape"), info.get("stride"), self.src, what)
        else:
            key = info.get("storage" if self.version >= 2 else "key")
            if key is None:
                raise corrupt(self.src, f"{what} has no stored bytes and is not a meta tensor")
            entry = self._entry(key, what)
            paired = is_paired(dtype, entry.stored, entry.shape)
            if entry.stored.name != dtype.name and not paired:
                raise corrupt(
                    self.src,
                    f"{what} is {dtype.name}, but its bytes {key!r} are "
                    f"stored as {entry.stored.safetensors}",
                )
            base = self._base(key, entry, info.get("device"), dtype if paired else None)
            if self.version >= 2:
                t = view_of(
                    base, info.get("offset"), info.get("shape"), info.get("stride"), self.src, what
                )
            else:
                if info.get("shape") != list(entry.shape):
                    raise corrupt(
                        self.src,
                        f"{what} has shape {info.get('shape')!r:.60} but its "
                        f"bytes have shape {list(entry.shape)}",
                    )
                t = view_of(base, 0, entry.shape, _contiguous_strides(entry.shape), self.src, what)
        t = finish(
            t, info.get("requires_grad", False), info.get("parameter") is True, self.src, what
        )
        if ident is not None:
            self.made[ident] = t
        return t


def _contiguous_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    out, acc = [], 1
    for s in reversed(shape):
        out.append(acc)
        acc *= max(s, 1)
    return tuple(reversed(out))


def _plain(ctx: LoadContext, entries: dict[str, Entry]) -> dict:
    """A safetensors file written by another program: {name: tensor}, as PyTorch loads it."""
    dec = _Decoder(ctx, entries, 2)
    out = {}
    for name, e in entries.items():
        base = dec._base(name, e, "cpu")
        out[name] = view_of(
            base, 0, e.shape, _contiguous_strides(e.shape), ctx.name, f"tensor {name!r}"
        )
    return out


def load_safetensors(ctx: LoadContext) -> Any:
    """Load a safetensors file: coretorch's own object tree if its metadata has one, else a
    dict of tensors.

    Raises:
        CheckpointError: when the header or coretorch metadata is malformed or nests too deeply.
    """
    meta, entries = read_header(ctx.src)
    if META_KEY not in meta:
        return _plain(ctx, entries)
    doc = parse_json(meta[META_KEY], ctx.name, "coretorch metadata")
    if (
        not isinstance(doc, dict)
        or "object" not in doc
        or doc.get("format") not in (FORMAT, _FORMAT_V1)
    ):
        fmt = doc.get("format") if isinstance(doc, dict) else None
        raise corrupt(ctx.name, f"unknown coretorch metadata (format {fmt!r:.40})")
    version = 2 if doc["format"] == FORMAT else 1
    try:
        return _Decoder(ctx, entries, version).decode(doc["object"])
    except RecursionError:
        raise CheckpointError(f"load(): {ctx.name}: the object nests too deeply") from None
