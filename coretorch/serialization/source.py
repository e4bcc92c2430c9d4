"""A checkpoint opened for reading by offset: every read is checked against the real file size
first, so a lying header can never make `load` read (or allocate) more than the file holds."""

from __future__ import annotations

import io
import os
import stat

import numpy as np

from .errors import CheckpointError, corrupt

__all__ = ["Source", "Cursor"]


class Source:
    """The bytes ``[start, start + size)`` of a file, with the name errors should show."""

    def __init__(self, f, name: str, start: int, size: int, path: str | None, owned: bool):
        self.f, self.name, self.start, self.size = f, name, start, size
        self.path, self._owned = path, owned
        self._map: np.ndarray | None = None

    @classmethod
    def open(cls, f, mmap: bool = False) -> "Source":
        """Open a path or wrap a seekable binary file object (read from its current position)."""
        if isinstance(f, (str, bytes, os.PathLike)):
            path = os.fsdecode(f)
            name = repr(path)
            fh = open(path, "rb")
            try:
                st = os.fstat(fh.fileno())
                if not stat.S_ISREG(st.st_mode):
                    raise CheckpointError(
                        f"load(): {name} is not a regular file; checkpoints are "
                        f"read from regular files or seekable file objects"
                    )
                src = cls(fh, name, 0, st.st_size, path, owned=True)
                if mmap:
                    src._map = (
                        np.memmap(path, dtype=np.uint8, mode="c")
                        if st.st_size
                        else np.zeros(0, np.uint8)
                    )
                return src
            except BaseException:
                fh.close()
                raise
        if not hasattr(f, "read"):
            raise TypeError(
                f"load(): expected a path or a readable binary file object, got {type(f).__name__}"
            )
        if isinstance(f, io.TextIOBase):
            raise TypeError("load(): expected a binary file object (open the file with 'rb')")
        if mmap:
            raise ValueError("f must be a file path in order to use the mmap argument")
        fname = getattr(f, "name", None)
        name = repr(fname) if isinstance(fname, (str, bytes)) else f"<{type(f).__name__}>"
        try:
            seekable = f.seekable() if hasattr(f, "seekable") else True
            start = f.tell()
            end = f.seek(0, os.SEEK_END) if seekable else None
        except (OSError, AttributeError, ValueError):
            seekable, end = False, None
        if not seekable or end is None:
            raise CheckpointError(
                f"load(): {name} is not seekable. You can only load from a file "
                f"that is seekable. Please pre-load the data into a buffer like "
                f"io.BytesIO and try to load from it instead."
            )
        f.seek(start)
        return cls(f, name, start, max(0, end - start), None, owned=False)

    def close(self) -> None:
        """Release the memory map and close the file if this Source opened it."""
        self._map = None
        if self._owned:
            self.f.close()

    def __enter__(self) -> "Source":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def check_span(self, offset: int, n: int, what: str) -> None:
        """Check that bytes offset..offset+n lie inside the file.

        Args:
            offset: first byte.
            n: number of bytes.
            what: what the bytes hold, named in the error.

        Raises:
            CheckpointError: when the span is negative or runs past the end of the file.
        """
        if offset < 0 or n < 0 or offset + n > self.size:
            raise corrupt(
                self.name, f"{what} needs bytes {offset}..{offset + n} of a {self.size}-byte file"
            )

    def read(self, offset: int, n: int, what: str) -> bytes:
        """Exactly `n` bytes at `offset` (relative to the start), after checking they exist."""
        self.check_span(offset, n, what)
        self.f.seek(self.start + offset)
        data = self.f.read(n)
        if len(data) != n:
            raise corrupt(self.name, f"{what}: the file ended early")
        return data

    def read_array(self, offset: int, dtype: np.dtype, count: int, what: str) -> np.ndarray:
        """`count` items of `dtype` at `offset`, as one fresh writable array (or, when the file is
        memory-mapped, a copy-on-write view of the file)."""
        nbytes = count * dtype.itemsize
        self.check_span(offset, nbytes, what)
        if self._map is not None:
            arr = self._map[offset : offset + nbytes].view(dtype)
            return arr if arr.ctypes.data % dtype.alignment == 0 else arr.copy()
        arr = np.empty(count, dtype)
        view = arr.view(np.uint8).data if nbytes else memoryview(b"")
        self.f.seek(self.start + offset)
        got = 0
        while got < nbytes:
            n = self.f.readinto(view[got:])
            if not n:
                raise corrupt(self.name, f"{what}: the file ended early")
            got += n
        return arr

    def cursor(self, offset: int = 0) -> "Cursor":
        """A file-like reader over this source, starting at `offset`."""
        return Cursor(self, offset)


class Cursor:
    """A sequential reader over a Source (for pickles and zip directories) that never reads past
    the end of the file, whatever length a record claims."""

    def __init__(self, src: Source, pos: int = 0):
        self.src, self.pos = src, pos

    def readable(self) -> bool:
        """Always True (io protocol)."""
        return True

    def seekable(self) -> bool:
        """Always True (io protocol)."""
        return True

    def tell(self) -> int:
        """The current position, relative to the start of the source."""
        return self.pos

    def seek(self, offset: int, whence: int = 0) -> int:
        """Move to `offset` relative to whence (0 start, 1 current, 2 end); clamps at 0; returns the
        new position."""
        base = {0: 0, 1: self.pos, 2: self.src.size}[whence]
        self.pos = max(0, base + offset)
        return self.pos

    def read(self, n: int = -1) -> bytes:
        """Read up to `n` bytes (all that is left when n is negative or None)."""
        left = max(0, self.src.size - self.pos)
        n = left if n is None or n < 0 else min(n, left)
        if n == 0:
            return b""
        self.src.f.seek(self.src.start + self.pos)
        data = self.src.f.read(n)
        self.pos += len(data)
        return data

    def readinto(self, b) -> int:
        """Read into the writable buffer `b`; returns the number of bytes read."""
        data = self.read(len(b))
        b[: len(data)] = data
        return len(data)

    def readline(self, limit: int = -1) -> bytes:
        """Read one line of at most `limit` bytes (no limit when negative)."""
        left = max(0, self.src.size - self.pos)
        n = left if limit is None or limit < 0 else min(limit, left)
        self.src.f.seek(self.src.start + self.pos)
        data = self.src.f.readline(n) if n else b""
        self.pos += len(data)
        return data
