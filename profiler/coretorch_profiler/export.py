"""Writing files: atomically (a reader never sees half a file), through symlinks, with the
permissions the umask gives; and the memory timeline's JSON and HTML forms."""
from __future__ import annotations

import gzip
import json
import os
from typing import Any

__all__ = ["atomic_write", "write_json", "write_memory_timeline", "check_writable"]

_TMP_MARK = ".coretorch-tmp-"


def check_writable(path: str | os.PathLike, what: str = "output") -> str:
    """Raise a clear error now if a file cannot be written at `path` later (missing folder,
    no permission, a folder in the way). Returns the path as a string."""
    path = os.fspath(path)
    target = os.path.realpath(path)
    folder = os.path.dirname(target) or "."
    if os.path.isdir(target):
        raise IsADirectoryError(f"cannot write the {what} to {path!r}: it is a directory")
    if not os.path.isdir(folder):
        raise FileNotFoundError(f"cannot write the {what} to {path!r}: the folder "
                                f"{os.path.dirname(path) or '.'!r} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise PermissionError(f"cannot write the {what} to {path!r}: the folder is not "
                              f"writable")
    return path


def atomic_write(path: str | os.PathLike, data: bytes) -> str:
    """Write `data` to `path` through a temporary file renamed over it. A symlink at `path` is
    written through (its target is replaced); the file gets the umask's permissions; a
    temporary left by a killed writer for the same target is removed. Errors name `path`."""
    path = os.fspath(path)
    target = os.path.realpath(path)
    folder, base = os.path.split(target)
    prefix = f".{base}{_TMP_MARK}"
    try:
        for name in os.listdir(folder):
            if name.startswith(prefix):
                pid = name[len(prefix):].split(".", 1)[0]
                if pid.isdigit() and not _alive(int(pid)):
                    os.unlink(os.path.join(folder, name))
    except OSError:
        pass
    tmp = os.path.join(folder, f"{prefix}{os.getpid()}.tmp")
    umask = os.umask(0)
    os.umask(umask)
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666 & ~umask)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except OSError as e:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise type(e)(e.errno, f"cannot write {path!r}: {e.strerror}") from None
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return False  # this process writes one file at a time: an old temp of ours is stale
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


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
    raise ValueError(f"export_memory_timeline(): expected a path ending in .json, .json.gz or "
                     f".html, got {path!r}")
