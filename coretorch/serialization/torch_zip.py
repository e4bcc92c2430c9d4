"""PyTorch's zip checkpoint format (``torch.save`` since 1.6): reading, and writing.

The archive holds ``<name>/data.pkl`` (the object, pickled; each storage a persistent id
``('storage', torch.FloatStorage, key, location, numel)``) and one stored (uncompressed) record
``<name>/data/<key>`` per storage. Reading validates the zip directory through a reader that
cannot go past the file's end, checks each record's size against what the pickle says, and reads
each storage by offset (or memory-maps it) when a tensor first uses it.
"""

from __future__ import annotations

import functools
import io
import pickle
import secrets
import struct
import zipfile
from collections import OrderedDict
from typing import TYPE_CHECKING, Any, BinaryIO, Callable, ClassVar

from .. import dtypes as _dt
from ..device import device as _device
from ..nn.parameter import Parameter
from ..tensor.size import Size
from ..tensor.tensor import Tensor
from .context import LoadContext
from .errors import corrupt, unsupported
from .skeleton import host_array, location
from .source import Source
from .storages import base_from_array, empty_base
from .stored_types import StoredType, core_dtype, stored_type_of, to_core_array
from .torch_globals import StorageRef, StorageType
from .unpickle import storage_pid, unpickle

__all__ = ["load_torch_zip", "plan_torch_zip", "is_zip"]

_LOCAL_HEADER = b"PK\x03\x04"


def is_zip(head: bytes) -> bool:
    """True when the first bytes `head` start a zip archive (torch.save's default format)."""
    return head[:4] in (_LOCAL_HEADER, b"PK\x05\x06")


def _record_offset(src: Source, info: zipfile.ZipInfo) -> int:
    """Where a record's bytes start, after checking they are stored and inside the file."""
    what = f"zip record {info.filename!r}"
    if info.compress_type != zipfile.ZIP_STORED or info.flag_bits & 0x1:
        raise corrupt(
            src.name, f"{what} is compressed or encrypted; PyTorch stores records uncompressed"
        )
    head = src.read(info.header_offset, 30, what)
    if head[:4] != _LOCAL_HEADER:
        raise corrupt(src.name, f"{what} has no local header")
    n, m = struct.unpack("<HH", head[26:30])
    start = info.header_offset + 30 + n + m
    src.check_span(start, info.file_size, what)
    return start


def load_torch_zip(ctx: LoadContext) -> Any:
    """Load a PyTorch zip checkpoint (torch.save since 1.6): its data.pkl and storage records.

    Raises:
        CheckpointError: for a damaged archive, a TorchScript archive or an unknown byte order.
    """
    src = ctx.src
    try:
        infos = {i.filename: i for i in zipfile.ZipFile(src.cursor()).infolist()}
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, ValueError) as e:
        raise corrupt(src.name, f"bad zip archive: {e}") from None
    pkls = [n for n in infos if n.endswith("/data.pkl") and n.count("/") == 1]
    prefixes = {n.split("/")[0] + "/" for n in infos}
    if any(p + "constants.pkl" in infos for p in prefixes):
        raise unsupported(
            src.name,
            "is a TorchScript archive (torch.jit.save); coretorch cannot "
            "load TorchScript. Save the model's state_dict with "
            "torch.save in PyTorch and load that",
        )
    if len(pkls) != 1:
        raise corrupt(src.name, "a zip archive without exactly one <name>/data.pkl record")
    prefix = pkls[0][: -len("data.pkl")]

    def record(name: str) -> bytes | None:
        info = infos.get(prefix + name)
        if info is None:
            return None
        return src.read(_record_offset(src, info), info.file_size, f"zip record {name!r}")

    order = record("byteorder")
    if order not in (None, b"little", b"big"):
        raise corrupt(src.name, f"unknown byteorder record {order!r:.20}")
    big_endian = order == b"big"
    refs: dict[str, StorageRef] = {}

    def load_base(ref: StorageRef, stored: StoredType) -> Tensor:
        def make() -> Tensor:
            if ref.nbytes % stored.itemsize:
                raise corrupt(
                    src.name,
                    f"storage {ref.key!r} of {ref.nbytes} bytes does not hold "
                    f"whole {stored.name} elements",
                )
            count = ref.nbytes // stored.itemsize
            dtype = core_dtype(stored, src.name)
            if ctx.placement.skips_data(ref.location):
                return empty_base(dtype, count, "meta")
            info = infos[prefix + "data/" + ref.key]
            raw = src.read_array(
                _record_offset(src, info), stored.raw, count, f"storage {ref.key!r}"
            )
            arr = to_core_array(raw, stored, src.name, ctx.notes, big_endian)
            return ctx.placement.place(base_from_array(arr), ref.location)

        return ctx.cache.get((ref.key, stored.name), make)

    def persistent_load(pid: Any) -> StorageRef:
        stype, key, loc, numel = storage_pid(pid, src.name, 4)
        if (
            not isinstance(stype, StorageType)
            or not isinstance(key, str)
            or not isinstance(loc, str)
            or type(numel) is not int
            or numel < 0
        ):
            raise corrupt(src.name, f"bad storage reference {pid!r:.80}")
        ref = refs.get(key)
        if ref is None:
            info = infos.get(prefix + "data/" + key)
            if info is None:
                raise corrupt(src.name, f"storage {key!r} has no record in the archive")
            ref = StorageRef(key, stype, numel, loc, load_base)
            if info.file_size != ref.nbytes:
                raise corrupt(
                    src.name,
                    f"storage {key!r} record holds {info.file_size} bytes, the "
                    f"pickle says {ref.nbytes}",
                )
            refs[key] = ref
        elif ref.stype is not stype or ref.numel != numel:
            raise corrupt(src.name, f"storage {key!r} is described two different ways")
        return ref

    data = record("data.pkl")
    assert data is not None  # the record found above
    return unpickle(ctx, io.BytesIO(data), persistent_load)


# ---- writing --------------------------------------------------------------------------------


class _TorchName:
    """A PyTorch global written into the pickle by name (PyTorch need not be installed)."""

    __slots__ = ("module", "name")

    def __init__(self, module: str, name: str):
        self.module, self.name = module, name

    def __call__(self, *args):
        raise TypeError(f"{self.module}.{self.name} is only a name written into checkpoints")


_REBUILD_V2 = _TorchName("torch._utils", "_rebuild_tensor_v2")
_REBUILD_V3 = _TorchName("torch._utils", "_rebuild_tensor_v3")
_REBUILD_PARAMETER = _TorchName("torch._utils", "_rebuild_parameter")
_REBUILD_META = _TorchName("torch._utils", "_rebuild_meta_tensor_no_storage")
_DEVICE = _TorchName("torch", "device")
_SIZE = _TorchName("torch", "Size")
_UNTYPED_STORAGE = _TorchName("torch.storage", "UntypedStorage")
_NAMES: dict[str, _TorchName] = {}


def _torch_name(module: str, name: str) -> _TorchName:
    key = f"{module}.{name}"
    ref = _NAMES.get(key)
    if ref is None:
        ref = _NAMES[key] = _TorchName(module, name)
    return ref


class _StorageOut:
    """A storage being saved: its persistent id, and a tensor to read its elements from."""

    __slots__ = ("pid", "key", "tensor", "numel", "stored")

    def __init__(self, key: str, t: Tensor, typed: bool):
        self.key, self.stored = key, stored_type_of(t.dtype)
        self.numel = t.untyped_storage().nbytes // t.dtype.itemsize
        self.tensor = t.detach().as_strided((self.numel,), (1,), 0)
        cls = self.stored.storage_class  # there is one when typed
        stype = _torch_name("torch", cls) if typed and cls else _UNTYPED_STORAGE
        count = self.numel if typed else self.numel * t.dtype.itemsize
        self.pid = ("storage", stype, key, location(t.device), count)


class _CheckpointPickler(pickle._Pickler):
    """Pickles like ``torch.save``: tensors become PyTorch rebuild calls over storages named by
    persistent ids; dtypes, devices and sizes become PyTorch's own globals."""

    dispatch: ClassVar[dict[type, Callable[[Any, Any], None]]] = dict(pickle._Pickler.dispatch)
    if TYPE_CHECKING:  # the pure-Python pickler's methods used below, which typeshed leaves out

        def write(self, data: bytes) -> None: ...
        def memoize(self, obj: Any) -> None: ...
        def save(self, obj: Any) -> None: ...
        def save_reduce(self, func: Any, args: tuple, *, obj: Any = None) -> None: ...

    def __init__(self, file: BinaryIO, protocol: int):
        super().__init__(file, protocol)
        self.storages: dict[tuple[int, str], _StorageOut] = {}

    def persistent_id(self, obj: Any) -> Any:
        return obj.pid if type(obj) is _StorageOut else None

    def reducer_override(self, obj: Any) -> Any:
        if not isinstance(obj, Tensor):
            return NotImplemented
        t = obj
        if type(t) is Parameter:
            return _REBUILD_PARAMETER, (t.detach(), t.requires_grad, OrderedDict())
        if type(t) is not Tensor:
            raise pickle.PicklingError(
                f"save(): cannot save a {type(t).__qualname__} (a Tensor "
                f"subclass); save a plain tensor or a Parameter"
            )
        if t.device.type == "meta":
            return _REBUILD_META, (t.dtype, tuple(t.shape), tuple(t.stride()), t.requires_grad)
        typed = stored_type_of(t.dtype).storage_class is not None
        gk = (id(t.untyped_storage()), t.dtype.name)
        s = self.storages.get(gk)
        if s is None:
            s = self.storages[gk] = _StorageOut(str(len(self.storages)), t, typed)
        args: tuple = (
            s,
            t.storage_offset(),
            tuple(t.shape),
            tuple(t.stride()),
            t.requires_grad,
            OrderedDict(),
        )
        return (_REBUILD_V2, args) if typed else (_REBUILD_V3, args + (t.dtype,))

    def _save_name(self, ref: _TorchName) -> None:
        self.write(pickle.GLOBAL + f"{ref.module}\n{ref.name}\n".encode("utf-8"))
        self.memoize(ref)

    def _save_dtype(self, d: _dt.dtype) -> None:
        self.save(_torch_name("torch", d.name))

    def _save_device(self, d: _device) -> None:
        self.save_reduce(_DEVICE, (d.type,) if d.index is None else (d.type, d.index), obj=d)

    def _save_size(self, s: Size) -> None:
        self.save_reduce(_SIZE, (tuple(s),), obj=s)

    dispatch[_TorchName] = _save_name
    dispatch[_dt.dtype] = _save_dtype
    dispatch[_device] = _save_device
    dispatch[Size] = _save_size


_ALIGN = 64  # PyTorch aligns storage records so a loaded file can be memory-mapped


def _write_record(
    zf: zipfile.ZipFile,
    f: BinaryIO,
    name: str,
    nbytes: int,
    produce: Callable[[], Any],
    align: bool = False,
) -> None:
    zi = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    zi.compress_type = zipfile.ZIP_STORED
    zi.file_size = nbytes
    zip64 = nbytes * 1.05 > zipfile.ZIP64_LIMIT  # zipfile's own rule for a known size
    if align:
        try:
            pos = f.tell()
        except (OSError, AttributeError):
            pos = None
        if pos is not None:
            pad = -(pos + 30 + len(name.encode()) + 4 + (20 if zip64 else 0)) % _ALIGN
            zi.extra = struct.pack("<HH", 0x4246, pad) + b"Z" * pad  # PyTorch's "FB" padding
    with zf.open(zi, "w", force_zip64=zip64) as out:
        data = produce()
        out.write(data if isinstance(data, bytes) else data.reshape(-1).view("u1"))


def plan_torch_zip(obj: Any, protocol: int = 2) -> Callable[[BinaryIO], None]:
    """Pickle `obj` now (so pickling errors surface before any file is touched) and return the
    function that writes the archive."""
    buf = io.BytesIO()
    pickler = _CheckpointPickler(buf, protocol)
    pickler.dump(obj)
    data = buf.getvalue()
    storages = list(pickler.storages.values())
    serial = str(secrets.randbits(128)).zfill(40).encode()

    def write(f: BinaryIO) -> None:
        with zipfile.ZipFile(f, "w", zipfile.ZIP_STORED, allowZip64=True) as zf:
            for name, payload in (
                ("data.pkl", data),
                (".format_version", b"1"),
                (".storage_alignment", str(_ALIGN).encode()),
                ("byteorder", b"little"),
            ):
                _write_record(
                    zf, f, "archive/" + name, len(payload), functools.partial(bytes, payload)
                )
            for s in storages:
                _write_record(
                    zf,
                    f,
                    f"archive/data/{s.key}",
                    s.numel * s.stored.itemsize,
                    functools.partial(host_array, s.tensor),
                    align=True,
                )
            for name, payload in (("version", b"3\n"), (".data/serialization_id", serial)):
                _write_record(
                    zf, f, "archive/" + name, len(payload), functools.partial(bytes, payload)
                )

    return write
