"""Reading and writing the safetensors container, streaming.

Reading checks, before any tensor byte is touched: the 8-byte header length against the file size
and a 100 MB cap (safetensors' own), the header's JSON nesting depth, every entry's dtype, shape
and ``data_offsets``, that each entry's byte count is its shape times its item size, and that the
entries tile the data section exactly (the file's real size, nothing missing, nothing extra).
Tensors are then read one at a time by offset into their own arrays (or memory-mapped), so
loading peaks at one copy of the data. Writing streams each array after the header.
"""

from __future__ import annotations

import json
import re
import struct
from dataclasses import dataclass
from typing import Any, BinaryIO, Callable, Iterable

import numpy as np

from .errors import corrupt
from .source import Source
from .stored_types import BY_SAFETENSORS, StoredType

__all__ = [
    "MAX_HEADER_BYTES",
    "MAX_JSON_DEPTH",
    "Entry",
    "read_header",
    "parse_json",
    "write_safetensors",
]

MAX_HEADER_BYTES = 100_000_000
MAX_JSON_DEPTH = 256

_STRINGS = re.compile(rb'"(?:[^"\\]|\\.)*"', re.S)
_OPEN = np.zeros(256, np.int8)
_OPEN[[ord("["), ord("{")]] = 1
_OPEN[[ord("]"), ord("}")]] = -1


def json_depth(text: bytes) -> int:
    """The deepest bracket nesting of a JSON text (brackets inside strings do not count)."""
    arr = np.frombuffer(_STRINGS.sub(b'""', text), np.uint8)
    depth = deepest = 0
    for i in range(0, arr.size, 1 << 20):  # in chunks: a 100 MB header needs no 800 MB cumsum
        d = np.cumsum(_OPEN[arr[i : i + (1 << 20)]], dtype=np.int64) + depth
        deepest = max(deepest, int(d.max()))
        depth = int(d[-1])
    return deepest


def _no_duplicates(pairs: list) -> dict:
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set = set()
        for k, _ in pairs:
            if k in seen:
                raise ValueError(f"duplicate key {k!r}")
            seen.add(k)
    return out


def parse_json(text: bytes | str, src: str, what: str) -> Any:
    """Parse JSON with a nesting cap; every failure is a corrupt-file error naming `what`."""
    raw = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    depth = json_depth(raw)
    if depth > MAX_JSON_DEPTH:
        raise corrupt(
            src, f"{what} nests {depth} levels deep, more than the limit of {MAX_JSON_DEPTH}"
        )
    try:
        return json.loads(raw.decode("utf-8"), object_pairs_hook=_no_duplicates)
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise corrupt(src, f"unreadable {what}: {e}") from None


@dataclass(frozen=True)
class Entry:
    """One tensor of the file: its stored type, shape, and absolute byte offset."""

    name: str
    stored: StoredType
    shape: tuple[int, ...]
    offset: int
    nbytes: int

    @property
    def numel(self) -> int:
        """The number of elements of the stored tensor (product of its shape)."""
        n = 1
        for s in self.shape:
            n *= s
        return n

    def read(self, src: Source) -> np.ndarray:
        """The entry's bytes as a flat array of its raw stored type."""
        return src.read_array(self.offset, self.stored.raw, self.numel, f"tensor {self.name!r}")


def _entry(name: str, info: Any, data_start: int, src: str) -> Entry:
    what = f"tensor {name!r}"
    if not isinstance(info, dict):
        raise corrupt(src, f"{what} is described by {type(info).__name__}, not an object")
    missing = {"dtype", "shape", "data_offsets"} - set(info)
    if missing:
        raise corrupt(src, f"{what} has no {', '.join(sorted(missing))}")
    stored = BY_SAFETENSORS.get(info["dtype"]) if isinstance(info["dtype"], str) else None
    if stored is None:
        raise corrupt(src, f"{what} has unknown dtype {info['dtype']!r:.40}")
    shape = info["shape"]
    if not isinstance(shape, list) or not all(type(s) is int and s >= 0 for s in shape):
        raise corrupt(src, f"{what} has shape {shape!r:.80}, not a list of non-negative integers")
    offs = info["data_offsets"]
    if not (
        isinstance(offs, list)
        and len(offs) == 2
        and all(type(o) is int and o >= 0 for o in offs)
        and offs[0] <= offs[1]
    ):
        raise corrupt(
            src, f"{what} has data_offsets {offs!r:.80}, not [begin, end] with 0 <= begin <= end"
        )
    numel = 1
    for s in shape:
        numel *= s
    nbytes = offs[1] - offs[0]
    if numel * stored.itemsize != nbytes:
        raise corrupt(
            src,
            f"{what} is {info['dtype']} of shape {shape}, which is "
            f"{numel * stored.itemsize} bytes, but its data_offsets span {nbytes}",
        )
    return Entry(name, stored, tuple(shape), data_start + offs[0], nbytes)


def read_header(src: Source) -> tuple[dict[str, str], dict[str, Entry]]:
    """(metadata, entries) of a safetensors file, every size checked; no tensor data read."""
    if src.size < 8:
        raise corrupt(src.name, f"{src.size} bytes, shorter than the 8-byte header size")
    (n,) = struct.unpack("<Q", src.read(0, 8, "the header size"))
    if n > MAX_HEADER_BYTES:
        raise corrupt(
            src.name, f"the header claims {n} bytes, more than the {MAX_HEADER_BYTES}-byte limit"
        )
    if n > src.size - 8:
        raise corrupt(src.name, f"the header claims {n} bytes but only {src.size - 8} follow")
    header = parse_json(src.read(8, n, "the header"), src.name, "header")
    if not isinstance(header, dict):
        raise corrupt(src.name, "the header is not a JSON object")
    meta = header.pop("__metadata__", None)
    if meta is None:
        meta = {}
    if not isinstance(meta, dict) or not all(isinstance(v, str) for v in meta.values()):
        raise corrupt(src.name, "__metadata__ is not an object of strings")
    data_start = 8 + n
    entries = {name: _entry(name, info, data_start, src.name) for name, info in header.items()}
    # the entries must tile the data section: no gaps, no overlaps, nothing past the end
    pos = data_start
    for e in sorted(entries.values(), key=lambda e: (e.offset, e.nbytes)):
        if e.offset != pos:
            raise corrupt(
                src.name,
                f"tensor {e.name!r} starts at byte {e.offset - data_start} "
                f"of the data section, expected {pos - data_start}",
            )
        pos += e.nbytes
    if pos != src.size:
        raise corrupt(
            src.name,
            f"the tensors need {pos - data_start} bytes of data, the file "
            f"has {src.size - data_start}",
        )
    return meta, entries


def write_safetensors(
    f: BinaryIO,
    entries: Iterable[tuple[str, StoredType, tuple, Callable]],
    metadata: dict[str, str],
) -> None:
    """Write a safetensors file: entries are (name, stored type, shape, produce) where
    ``produce()`` returns the array; arrays are produced and written one at a time."""
    entries = list(entries)
    header: dict[str, Any] = {"__metadata__": metadata}
    offset = 0
    for name, st, shape, _ in entries:
        numel = 1
        for s in shape:
            numel *= s
        header[name] = {
            "dtype": st.safetensors,
            "shape": list(shape),
            "data_offsets": [offset, offset + numel * st.itemsize],
        }
        offset += numel * st.itemsize
    text = json.dumps(header, separators=(",", ":"), allow_nan=False).encode()
    text += b" " * (-len(text) % 8)  # data starts 8-byte aligned, as safetensors writes it
    f.write(struct.pack("<Q", len(text)))
    f.write(text)
    for name, st, shape, produce in entries:
        arr = np.ascontiguousarray(produce())
        if arr.dtype.itemsize != st.itemsize or arr.size != int(np.prod(shape, dtype=object)):
            raise AssertionError(f"save(): array for {name!r} does not match its header")
        if arr.dtype.byteorder == ">":
            arr = arr.astype(arr.dtype.newbyteorder("<"))
        f.write(arr.reshape(-1).view(np.uint8).data)
