"""`coretorch.library.Library`: define operators and register kernels and fallbacks.

lib = Library("myops", "DEF")
lib.define("scale(Tensor self, float factor) -> Tensor")

@lib.impl("scale", dispatch_key="CPU")
def scale_cpu(self, factor): ...

coretorch.ops.myops.scale(x, 2.0)
"""

from __future__ import annotations

import re
from typing import Any, Callable

from .dispatch.keys import DispatchKey
from .dispatch.operator import (
    Operator,
    _fallbacks,
    _operators,
    fallthrough_kernel,
    get_operator,
    register_fallback,
)

__all__ = ["Library", "fallthrough_kernel"]

_KINDS = ("DEF", "IMPL", "FRAGMENT")
_SCHEMA = re.compile(r"^\s*([A-Za-z_][\w.]*)\s*\((.*)\)\s*(->.*)?$")


class Library:
    """A handle for registering into `namespace` (``"aten"`` is the core's).

    kind: ``"DEF"`` (this library owns the namespace and may define ops), ``"FRAGMENT"`` (adds
    definitions to an existing namespace) or ``"IMPL"`` (only registers kernels).
    dispatch_key: the default key of `impl` and `fallback` calls.

    Raises:
        ValueError: when `kind` is not one of the three.

    Examples:
        >>> import coretorch
        >>> from coretorch.library import Library
        >>> lib = Library("doc_example", "DEF")
        >>> op = lib.define("scale(Tensor self, float factor) -> Tensor")
        >>> @lib.impl("scale", dispatch_key="CPU")
        ... def scale_cpu(self, factor):
        ...     return self * factor
        >>> coretorch.ops.doc_example.scale(coretorch.tensor([1., 2.]), 3.0)
        tensor([3., 6.])
        >>> lib._destroy()  # undo the registrations (plugins and tests unload this way)
    """

    def __init__(self, namespace: str, kind: str, dispatch_key: "str | DispatchKey" = ""):
        if kind not in _KINDS:
            raise ValueError(f"Library(): kind must be one of {_KINDS}, got {kind!r}")
        self.ns, self.kind = namespace, kind
        self.dispatch_key = DispatchKey.get(dispatch_key) if dispatch_key else None
        # (op, key, entry it replaced): op None for a fallback, key None for a definition
        self._registrations: list[tuple[Operator | None, DispatchKey | None, Any]] = []

    def define(self, schema: str, doc: str | None = None) -> Operator:
        """Define a new operator from a schema string ``"name(Tensor x, float a) -> Tensor"``.

        Args:
            schema: the operator's name (without namespace), arguments and return type.
            doc: the operator's docstring.

        Returns:
            The new `Operator`, also reachable as ``coretorch.ops.<namespace>.<name>``.

        Raises:
            RuntimeError: in an ``"IMPL"`` library.
            ValueError: when the schema cannot be parsed.
        """
        if self.kind == "IMPL":
            raise RuntimeError(
                "Library.define(): an IMPL library cannot define operators; "
                "use kind 'DEF' or 'FRAGMENT'"
            )
        m = _SCHEMA.match(schema)
        if not m:
            raise ValueError(
                f"Library.define(): cannot parse schema {schema!r}; expected "
                f"'name(Type arg, ...) -> Type'"
            )
        op = Operator(f"{self.ns}::{m.group(1)}", schema.strip(), doc or "")
        self._registrations.append((op, None, None))
        return op

    def impl(
        self,
        op_name: "str | Operator",
        fn: Callable | None = None,
        dispatch_key: "str | DispatchKey" = "",
        *,
        with_keyset: bool = False,
    ):
        """Register `fn` as the kernel of `op_name` at `dispatch_key` (default: the library's).

        Usable as a decorator: ``@lib.impl("add")``. With ``with_keyset=True`` the kernel gets the
        DispatchKeySet below its key as first argument (for `Operator.redispatch`).

        Raises:
            ValueError: when no dispatch key is given and the library has no default.
            RuntimeError: when the operator is not defined.
        """
        key = self._key(dispatch_key, f"Library.impl({op_name!r})")
        op = op_name if isinstance(op_name, Operator) else self._op(op_name)

        def register(f: Callable) -> Callable:
            replaced = op._table.get(key)
            op.register(key, f, with_keyset=with_keyset)
            self._registrations.append((op, key, replaced))
            return f

        return register if fn is None else register(fn)

    def fallback(self, fn: Callable, dispatch_key: "str | DispatchKey" = "") -> Callable:
        """Register a boxed fallback ``fn(op, keyset_below, args, kwargs)`` for every op at the key
        (pass `fallthrough_kernel` to make every op skip the key)."""
        key = self._key(dispatch_key, "Library.fallback()")
        replaced = _fallbacks.get(key)
        register_fallback(key, fn)
        self._registrations.append((None, key, replaced))
        return fn

    def _key(self, dispatch_key: "str | DispatchKey", who: str) -> DispatchKey:
        """`dispatch_key`, or the library's default when none is given."""
        key = DispatchKey.get(dispatch_key) if dispatch_key else self.dispatch_key
        if key is None:
            raise ValueError(f"{who}: no dispatch_key given and the library has no default")
        return key

    def _op(self, name: str) -> Operator:
        qual = name if "::" in name else f"{self.ns}::{name}"
        if qual not in _operators:
            raise RuntimeError(
                f"Library.impl(): operator {qual} is not defined (define it first "
                f"with Library('{self.ns}', 'DEF').define(...))"
            )
        return get_operator(qual)

    def _destroy(self) -> None:
        """Undo this library's registrations (tests and plugin unloading use it): what a
        registration replaced (another library's kernel or fallback) is put back."""
        for op, key, replaced in reversed(self._registrations):
            if op is None:
                assert key is not None  # a fallback registration names its key
                register_fallback(key, None)
                if replaced is not None:
                    _fallbacks[key] = replaced
            elif key is None:
                _operators.pop(op.qualname, None)
            elif replaced is not None:
                op._table[key] = replaced
                op._cache.clear()
            else:
                op.unregister(key)
        self._registrations.clear()
