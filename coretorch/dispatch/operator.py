"""`Operator`: one named op with a kernel table per dispatch key and a per-key-set kernel cache.

Calling an operator ORs the key sets of its tensor arguments, applies the thread-local
include/exclude sets, and calls the kernel of the highest key (looked up once per key set, then
cached until a registration changes the table).
"""
from __future__ import annotations

import types
from typing import Any, Callable

from .. import record_function as _rf
from ..tensor.impl import TensorImpl
from .keys import (AUTOGRAD_BIT, BACKEND_MASK, BACKEND_SELECT_BIT, DispatchKey, DispatchKeySet)
from .tls import local_keys

__all__ = ["Operator", "get_operator", "all_operators", "fallthrough_kernel", "register_fallback"]


def fallthrough_kernel(*args, **kwargs):
    """Register this at a key to make dispatch skip that key for the op (or for all ops)."""
    raise AssertionError("fallthrough_kernel is a marker and is never called")


class _Entry:
    __slots__ = ("fn", "with_keyset", "boxed")

    def __init__(self, fn: Callable, with_keyset: bool = False, boxed: bool = False):
        self.fn, self.with_keyset, self.boxed = fn, with_keyset, boxed


_fallbacks: dict[DispatchKey, _Entry] = {}
_operators: dict[str, "Operator"] = {}
_rf_state = _rf.state
_Impl = TensorImpl


class Operator:
    """A dispatched operator (``coretorch.ops.aten.add``). Call it like the function it names."""

    __slots__ = ("name", "qualname", "schema", "decl", "_table", "_cache", "adapt_backend_kernel",
                 "doc", "__name__", "__weakref__")

    def __init__(self, qualname: str, schema: str = "", doc: str | None = None):
        if qualname in _operators:
            raise RuntimeError(f"operator {qualname} is already defined")
        self.qualname = qualname
        self.name = qualname.split("::", 1)[-1]
        self.__name__ = self.name   # a bound method of Tensor reports it (introspection, pytest)
        self.schema = schema or f"{self.name}(...)"
        self.decl = None                       # the op's declaration (set by coretorch.ops)
        self._table: dict[DispatchKey, _Entry] = {}
        self._cache: dict[int, Callable] = {}
        # set by coretorch.ops for structured ops: turns a backend's out-kernel into a full kernel
        self.adapt_backend_kernel: Callable[[Callable, DispatchKey], Callable] | None = None
        self.doc = doc
        _operators[qualname] = self

    # ---- calling ---------------------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        bits = 0
        for a in args:
            if isinstance(a, _Impl):
                bits |= a._keys
            elif a.__class__ is list or a.__class__ is tuple:
                for t in a:
                    if isinstance(t, _Impl):
                        bits |= t._keys
        if kwargs:
            for a in kwargs.values():
                if isinstance(a, _Impl):
                    bits |= a._keys
        lk = local_keys
        bits = (bits | lk.include) & ~lk.exclude
        if not bits & BACKEND_MASK:
            bits |= BACKEND_SELECT_BIT
        fn = self._cache.get(bits)
        if fn is None:
            fn = self._resolve(bits)
        if _rf_state.active:
            return _rf.call_op(self.qualname, fn, args, kwargs, bits & AUTOGRAD_BIT)
        return fn(*args, **kwargs)

    def redispatch(self, keyset: "DispatchKeySet | int", *args, **kwargs):
        """Call the kernel for `keyset` directly (a kernel uses this to reach the keys below it)."""
        bits = keyset if isinstance(keyset, int) else keyset.bits
        if not bits & BACKEND_MASK:
            bits |= BACKEND_SELECT_BIT
        fn = self._cache.get(bits)
        if fn is None:
            fn = self._resolve(bits)
        return fn(*args, **kwargs)

    def __get__(self, obj, objtype=None):
        # lets an Operator be a Tensor method: t.add(b) == add(t, b)
        return self if obj is None else types.MethodType(self, obj)

    # ---- registration ----------------------------------------------------------------------
    def register(self, key: DispatchKey, fn: Callable, with_keyset: bool = False) -> None:
        """Register `fn` as this op's kernel at `key` (an alias key registers for many keys)."""
        if fn is not fallthrough_kernel and key.is_backend and self.adapt_backend_kernel:
            fn = self.adapt_backend_kernel(fn, key)
        self._table[key] = _Entry(fn, with_keyset)
        self._cache.clear()

    def unregister(self, key: DispatchKey) -> None:
        """Remove the kernel registered directly at `key`, if any."""
        self._table.pop(key, None)
        self._cache.clear()

    def has_kernel(self, key: DispatchKey) -> bool:
        """Whether a kernel is registered directly at `key` (not through an alias or fallback)."""
        return key in self._table

    def kernel_keys(self) -> list[str]:
        """Names of the keys with a kernel registered directly (aliases included)."""
        return [k.name for k in self._table]

    # ---- lookup ----------------------------------------------------------------------------
    def _entry_for(self, key: DispatchKey) -> _Entry | None:
        e = self._table.get(key)
        if e is not None:
            return e
        t = self._table
        if key is DispatchKey.Autograd:
            e = t.get(DispatchKey.CompositeImplicitAutograd)
            if e is not None:
                return e
        elif key.is_backend:
            e = t.get(DispatchKey.CompositeExplicitAutograd) or t.get(
                DispatchKey.CompositeImplicitAutograd)
            if e is not None:
                return e
        return _fallbacks.get(key)

    def _resolve(self, bits: int) -> Callable:
        b = bits
        while b:
            top = b.bit_length() - 1
            key = DispatchKey._by_bit[top]
            below = bits & ((1 << top) - 1)
            e = self._entry_for(key)
            if e is None:
                if key.is_backend:
                    raise NotImplementedError(self._missing_message(key))
                b &= ~(1 << top)  # functionality keys with no kernel fall through
                continue
            if e.fn is fallthrough_kernel:
                b &= ~(1 << top)
                continue
            fn = self._bind(e, below)
            self._cache[bits] = fn
            return fn
        raise NotImplementedError(f"{self.name}(): no backend to run on (no tensor arguments and no "
                                  f"device); pass device= or load a backend")

    def _bind(self, e: _Entry, below: int) -> Callable:
        if e.boxed:
            fb, op, ks = e.fn, self, DispatchKeySet(below)
            return lambda *args, **kwargs: fb(op, ks, args, kwargs)
        if e.with_keyset:
            fn, ks = e.fn, DispatchKeySet(below)
            return lambda *args, **kwargs: fn(ks, *args, **kwargs)
        return e.fn

    def _missing_message(self, key: DispatchKey) -> str:
        have = ", ".join(self.kernel_keys()) or "none"
        return (f"Could not run '{self.qualname}' with arguments from the '{key.name}' backend: "
                f"it has no kernel there and no fallback. '{self.name}' has kernels for: {have}")

    def __repr__(self) -> str:
        return f"<Operator {self.qualname}>"


def register_fallback(key: DispatchKey, fn: Callable | None) -> None:
    """Register a boxed fallback `fn(op, keyset_below, args, kwargs)` for every op at `key`
    (or `fallthrough_kernel` to skip the key; None removes it)."""
    if fn is None:
        _fallbacks.pop(key, None)
    else:
        _fallbacks[key] = _Entry(fn, boxed=fn is not fallthrough_kernel)
    for op in _operators.values():
        op._cache.clear()


def get_operator(qualname: str) -> Operator:
    """The operator called `qualname` (``"myops::scale"``; a bare name means ``aten::``)."""
    try:
        return _operators[qualname if "::" in qualname else f"aten::{qualname}"]
    except KeyError:
        raise RuntimeError(f"no operator named {qualname!r} is defined") from None


def all_operators() -> dict[str, Operator]:
    """A copy of the qualified-name -> Operator table."""
    return dict(_operators)
