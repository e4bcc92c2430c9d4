"""`save` / `load` (mirrors ``torch.save`` / ``torch.load`` and ``torch.serialization``).

What `save` writes:

- tensors, state dicts and optimizer states -- anything made only of dicts, OrderedDicts,
  lists, tuples, numbers, strings, None, dtypes, devices, tensors and numpy arrays -- as one
  safetensors file whose metadata holds the object's JSON skeleton. Loading it parses JSON and
  reads arrays: it never runs code, whatever ``weights_only`` says. Other programs read its
  tensors with any safetensors reader.
- anything else (a whole ``nn.Module``, a dataclass, a set...) in PyTorch's own zip format
  (``torch.save``'s), pickled with PyTorch's names for tensors, dtypes and devices, so PyTorch
  can read it too. Loading it needs ``weights_only=False`` or the classes in
  `add_safe_globals`, exactly as in PyTorch.

What `load` reads: those two, PyTorch's zip and legacy checkpoints (state dicts, tensors of any
dtype; PyTorch need not be installed), and plain safetensors files (as a dict of tensors).
Every file is validated before data is read (header sizes against the real file size, record
sizes against what the header says), tensors are read one at a time by offset, tensors that
shared storage when saved share it when loaded, meta tensors stay meta, and a malformed file
raises RuntimeError (`CheckpointError`) naming the file and the problem. Paths are written
atomically (`coretorch.utils.atomic_write`).
"""

from __future__ import annotations

import os
import pickle
import warnings
from typing import Any, BinaryIO, Callable

from ..device import device as _device
from .errors import CheckpointError, corrupt
from .safe_globals import add_safe_globals, clear_safe_globals, get_safe_globals, safe_globals

# the readers and writers are imported on first use: `import coretorch` stays cheap

__all__ = [
    "save",
    "load",
    "add_safe_globals",
    "get_safe_globals",
    "clear_safe_globals",
    "safe_globals",
    "get_unsafe_globals_in_checkpoint",
    "CheckpointError",
    "DEFAULT_PROTOCOL",
]

DEFAULT_PROTOCOL = 2
_PICKLE_ARGS = {"encoding", "errors", "fix_imports", "buffers"}
_TRUE = ("1", "y", "yes", "true")


def save(
    obj: Any,
    f: "str | os.PathLike[str] | BinaryIO",
    pickle_module: Any = None,
    pickle_protocol: int = DEFAULT_PROTOCOL,
    _use_new_zipfile_serialization: bool = True,
    _disable_byteorder_record: bool = False,
) -> None:
    """Save `obj` to `f` (a path, written atomically, or a writable binary file object).

    State dicts and other plain data go to a safetensors file; any other picklable object
    (``save(model)``) to PyTorch's zip format. ``pickle_protocol`` applies to the latter.

    Raises:
        TypeError: when `f` is neither a path nor a writable file object.
        ValueError: when a `pickle_module` other than the standard one is given.
        NotImplementedError: when PyTorch's legacy (non-zip) format is asked for.

    Examples:
        >>> import os, tempfile
        >>> import coretorch
        >>> path = os.path.join(tempfile.mkdtemp(), "model.pt")
        >>> model = coretorch.nn.Linear(2, 1)
        >>> coretorch.save(model.state_dict(), path)
        >>> state = coretorch.load(path)
        >>> sorted(state), coretorch.equal(state["weight"], model.weight)
        (['bias', 'weight'], True)
        >>> coretorch.save({"step": 3, "lr": 0.5, "name": "sgd"}, path)
        >>> coretorch.load(path)
        {'step': 3, 'lr': 0.5, 'name': 'sgd'}
    """
    if pickle_module not in (None, pickle):
        raise ValueError(
            "save(): pickle_module must be left unset (coretorch writes tensors "
            "itself and pickles the rest with the standard pickle module)"
        )
    if not _use_new_zipfile_serialization:
        raise NotImplementedError(
            "save(_use_new_zipfile_serialization=False): coretorch does "
            "not write PyTorch's legacy format (it reads it); leave it True"
        )
    if _disable_byteorder_record:
        raise NotImplementedError(
            "save(_disable_byteorder_record=True): coretorch always records the byte order"
        )
    if not isinstance(f, (str, os.PathLike)) and not hasattr(f, "write"):
        raise TypeError(
            f"save(): expected a path or a writable binary file, got {type(f).__name__}"
        )
    from ..utils.atomic_write import atomic_write
    from .skeleton import plan_safetensors
    from .torch_zip import plan_torch_zip

    write = plan_safetensors(obj) or plan_torch_zip(obj, pickle_protocol)
    if isinstance(f, (str, os.PathLike)):
        atomic_write(f, write, caller="save()")
    else:
        write(f)


def _weights_only(weights_only: bool | None) -> bool:
    force = os.getenv("TORCH_FORCE_WEIGHTS_ONLY_LOAD", "0").lower() in _TRUE
    force_no = os.getenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "0").lower() in _TRUE
    if force and force_no:
        raise RuntimeError(
            "Only one of `TORCH_FORCE_WEIGHTS_ONLY_LOAD` or "
            "`TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD` should be set, but both were set."
        )
    if force:
        return True
    if weights_only is None:
        if force_no:
            warnings.warn(
                "Environment variable TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD detected, since "
                "the `weights_only` argument was not explicitly passed to "
                "`coretorch.load`, forcing weights_only=False.",
                UserWarning,
                stacklevel=3,
            )
            return False
        return True
    return bool(weights_only)


def is_pickle(head: bytes) -> bool:
    """Whether a file's first 9 bytes start a pickle (PyTorch's legacy format, or any pickle)
    rather than safetensors: a pickle starts with PROTO (0x80), and so does a safetensors file
    whose header is 128 bytes long (mod 256); safetensors' JSON header then opens at byte 8."""
    return head[:1] == b"\x80" and head[8:9] != b"{"


def load(
    f: "str | os.PathLike[str] | BinaryIO",
    map_location: "str | _device | dict | Callable | None" = None,
    pickle_module: Any = None,
    *,
    weights_only: bool | None = None,
    mmap: bool | None = None,
    **pickle_load_args: Any,
) -> Any:
    """Load a checkpoint written by `save` or by ``torch.save`` (zip or legacy format), or a
    plain safetensors file, from a path or a seekable binary file object.

    `map_location`: None keeps each tensor's saved device; a device or string sends every
    storage there; a dict maps saved device strings ('cpu', 'cuda:0') to new ones; a callable
    ``fn(storage, location)`` gets each storage as a 1-D cpu tensor and returns the tensor to
    use (or None). Meta tensors stay meta.

    ``weights_only`` (default True, as in PyTorch; the environment variables
    ``TORCH_FORCE_WEIGHTS_ONLY_LOAD`` / ``TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD`` override it as in
    PyTorch): pickled checkpoints may only name tensors, containers and the classes given to
    `add_safe_globals`, else ``pickle.UnpicklingError``. ``weights_only=False`` unpickles
    anything -- only for files from a trusted source. ``mmap=True`` maps the file (a path)
    copy-on-write instead of reading it. A malformed file raises `CheckpointError`
    (a RuntimeError) naming the file and what is wrong.

    Raises:
        CheckpointError: for a truncated, corrupted or unsupported file.
        pickle.UnpicklingError: when ``weights_only`` and the pickle names a global outside the
            allowlist.
        TypeError: for unknown keyword arguments.

    Examples:
        >>> import os, tempfile
        >>> import coretorch
        >>> path = os.path.join(tempfile.mkdtemp(), "t.pt")
        >>> coretorch.save({"x": coretorch.arange(3)}, path)
        >>> coretorch.load(path, map_location="cpu")
        {'x': tensor([0, 1, 2])}
        >>> with open(path, "wb") as f:
        ...     _ = f.write(b"not a checkpoint")
        >>> coretorch.load(path)
        Traceback (most recent call last):
            ...
        coretorch.serialization.errors.CheckpointError: load(): ... is not a valid checkpoint ...
    """
    from .context import LoadContext
    from .skeleton import load_safetensors
    from .source import Source
    from .storages import Placement, UserCodeError
    from .torch_legacy import load_torch_legacy
    from .torch_zip import is_zip, load_torch_zip

    weights_only = _weights_only(weights_only)
    if weights_only and pickle_module is not None:
        raise RuntimeError("Can not safely load weights when explicit pickle_module is specified")
    unknown = set(pickle_load_args) - _PICKLE_ARGS
    if unknown:
        raise TypeError(f"load() got unexpected keyword arguments {sorted(unknown)}")
    if pickle_load_args and weights_only:
        warnings.warn("pickle_load_args only works if `weights_only=False`.", stacklevel=2)
    pickle_load_args.setdefault("encoding", "utf-8")
    with Source.open(f, bool(mmap)) as src:
        ctx = LoadContext(
            src, Placement(map_location, src.name), weights_only, pickle_module, pickle_load_args
        )
        head = src.read(0, min(src.size, 9), "the first bytes")
        if is_zip(head):
            reader = load_torch_zip
        elif is_pickle(head):
            if mmap:
                raise RuntimeError(
                    "mmap can only be used with files saved with "
                    "`torch.save(_use_new_zipfile_serialization=True)` or "
                    "coretorch.save; please re-save the checkpoint to use mmap."
                )
            reader = load_torch_legacy
        else:
            reader = load_safetensors
        try:
            out = reader(ctx)
            for note in ctx.notes.values():
                warnings.warn(note, UserWarning, stacklevel=2)
            return out
        except UserCodeError as e:
            raise e.error from None
        except (CheckpointError, pickle.UnpicklingError, OSError, MemoryError):
            raise
        except Exception as e:
            if not weights_only and reader is not load_safetensors:
                raise  # errors of the user's own classes surface as they are
            raise corrupt(src.name, f"{type(e).__name__}: {e}"[:300]) from e


def get_unsafe_globals_in_checkpoint(f: "str | os.PathLike[str] | BinaryIO") -> list[str]:
    """The globals a PyTorch-format checkpoint names that ``weights_only=True`` would refuse
    (nothing is unpickled). A safetensors checkpoint names none."""
    import io
    import pickletools
    import zipfile

    from .source import Source
    from .torch_globals import TORCH_GLOBALS, find_global
    from .torch_zip import is_zip

    with Source.open(f) as src:
        head = src.read(0, min(src.size, 9), "the first bytes")
        if is_zip(head):
            zf = zipfile.ZipFile(src.cursor())
            names = [n for n in zf.namelist() if n.endswith("/data.pkl") and n.count("/") == 1]
            if len(names) != 1:
                raise corrupt(src.name, "a zip archive without exactly one <name>/data.pkl")
            streams: list[Any] = [io.BytesIO(zf.read(names[0]))]
        elif is_pickle(head):
            cur = src.cursor(0)
            streams = [cur] * 4
        else:
            return []
        found: set[str] = set()
        for stream in streams:
            strings: list[str] = []
            try:
                for op, arg, _ in pickletools.genops(stream):
                    if op.name in ("SHORT_BINUNICODE", "BINUNICODE", "UNICODE"):
                        strings.append(str(arg))
                    elif op.name == "GLOBAL":
                        found.add(str(arg).replace(" ", "."))
                    elif op.name == "STACK_GLOBAL" and len(strings) >= 2:
                        found.add(f"{strings[-2]}.{strings[-1]}")
            except Exception as e:
                raise corrupt(src.name, f"malformed pickle: {e}") from None
    out = []
    for full in sorted(found):
        module, _, name = full.rpartition(".")
        if full in TORCH_GLOBALS:
            continue
        try:
            find_global(module, name, src.name, weights_only=True)
        except pickle.UnpicklingError:
            out.append(full)
    return out
