"""Code objects of the generated entry points and binders, kept on disk between processes.

Compiling the ~700 generated functions is about a sixth of ``import coretorch``. This cache maps
each (file name, source) pair to its compiled code in one marshal file per Python bytecode
version, ``$XDG_CACHE_HOME/coretorch/entries-<tag>.marshal`` (``~/.cache`` by default). The file
is read once, on the first compile, checked against its digest, and written again (atomically)
after an import that had to compile something new. A changed source has a new key, so a stale
entry is never used, and the file keeps only the entries its last writer used. Like Python's own
bytecode cache, nothing is written when ``sys.dont_write_bytecode`` is set
(``PYTHONDONTWRITEBYTECODE``).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import marshal
import os
import sys
import tempfile
from types import CodeType

__all__ = ["compile_cached", "flush"]

_HEADER = importlib.util.MAGIC_NUMBER + b"coretorch-entries-1\n"
_cached: dict[bytes, CodeType] | None = None  # read from the file on first use
_used: dict[bytes, CodeType] = {}
_missed = False


def path() -> str:
    """The cache file of this interpreter's bytecode version."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "coretorch", f"entries-{sys.implementation.cache_tag}.marshal")


def _digest(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=16).digest()


def _read() -> dict[bytes, CodeType]:
    try:
        with open(path(), "rb") as f:
            data = f.read()
        n = len(_HEADER)
        body = data[n + 16 :]
        if data[:n] == _HEADER and data[n : n + 16] == _digest(body):
            table = marshal.loads(body)
            if isinstance(table, dict):
                return table
    except (OSError, EOFError, ValueError, TypeError):  # absent or damaged: compile afresh
        pass
    return {}


def compile_cached(src: str, filename: str) -> CodeType:
    """``compile(src, filename, "exec")``, from the cache when this source was compiled before."""
    global _cached, _missed
    if _cached is None:
        _cached = _read()
    key = hashlib.blake2b(f"{filename}\0{src}".encode(), digest_size=16).digest()
    code = _cached.get(key)
    if code is None:
        code = compile(src, filename, "exec")
        _missed = True
    _used[key] = code
    return code


def flush() -> None:
    """Write the entries this process used, if any had to be compiled (called at the end of
    ``import coretorch``; a failure to write only costs the next import its compile time)."""
    global _missed
    if not _missed or sys.dont_write_bytecode:
        return
    _missed = False
    folder = os.path.dirname(path())
    try:
        os.makedirs(folder, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, suffix=".tmp")
    except OSError:
        return
    try:
        with os.fdopen(fd, "wb") as f:
            body = marshal.dumps(_used)
            f.write(_HEADER + _digest(body) + body)
        os.replace(tmp, path())
    except OSError:
        with contextlib.suppress(OSError):
            os.remove(tmp)
