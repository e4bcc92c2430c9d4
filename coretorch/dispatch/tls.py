"""Thread-local included/excluded dispatch keys and the guards that change them."""
from __future__ import annotations

import threading

from .keys import DispatchKey, DispatchKeySet, _bits_of

__all__ = ["local_keys", "ExcludeDispatchKeyGuard", "IncludeDispatchKeyGuard",
           "tls_included", "tls_excluded"]


class _LocalKeys(threading.local):
    include = 0
    exclude = 0


local_keys = _LocalKeys()


def tls_included() -> DispatchKeySet:
    return DispatchKeySet(local_keys.include)


def tls_excluded() -> DispatchKeySet:
    return DispatchKeySet(local_keys.exclude)


class ExcludeDispatchKeyGuard:
    """``with ExcludeDispatchKeyGuard(DispatchKey.Autograd):`` skips those keys in this thread."""

    __slots__ = ("bits", "prev")

    def __init__(self, keys: "DispatchKeySet | DispatchKey"):
        self.bits = _bits_of(keys)

    def __enter__(self):
        self.prev = local_keys.exclude
        local_keys.exclude = self.prev | self.bits
        return self

    def __exit__(self, *exc):
        local_keys.exclude = self.prev


class IncludeDispatchKeyGuard:
    """``with IncludeDispatchKeyGuard(DispatchKey.Python):`` adds keys to every dispatch here."""

    __slots__ = ("bits", "prev")

    def __init__(self, keys: "DispatchKeySet | DispatchKey"):
        self.bits = _bits_of(keys)

    def __enter__(self):
        self.prev = local_keys.include
        local_keys.include = self.prev | self.bits
        return self

    def __exit__(self, *exc):
        local_keys.include = self.prev
