"""Dispatch keys and immutable dispatch-key sets.

A key set is a bitset in a Python int: a higher bit means a higher priority. Functionality keys
(SparseCOO, Python, Autocast, Autograd, BackendSelect) have fixed high bits; backend keys are
allocated from bit 0 upwards when a backend registers, so any number of backends can coexist.
Alias keys (CompositeImplicitAutograd, CompositeExplicitAutograd) have no bit: they exist only for
registration and expand to real keys when a kernel is looked up.
"""

from __future__ import annotations

from typing import Iterable, Iterator

__all__ = ["DispatchKey", "DispatchKeySet"]

_MAX_BACKENDS = 59


class DispatchKey:
    """One dispatch key. Fixed keys are class attributes; backend keys come from `backend()`."""

    __slots__ = ("name", "bit", "is_backend", "is_alias")
    _by_name: dict[str, "DispatchKey"] = {}
    _by_bit: dict[int, "DispatchKey"] = {}

    # fixed keys are assigned after the class body
    SparseCOO: "DispatchKey"
    Python: "DispatchKey"
    Autocast: "DispatchKey"
    Autograd: "DispatchKey"
    BackendSelect: "DispatchKey"
    CompositeImplicitAutograd: "DispatchKey"
    CompositeExplicitAutograd: "DispatchKey"

    def __init__(self, name: str, bit: int | None, is_backend: bool = False):
        self.name, self.bit, self.is_backend, self.is_alias = name, bit, is_backend, bit is None
        DispatchKey._by_name[name] = self
        if bit is not None:
            DispatchKey._by_bit[bit] = self

    def __repr__(self) -> str:
        return f"DispatchKey.{self.name}"

    def __reduce__(self):
        return (DispatchKey.get, (self.name,))

    @staticmethod
    def get(name: "str | DispatchKey") -> "DispatchKey":
        """The key with this name (``"CPU"``, ``"Autograd"``...)."""
        if isinstance(name, DispatchKey):
            return name
        try:
            return DispatchKey._by_name[name]
        except KeyError:
            from .._suggest import did_you_mean

            known = DispatchKey._by_name
            raise ValueError(
                f"unknown dispatch key {name!r}.{did_you_mean(name, known)} "
                f"Known: {', '.join(known)}"
            ) from None

    @staticmethod
    def backend(name: str) -> "DispatchKey":
        """The backend key called `name`, allocating the next free bit the first time."""
        found = DispatchKey._by_name.get(name)
        if found is not None:
            if not found.is_backend:
                raise ValueError(f"{name!r} is a functionality key, not a backend key")
            return found
        n = sum(1 for k in DispatchKey._by_bit.values() if k.is_backend)
        if n >= _MAX_BACKENDS:
            raise RuntimeError(
                f"cannot allocate backend key {name!r}: all {_MAX_BACKENDS} "
                f"backend slots are in use"
            )
        key = DispatchKey(name, n, is_backend=True)
        setattr(DispatchKey, name, key)
        return key

    @staticmethod
    def backends() -> list["DispatchKey"]:
        """Every backend key allocated so far."""
        return [k for k in DispatchKey._by_bit.values() if k.is_backend]


# sparse tensors (coretorch.sparse) wrap dense indices/values tensors: their kernels sit above
# every other key and compute with dense ops, which autograd and the backends then see
DispatchKey.SparseCOO = DispatchKey("SparseCOO", 63)
DispatchKey.Python = DispatchKey("Python", 62)
DispatchKey.Autocast = DispatchKey("Autocast", 61)
DispatchKey.Autograd = DispatchKey("Autograd", 60)
DispatchKey.BackendSelect = DispatchKey("BackendSelect", 59)
DispatchKey.CompositeImplicitAutograd = DispatchKey("CompositeImplicitAutograd", None)
DispatchKey.CompositeExplicitAutograd = DispatchKey("CompositeExplicitAutograd", None)

BACKEND_MASK = (1 << _MAX_BACKENDS) - 1
# functionality keys have a bit (only alias keys have None)
AUTOGRAD_BIT = 1 << DispatchKey.Autograd.bit  # type: ignore[operator]
SPARSE_COO_BIT = 1 << DispatchKey.SparseCOO.bit  # type: ignore[operator]
BACKEND_SELECT_BIT = 1 << DispatchKey.BackendSelect.bit  # type: ignore[operator]


class DispatchKeySet:
    """An immutable set of dispatch keys, ordered by priority (highest first when iterated)."""

    __slots__ = ("bits",)
    bits: int

    def __init__(self, keys: "Iterable[DispatchKey] | DispatchKey | int" = ()):
        if isinstance(keys, int):
            bits = keys
        elif isinstance(keys, DispatchKey):
            bits = _bit(keys)
        else:
            bits = 0
            for k in keys:
                bits |= _bit(k)
        object.__setattr__(self, "bits", bits)

    def __setattr__(self, name, value):
        raise AttributeError("DispatchKeySet is immutable")

    def __or__(self, other: "DispatchKeySet | DispatchKey") -> "DispatchKeySet":
        return DispatchKeySet(self.bits | _bits_of(other))

    union = __or__

    def __and__(self, other: "DispatchKeySet | DispatchKey") -> "DispatchKeySet":
        return DispatchKeySet(self.bits & _bits_of(other))

    def __sub__(self, other: "DispatchKeySet | DispatchKey") -> "DispatchKeySet":
        return DispatchKeySet(self.bits & ~_bits_of(other))

    def add(self, key: DispatchKey) -> "DispatchKeySet":
        """A new set with `key` added."""
        return DispatchKeySet(self.bits | _bit(key))

    def remove(self, key: DispatchKey) -> "DispatchKeySet":
        """A new set without `key`."""
        return DispatchKeySet(self.bits & ~_bit(key))

    def has(self, key: DispatchKey) -> bool:
        """True when `key` is in the set."""
        return bool(self.bits & _bit(key))

    __contains__ = has

    def highest(self) -> DispatchKey | None:
        """The highest-priority key, or None for the empty set."""
        return DispatchKey._by_bit[self.bits.bit_length() - 1] if self.bits else None

    def below(self, key: DispatchKey) -> "DispatchKeySet":
        """The keys of strictly lower priority than `key` (what a kernel at `key` redispatches
        to)."""
        return DispatchKeySet(self.bits & ((1 << _bit(key).bit_length() - 1) - 1))

    def __iter__(self) -> Iterator[DispatchKey]:
        b = self.bits
        while b:
            top = b.bit_length() - 1
            yield DispatchKey._by_bit[top]
            b &= ~(1 << top)

    def __len__(self) -> int:
        return bin(self.bits).count("1")

    def __bool__(self) -> bool:
        return bool(self.bits)

    def __eq__(self, other) -> bool:
        return isinstance(other, DispatchKeySet) and other.bits == self.bits

    def __hash__(self) -> int:
        return hash(self.bits)

    def __repr__(self) -> str:
        return f"DispatchKeySet({', '.join(k.name for k in self)})"


def _bit(key: DispatchKey) -> int:
    if key.bit is None:
        raise ValueError(f"{key!r} is an alias key: it can be registered to, not put in a key set")
    return 1 << key.bit


def _bits_of(x: "DispatchKeySet | DispatchKey") -> int:
    return x.bits if isinstance(x, DispatchKeySet) else _bit(x)
