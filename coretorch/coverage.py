"""How a backend runs each declared op and each of its forms (functional, in-place, ``out=``).

One source for `python -m coretorch --ops NAME` and the conformance suite's per-op table:

- native: the backend registered a kernel for it (for a structured op, one kernel serves the
  functional, in-place and ``out=`` forms);
- composite: it decomposes into other ops, so the backend gets it without a kernel;
- fallback: a boxed fallback at the backend's key runs it (the CPU fallback copies through cpu);
- missing: calling it raises (no kernel, no fallback).
"""

from __future__ import annotations

from .dispatch.keys import DispatchKey
from .dispatch.operator import Operator, _fallbacks

__all__ = ["operator_status", "op_status_for_key", "op_forms"]


def operator_status(op: Operator, key: DispatchKey) -> str:
    """native / composite / fallback / missing for one operator at backend key `key`."""
    if op.has_kernel(key):
        return "native"
    decl = op.decl
    if (
        op.has_kernel(DispatchKey.CompositeImplicitAutograd)
        or op.has_kernel(DispatchKey.CompositeExplicitAutograd)
        or (decl is not None and decl.kind != "primitive")
    ):
        return "composite"
    if key in _fallbacks:
        return "fallback"
    return "missing"


def op_status_for_key(name: str, key: DispatchKey) -> str:
    """The status of declared op `name`'s functional form (``undeclared`` if there is none)."""
    from .ops import REGISTRY

    decl = REGISTRY.get(name)
    return "undeclared" if decl is None else operator_status(decl.op, key)


def op_forms(name: str, key: DispatchKey) -> list[tuple[str, str]]:
    """``[(form, status)]`` for op `name`: ``name``, ``name_`` when it has an in-place form,
    ``name.out`` when it takes ``out=`` (served by the functional kernel, or by copying the
    result for a composite)."""
    from .ops import REGISTRY

    decl = REGISTRY[name]
    functional = operator_status(decl.op, key)
    forms = [(name, functional)]
    if decl.inplace_op is not None:
        forms.append((name + "_", operator_status(decl.inplace_op, key)))
    if decl.out:
        forms.append((name + ".out", functional))
    return forms
