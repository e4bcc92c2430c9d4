"""`Operator`: one named op with a kernel table per dispatch key and a per-key-set kernel cache.

Calling an operator ORs the key sets of its tensor arguments, applies the thread-local
include/exclude sets, and calls the kernel of the highest key (looked up once per key set, then
cached until a registration changes the table).
"""

from __future__ import annotations

import difflib
import inspect
from inspect import CO_VARARGS
from types import FunctionType
from typing import Any, Callable

from ..record_function import state as _rf_state
from .entry import make_binder, make_entry
from .keys import BACKEND_MASK, BACKEND_SELECT_BIT, DispatchKey, DispatchKeySet
from .schema import FunctionSchema, parse_schema

__all__ = [
    "Operator",
    "get_operator",
    "all_operators",
    "fallthrough_kernel",
    "register_fallback",
    "check_kernel_signature",
]


def fallthrough_kernel(*args, **kwargs):
    """Register this at a key to make dispatch skip that key for the op (or for all ops)."""
    raise AssertionError("fallthrough_kernel is a marker and is never called")


class _Entry:
    __slots__ = ("fn", "with_keyset", "boxed")

    def __init__(self, fn: Callable, with_keyset: bool = False, boxed: bool = False):
        self.fn, self.with_keyset, self.boxed = fn, with_keyset, boxed


_fallbacks: dict[DispatchKey, _Entry] = {}
_operators: dict[str, "Operator"] = {}


class Operator:
    """A dispatched operator (``coretorch.ops.aten.add``). Calling it calls its entry point
    (`coretorch.dispatch.entry`): the schema binds the arguments, the key set picks the kernel."""

    __slots__ = (
        "name",
        "qualname",
        "schema",
        "decl",
        "entry",
        "_table",
        "_cache",
        "adapt_backend_kernel",
        "_binder",
        "__weakref__",
    )

    def __init__(
        self, qualname: str, schema: "FunctionSchema | str", doc: str = "", has_out: bool = False
    ):
        if qualname in _operators:
            raise RuntimeError(f"operator {qualname} is already defined")
        self.qualname = qualname
        self.name = qualname.split("::", 1)[-1]
        self.schema = parse_schema(schema) if isinstance(schema, str) else schema
        if self.schema.name != self.name:
            raise ValueError(f"operator {qualname}: its schema names {self.schema.name!r}")
        self.decl: Any = None  # the op's OpDecl (set by coretorch.ops)
        self._table: dict[DispatchKey, _Entry] = {}
        self._cache: dict[int, Callable] = {}
        # set by coretorch.ops for structured ops: turns a backend's out-kernel into a full kernel
        self.adapt_backend_kernel: Callable[[Callable, DispatchKey], Callable] | None = None
        self._binder: Callable | None = None
        self.entry = make_entry(self, self.schema, has_out=has_out, doc=doc)
        _operators[qualname] = self

    # ---- calling ---------------------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        return self.entry(*args, **kwargs)

    @property
    def __signature__(self):
        return inspect.signature(self.entry)

    @property
    def __name__(self) -> str:
        return self.name

    def bind(self, *args, **kwargs) -> tuple:
        """The argument record a call ``op(*args, **kwargs)`` binds to (schema order, defaults
        filled, arguments normalized), without running the op."""
        b = self._binder
        if b is None:
            b = self._binder = make_binder(self, self.schema)
        return b(*args, **kwargs)

    @property
    def entry_source(self) -> str:
        """The generated Python source of the entry point."""
        return inspect.getsource(self.entry)

    def call_record(self, record: tuple, kwargs: dict | None = None):
        """Call the op (dispatch, observers and all) with an already-bound argument record:
        keyword-only arguments are passed back by name."""
        fs = self.schema
        pos = [v for a, v in zip(fs.arguments, record) if not a.kwarg_only]
        kw = {a.name: v for a, v in zip(fs.arguments, record) if a.kwarg_only}
        if kwargs:
            kw.update(kwargs)
        return self.entry(*pos, **kw)

    def redispatch(self, keyset: "DispatchKeySet | int", *args, **kwargs):
        """Call the kernel for `keyset` with an already-bound argument record (a kernel uses this
        to reach the keys below it)."""
        bits = keyset if isinstance(keyset, int) else keyset.bits
        if not bits & BACKEND_MASK:
            bits |= BACKEND_SELECT_BIT
        fn = self._cache.get(bits)
        if fn is None:
            fn = self._resolve(bits)
        return fn(*args, **kwargs)

    # ---- registration ----------------------------------------------------------------------
    def register(self, key: DispatchKey, fn: Callable, with_keyset: bool = False) -> None:
        """Register `fn` as this op's kernel at `key` (an alias key registers for many keys).

        A kernel must take the schema's arguments (and, at a backend key of a structured op,
        `out` first): a mismatch is refused here, showing both."""
        if fn is not fallthrough_kernel and not with_keyset and (key.is_backend or key.is_alias):
            adapt = self.adapt_backend_kernel if key.is_backend else None
            structured = adapt is not None
            check_kernel_signature(self, fn, structured=structured)
            if adapt is not None:
                fn = adapt(fn, key)
            elif key.is_backend:
                meta = getattr(self.decl, "meta", None)
                if meta is not None:
                    fn = _meta_checked(meta, fn)
                if self.schema.returns:
                    fn = _returns_checked(self, fn)
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
                DispatchKey.CompositeImplicitAutograd
            )
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
        raise NotImplementedError(
            f"{self.name}(): no backend to run on (no tensor arguments "
            "and no device); pass device= or load a backend"
        )

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
        return (
            f"Could not run '{self.qualname}' with arguments from the '{key.name}' backend: "
            f"it has no kernel there and no fallback. '{self.name}' has kernels for: {have}"
        )

    def __repr__(self) -> str:
        return f"<Operator {self.qualname}>"


def _kernel_params(fn: Callable) -> list[str] | None:
    """Positional parameter names of `fn`; None when it takes ``*args`` (a generic kernel, not
    checked). A keyword-only parameter is listed with a leading ``*``: kernels are called
    positionally, so it can never receive its argument."""
    if isinstance(fn, FunctionType) and not {"__wrapped__", "__signature__"} & fn.__dict__.keys():
        # a plain function: its code object says it (inspect.signature costs ~40 us a kernel:
        # 60 ms of `import coretorch` over every registration)
        code = fn.__code__
        if code.co_flags & CO_VARARGS:
            return None
        n, names = code.co_argcount, code.co_varnames
        return [*names[:n], *("*" + k for k in names[n : n + code.co_kwonlyargcount])]
    try:
        sig = inspect.signature(fn, follow_wrapped=True)
    except (TypeError, ValueError):
        return None
    params = list(sig.parameters.values())
    if any(p.kind is p.VAR_POSITIONAL for p in params):
        return None
    return [
        ("*" + p.name) if p.kind is p.KEYWORD_ONLY else p.name
        for p in params
        if p.kind is not p.VAR_KEYWORD
    ]


def check_kernel_signature(
    op: Operator, fn: Callable, what: str = "kernel", structured: bool = False
) -> None:
    """Refuse a kernel whose parameters do not match the op's schema, showing both: a
    structured backend kernel is ``kernel(out, <schema arguments>, <precomputed values>)``,
    any other kernel (a composite's `impl`) takes the schema's arguments in order, then the
    precomputed values."""
    got = _kernel_params(fn)
    if got is None:
        return
    want = [*op.schema.names, *getattr(op.decl, "precomputed", ())]
    if structured:
        want = ["out", *want]
    if got != want:
        form = (
            "a structured kernel fills `out`: kernel(out, <schema arguments>)"
            if structured
            else "it takes the schema's arguments in order"
        )
        raise TypeError(
            f"{what} {getattr(fn, '__qualname__', fn)!r} for {op.qualname} takes "
            f"({', '.join(got)}) but the schema {op.schema} needs ({', '.join(want)}): {form}"
        )


def _meta_checked(meta: Callable, fn: Callable) -> Callable:
    """A backend kernel of an op that is not structured (it writes its list arguments and
    returns nothing, like ``_fused_adam_``) still runs after the op's meta rule, the only
    validator: kernels never check their arguments."""

    def kernel(*args):
        meta(*args)
        cap = _rf_state.capture
        if cap is not None:  # coretorch.compile records it: it writes its `!` list arguments
            return cap.run(fn, args, False)
        return fn(*args)

    kernel.__name__ = getattr(fn, "__name__", "kernel")
    kernel.__wrapped__ = fn  # type: ignore[attr-defined]  # a function attribute
    return kernel


def _returns_checked(op: Operator, fn: Callable) -> Callable:
    """A backend kernel of an op that is not structured must return its result."""

    def kernel(*args, **kwargs):
        cap = _rf_state.capture
        if cap is not None:  # its result is made by the kernel: a replay has nowhere to put it
            cap.unreplayable(
                op.name,
                "its kernel allocates its own result (an output size that depends on the data)",
            )
        r = fn(*args, **kwargs)
        if r is None:
            raise RuntimeError(
                f"{op.name}(): the kernel {getattr(fn, '__qualname__', fn)!r} "
                f"returned None, but {op.schema} returns a value (only "
                f"structured kernels fill `out` and return None)"
            )
        return r

    kernel.__name__ = getattr(fn, "__name__", op.name)
    kernel.__wrapped__ = fn  # type: ignore[attr-defined]  # a function attribute
    return kernel


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
    full = qualname if "::" in qualname else f"aten::{qualname}"
    op = _operators.get(full)
    if op is None:
        close = difflib.get_close_matches(full, list(_operators), n=3)
        hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
        raise RuntimeError(f"no operator named {qualname!r} is defined{hint}")
    return op


def all_operators() -> dict[str, Operator]:
    """A copy of the qualified-name -> Operator table."""
    return dict(_operators)
