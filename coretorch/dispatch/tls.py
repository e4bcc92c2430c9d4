"""Thread-local included/excluded dispatch keys and the guards that change them."""

from __future__ import annotations

import threading

from .keys import DispatchKey, DispatchKeySet, _bits_of

__all__ = [
    "local_keys",
    "ExcludeDispatchKeyGuard",
    "IncludeDispatchKeyGuard",
    "tls_included",
    "tls_excluded",
]


class _LocalKeys(threading.local):
    include = 0
    exclude = 0


local_keys = _LocalKeys()


def tls_included() -> DispatchKeySet:
    """The keys this thread adds to every dispatch."""
    return DispatchKeySet(local_keys.include)


def tls_excluded() -> DispatchKeySet:
    """The keys this thread skips in every dispatch."""
    return DispatchKeySet(local_keys.exclude)


class _KeyGuard:
    """Adds keys to the thread-local set named `_field` for the block; restores it after."""

    __slots__ = ("bits", "prev")
    _field = ""

    def __init__(self, keys: "DispatchKeySet | DispatchKey"):
        self.bits = _bits_of(keys)

    def __enter__(self):
        self.prev = getattr(local_keys, self._field)
        setattr(local_keys, self._field, self.prev | self.bits)
        return self

    def __exit__(self, *exc):
        setattr(local_keys, self._field, self.prev)


class ExcludeDispatchKeyGuard(_KeyGuard):
    """``with ExcludeDispatchKeyGuard(DispatchKey.Autograd):`` skips those keys in this thread."""

    __slots__ = ()
    _field = "exclude"


class IncludeDispatchKeyGuard(_KeyGuard):
    """``with IncludeDispatchKeyGuard(DispatchKey.Python):`` adds keys to every dispatch here."""

    __slots__ = ()
    _field = "include"
