"""Shared-memory byte buffers for cpu storages.

A buffer is an anonymous memory file (``memfd_create``: it never appears in /dev/shm) mapped
with ``MAP_SHARED``. Another process maps the same memory after receiving the file descriptor
(``multiprocessing.reduction.DupFd``). The memory goes back to the system when the last process
has unmapped it and closed its descriptor, so nothing is left behind even when a process is
killed: there is no name to unlink.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import mmap
import os

import numpy as np

__all__ = ["SharedBuffer", "new_shared_buffer", "shared_buffer_of"]


def _libc():
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = (
        ctypes.c_void_p,
        ctypes.c_size_t,
        ctypes.c_int,
        ctypes.c_int,
        ctypes.c_int,
        ctypes.c_long,
    )
    libc.munmap.restype = ctypes.c_int
    libc.munmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t)
    return libc


# mapped through libc: Python's mmap object would hold a second descriptor per buffer
_LIBC = _libc()
_MAP_FAILED = ctypes.c_void_p(-1).value


class SharedBuffer:
    """One process's mapping of a shared memory file. It owns the descriptor (kept open so the
    memory can be sent on to further processes, as PyTorch's ``file_descriptor`` strategy does)
    and the mapping; `array()` gives the uint8 numpy array a cpu storage holds, which keeps this
    object alive. When the last array goes, the mapping is released and the descriptor closed.
    """

    __slots__ = ("fd", "nbytes", "key", "address", "_length")

    def __init__(self, fd: int, nbytes: int) -> None:
        # the descriptor is ours from here on, whatever happens
        self.fd, self.nbytes, self.address, self._length = fd, nbytes, 0, max(nbytes, 1)
        st = os.fstat(fd)
        self.key = (st.st_dev, st.st_ino)  # the memory's identity, the same in every process
        if st.st_size < self._length:
            raise RuntimeError(
                f"shared memory: expected a memory file of at least {nbytes} "
                f"bytes, got {st.st_size}"
            )
        addr = _LIBC.mmap(
            None, self._length, mmap.PROT_READ | mmap.PROT_WRITE, mmap.MAP_SHARED, fd, 0
        )
        if addr is None or addr == _MAP_FAILED:
            err = ctypes.get_errno()
            raise OSError(err, f"shared memory: mmap of {nbytes} bytes failed: {os.strerror(err)}")
        self.address = addr

    @property
    def __array_interface__(self) -> dict:
        return {
            "shape": (self.nbytes,),
            "typestr": "|u1",
            "version": 3,
            "data": (self.address, False),
        }

    def array(self) -> np.ndarray:
        """The buffer as a uint8 numpy array whose base is this object."""
        return np.asarray(self)

    def __del__(self) -> None:
        if self.address:
            _LIBC.munmap(self.address, self._length)
            self.address = 0
        fd, self.fd = self.fd, -1
        if fd >= 0:
            os.close(fd)

    def __repr__(self) -> str:
        return f"SharedBuffer({self.nbytes} bytes, fd={self.fd})"


def _anonymous_memory_file(nbytes: int) -> int:
    if hasattr(os, "memfd_create"):
        fd = os.memfd_create("coretorch-shared", os.MFD_CLOEXEC)
    else:  # POSIX shared memory, unlinked at once so that no name outlives the descriptor
        import _posixshmem
        import secrets

        name = f"/coretorch_{os.getpid()}_{secrets.token_hex(8)}"
        fd = _posixshmem.shm_open(name, os.O_CREAT | os.O_EXCL | os.O_RDWR, mode=0o600)
        _posixshmem.shm_unlink(name)
    try:
        os.ftruncate(fd, max(nbytes, 1))
    except BaseException:
        os.close(fd)
        raise
    return fd


def new_shared_buffer(nbytes: int) -> SharedBuffer:
    """A new zero-filled shared buffer of `nbytes` bytes."""
    return SharedBuffer(_anonymous_memory_file(nbytes), nbytes)


def shared_buffer_of(data) -> SharedBuffer | None:
    """The SharedBuffer under a cpu storage's data array, or None when it is private memory."""
    base = getattr(data, "base", None)
    return base if type(base) is SharedBuffer else None
