"""Element types as files store them (safetensors codes, PyTorch dtype and storage names) and how
their bytes become coretorch arrays.

A stored type coretorch has loads as itself. One it lacks loads as the smallest coretorch dtype
that holds every value exactly (float8 as float32, uint16 as int32, uint32 as int64,
uint64 as int64 when every value fits), with one warning per file and type; complex32 and
quantized types raise a clear error. safetensors has a code for complex64 (C64) but none for
complex128: coretorch stores a complex128 tensor's bytes as float64 pairs (a trailing dim of 2,
its real view) and the checkpoint's tensor record names the complex dtype (`paired_storage`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import dtypes as _dt
from .errors import unsupported

__all__ = [
    "StoredType",
    "BY_NAME",
    "BY_SAFETENSORS",
    "STORAGE_CLASSES",
    "stored_type_of",
    "core_dtype",
    "widened",
    "to_core_array",
    "paired_storage",
    "is_paired",
]


@dataclass(frozen=True)
class StoredType:
    """One element type of a file: `name` is PyTorch's dtype name, `raw` the little-endian numpy
    dtype that reads its bytes (``<u2`` for bfloat16), `safetensors` its safetensors code."""

    name: str
    raw: np.dtype
    safetensors: str | None = None
    storage_class: str | None = None  # PyTorch's legacy storage class ("FloatStorage")

    @property
    def itemsize(self) -> int:
        """Bytes per element as stored in the file."""
        return self.raw.itemsize

    @property
    def numpy_exact(self) -> bool:
        """Whether `raw` is the real type (not just a container for the bytes)."""
        return self.name in _EXACT


_T = StoredType
_TYPES = (
    _T("bool", np.dtype("?"), "BOOL", "BoolStorage"),
    _T("uint8", np.dtype("u1"), "U8", "ByteStorage"),
    _T("int8", np.dtype("i1"), "I8", "CharStorage"),
    _T("int16", np.dtype("<i2"), "I16", "ShortStorage"),
    _T("int32", np.dtype("<i4"), "I32", "IntStorage"),
    _T("int64", np.dtype("<i8"), "I64", "LongStorage"),
    _T("float16", np.dtype("<f2"), "F16", "HalfStorage"),
    _T("float32", np.dtype("<f4"), "F32", "FloatStorage"),
    _T("float64", np.dtype("<f8"), "F64", "DoubleStorage"),
    _T("bfloat16", np.dtype("<u2"), "BF16", "BFloat16Storage"),
    _T("uint16", np.dtype("<u2"), "U16"),
    _T("uint32", np.dtype("<u4"), "U32"),
    _T("uint64", np.dtype("<u8"), "U64"),
    _T("float8_e4m3fn", np.dtype("u1"), "F8_E4M3"),
    _T("float8_e5m2", np.dtype("u1"), "F8_E5M2"),
    _T("float8_e4m3fnuz", np.dtype("u1")),
    _T("float8_e5m2fnuz", np.dtype("u1")),
    _T("complex64", np.dtype("<c8"), "C64", "ComplexFloatStorage"),
    _T("complex128", np.dtype("<c16"), None, "ComplexDoubleStorage"),
    _T("complex32", np.dtype("<u4")),
    _T("qint8", np.dtype("i1"), None, "QInt8Storage"),
    _T("quint8", np.dtype("u1"), None, "QUInt8Storage"),
    _T("qint32", np.dtype("<i4"), None, "QInt32Storage"),
    _T("quint4x2", np.dtype("u1"), None, "QUInt4x2Storage"),
    _T("quint2x4", np.dtype("u1"), None, "QUInt2x4Storage"),
)
_EXACT = {
    "bool",
    "uint8",
    "int8",
    "int16",
    "int32",
    "int64",
    "float16",
    "float32",
    "float64",
    "uint16",
    "uint32",
    "uint64",
    "complex64",
    "complex128",
}

BY_NAME = {t.name: t for t in _TYPES}
BY_SAFETENSORS = {t.safetensors: t for t in _TYPES if t.safetensors}
STORAGE_CLASSES = {t.storage_class: t for t in _TYPES if t.storage_class}

# types coretorch lacks -> (the coretorch dtype name they load as, how)
_WIDEN = {
    "float8_e4m3fn": "float32",
    "float8_e5m2": "float32",
    "float8_e4m3fnuz": "float32",
    "float8_e5m2fnuz": "float32",
    "uint16": "int32",
    "uint32": "int64",
    "uint64": "int64",
}


def stored_type_of(d: _dt.dtype) -> StoredType:
    """The stored type of a coretorch dtype."""
    return BY_NAME[d.name]


def paired_storage(d: _dt.dtype) -> StoredType | None:
    """The stored type of the (real, imaginary) pairs a safetensors file holds complex dtype `d`
    as, when safetensors has no code for `d` itself (complex128 -> float64); else None."""
    if d.is_complex and stored_type_of(d).safetensors is None:
        return stored_type_of(d.to_real())
    return None


def is_paired(d: _dt.dtype, st: StoredType, shape: tuple) -> bool:
    """Whether bytes of stored type `st` and `shape` are complex dtype `d` stored as pairs."""
    return paired_storage(d) is st and shape[-1:] == (2,)


def _native(d: _dt.dtype | None, st: StoredType) -> _dt.dtype | None:
    return d if isinstance(d, _dt.dtype) and d.itemsize == st.itemsize else None


def core_dtype(st: StoredType, src: str) -> _dt.dtype:
    """The coretorch dtype tensors of stored type `st` load as (raises for unsupported types)."""
    d = _native(getattr(_dt, st.name, None), st)
    if d is not None:
        return d
    if st.name in _WIDEN:
        return getattr(_dt, _WIDEN[st.name])
    raise unsupported(src, f"holds {st.name} tensors, and coretorch has no {st.name} dtype")


def widened(st: StoredType, src: str, notes: dict[str, str] | None) -> _dt.dtype:
    """`core_dtype(st)`; when that is a wider type, notes why (one warning per stored type)."""
    target = core_dtype(st, src)
    if notes is not None and target.name != st.name:
        notes[st.name] = (
            f"load(): {src} holds {st.name} tensors; coretorch has no {st.name} "
            f"dtype, so they load as {target.name}, which holds every {st.name} "
            f"value exactly"
        )
    return target


def _float8(raw: np.ndarray, st: StoredType, src: str) -> np.ndarray:
    try:
        import ml_dtypes
    except ImportError:
        raise unsupported(
            src,
            f"holds {st.name} tensors; reading them needs the ml_dtypes "
            f"package (pip install ml_dtypes)",
        ) from None
    return raw.view(getattr(ml_dtypes, st.name)).astype(np.float32)


def to_core_array(
    raw: np.ndarray,
    st: StoredType,
    src: str,
    notes: dict[str, str] | None = None,
    big_endian: bool = False,
) -> np.ndarray:
    """The values of `raw` (an array of ``st.raw`` as read from the file) in the numpy dtype of
    ``core_dtype(st)``. Widening conversions are exact; each adds a note to `notes` (by stored
    type) that `load` turns into one warning."""
    if big_endian and raw.dtype.itemsize > 1:
        raw = raw.view(raw.dtype.newbyteorder(">")).astype(raw.dtype)
    target = widened(st, src, notes)
    if target.name == st.name:
        return raw.view(target.numpy)
    if st.name.startswith("float8"):
        return _float8(raw, st, src)
    if st.name == "uint64" and raw.size and int(raw.max()) > np.iinfo(np.int64).max:
        raise unsupported(
            src, "holds uint64 values above the int64 range, and coretorch has no uint64 dtype"
        )
    return raw.astype(target.numpy)
