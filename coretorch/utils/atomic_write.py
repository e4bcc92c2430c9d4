"""Atomic file writes for checkpoints, traces and other outputs a crash must not leave half-done.

`atomic_write(path, data)` writes into a temporary file beside the target and renames it over the
target, so a reader sees the old file or the new one, never a mix. Beyond the rename:

- the temporary file is named ``.<target name>.<host>-<pid>-<token>.coretorch-tmp``: a writer that
  is killed (SIGKILL, power loss) leaves one behind, and the next write to the same target removes
  the ones whose writing process on this host is gone;
- a new file gets the mode ``open()`` would give it (0o666 minus the umask); an existing file
  keeps its mode;
- a symlink is written through (its target is replaced, the link stays), as ``open(path, "wb")``
  does; a target that is not a regular file (``/dev/null``, a FIFO) is written in place;
- an OSError names the target path (and the calling function), never the temporary file.
"""

from __future__ import annotations

import errno
import os
import stat
import threading
import zlib
from typing import BinaryIO, Callable, Union

__all__ = ["atomic_write", "TEMP_SUFFIX"]

TEMP_SUFFIX = ".coretorch-tmp"
_NAME_MAX = 120  # characters of the target name kept in a temporary name (NAME_MAX is 255 bytes)

_active: set[str] = set()  # temporary files this process is writing right now
_active_lock = threading.Lock()

Writer = Union[bytes, bytearray, memoryview, Callable[[BinaryIO], None]]


def _host_tag() -> str:
    if hasattr(os, "uname"):
        host = os.uname().nodename
    else:
        import socket

        host = socket.gethostname()
    return f"{zlib.crc32(host.encode()):08x}"


def _temp_prefix(target: str) -> str:
    return "." + os.path.basename(target)[:_NAME_MAX] + "."


def _process_alive(pid: int) -> bool:
    if os.name == "nt":  # os.kill would terminate the process there; never guess "dead"
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError):
        return True
    return True


def _remove_stale_temps(target: str) -> None:
    """Remove temporary files a killed writer left for `target` (same host, process gone)."""
    folder = os.path.dirname(target) or "."
    prefix = _temp_prefix(target)
    host = _host_tag()
    try:
        names = [
            e.name
            for e in os.scandir(folder)
            if e.name.startswith(prefix) and e.name.endswith(TEMP_SUFFIX)
        ]
    except OSError:
        return
    for name in names:
        fields = name[len(prefix) : -len(TEMP_SUFFIX)].split("-")
        if len(fields) != 3 or fields[0] != host or not fields[1].isdigit():
            continue
        path = os.path.join(folder, name)
        pid = int(fields[1])
        with _active_lock:
            mine_now = path in _active
        if mine_now or (pid != os.getpid() and _process_alive(pid)):
            continue
        try:
            os.unlink(path)
        except OSError:
            pass


def _named_error(e: OSError, path: str, caller: str) -> OSError:
    """The same kind of OSError, naming `path` (what the user asked for) and the caller."""
    if e.errno is None:
        return type(e)(f"{caller}: cannot write {path!r}: {e}")
    try:
        return type(e)(e.errno, f"{caller}: {e.strerror or os.strerror(e.errno)}", path)
    except TypeError:
        return OSError(e.errno, f"{caller}: {e.strerror}", path)


def _write_all(f: BinaryIO, data: Writer) -> None:
    if callable(data):
        data(f)
    else:
        f.write(data)


def _fsync_folder(folder: str) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def atomic_write(path: "str | os.PathLike[str]", data: Writer, *, caller: str = "write") -> str:
    """Write `data` (bytes, or a function that writes into a binary file) to `path` atomically.

    `caller` names the public function in error messages (``"save()"``). Returns the path of the
    file actually written (the symlink's target when `path` is a symlink).
    """
    user_path = os.fspath(path)
    target = os.path.realpath(user_path)  # write through symlinks, as open(path, "wb") does
    try:
        st = os.stat(target)
    except FileNotFoundError:
        st = None
    except OSError as e:
        raise _named_error(e, user_path, caller) from None
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise _named_error(OSError(errno.EISDIR, os.strerror(errno.EISDIR)), user_path, caller)
    if st is not None and not stat.S_ISREG(st.st_mode):
        # a device or FIFO: renaming over it would replace the node itself
        try:
            with open(target, "wb") as f:
                _write_all(f, data)
        except OSError as e:
            raise _named_error(e, user_path, caller) from None
        return target

    folder = os.path.dirname(target)
    _remove_stale_temps(target)
    tmp = os.path.join(
        folder,
        f"{_temp_prefix(target)}{_host_tag()}-{os.getpid()}-{os.urandom(4).hex()}{TEMP_SUFFIX}",
    )
    with _active_lock:
        _active.add(tmp)
    try:
        flags = (
            os.O_WRONLY
            | os.O_CREAT
            | os.O_EXCL
            | getattr(os, "O_BINARY", 0)
            | getattr(os, "O_CLOEXEC", 0)
        )
        fd = os.open(tmp, flags, 0o666)  # the kernel applies the umask, as for open(path, "wb")
        with os.fdopen(fd, "wb") as f:
            if st is not None:
                os.chmod(tmp, stat.S_IMODE(st.st_mode))  # an existing file keeps its mode
            _write_all(f, data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(e, OSError):
            raise _named_error(e, user_path, caller) from None
        raise
    finally:
        with _active_lock:
            _active.discard(tmp)
    _fsync_folder(folder)
    return target
