"""Writing files: atomically (a reader never sees half a file), through symlinks, with the
permissions the umask gives; and the memory timeline's JSON and HTML forms."""

from __future__ import annotations

import gzip
import json
import os
from typing import Any

from coretorch.utils.atomic_write import atomic_write as _atomic_write

__all__ = ["atomic_write", "write_json", "write_memory_timeline", "check_writable"]


def check_writable(path: str | os.PathLike, what: str = "output") -> str:
    """Raise a clear error now if a file cannot be written at `path` later (missing folder,
    no permission, a folder in the way). Returns the path as a string."""
    path = os.fspath(path)
    target = os.path.realpath(path)
    folder = os.path.dirname(target) or "."
    if os.path.isdir(target):
        raise IsADirectoryError(f"cannot write the {what} to {path!r}: it is a directory")
    if not os.path.isdir(folder):
        raise FileNotFoundError(
            f"cannot write the {what} to {path!r}: the folder "
            f"{os.path.dirname(path) or '.'!r} does not exist"
        )
    if not os.access(folder, os.W_OK | os.X_OK):
        raise PermissionError(f"cannot write the {what} to {path!r}: the folder is not writable")
    return path


def atomic_write(path: str | os.PathLike, data: bytes) -> str:
    """Write `data` to `path` atomically (`coretorch.utils.atomic_write`: write-through symlinks,
    the umask's permissions, stale temporaries of killed writers removed, errors name `path`)."""
    _atomic_write(path, data, caller="profiler export")
    return os.fspath(path)


def write_json(path: str | os.PathLike, doc: Any) -> str:
    """JSON (gzip-compressed when `path` ends in .gz), written atomically. A space follows
    each colon: HTA finds a trace's rank with the pattern ``"rank":\\s+\\d+``."""
    path = os.fspath(path)
    data = json.dumps(doc, separators=(",", ": ")).encode()
    if path.endswith(".gz"):
        data = gzip.compress(data, compresslevel=6)
    return atomic_write(path, data)


def write_memory_timeline(path: str | os.PathLike, tl: dict[str, Any]) -> str:
    """``.json``/``.json.gz``: {device, categories, times_us, bytes (per time, per category),
    peak_time_us, peak_bytes}; ``.html``: a page with the stacked plot and the peak marked."""
    path = os.fspath(path)
    if path.endswith(".html"):
        from .report import memory_timeline_page

        return atomic_write(path, memory_timeline_page(tl).encode())
    if path.endswith((".json", ".json.gz")):
        return write_json(path, tl)
    raise ValueError(
        f"export_memory_timeline(): expected a path ending in .json, .json.gz or "
        f".html, got {path!r}"
    )
