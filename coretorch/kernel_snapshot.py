"""Snapshots of the dispatcher's kernel tables: what a backend plugin changed while it loaded.

The plugin loader takes a `KernelSnapshot` before a plugin's hooks run and compares after them,
whatever the plugin used to register (its `registry`, a `Library` of its own, `Operator.register`):
a change at a key the plugin does not own is refused or kept aside as an override request, and a
plugin that fails is rolled back to the snapshot.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .dispatch.keys import DispatchKey
from .dispatch.operator import Operator, _fallbacks, _operators, register_fallback

__all__ = ["KernelChange", "KernelSnapshot", "key_label"]


def key_label(key: DispatchKey) -> str:
    """The name users know a key by: its device type (``"cpu"``), else the key's own name."""
    from .device import device_types

    for name, entry in device_types().items():
        if entry.dispatch_key is key:
            return name
    return key.name


@dataclass(frozen=True)
class KernelChange:
    """The kernel of `op` at `key` (the boxed fallback at `key` when `op` is None) went from
    table entry `before` to `after` (None: no entry)."""

    op: Operator | None
    key: DispatchKey
    before: object
    after: object

    def label(self) -> str:
        """``"cpu.add"``, ``"cpu.<fallback>"``, ``"CompositeImplicitAutograd.myops::scale"``."""
        if self.op is None:
            return f"{key_label(self.key)}.<fallback>"
        name = self.op.name if self.op.qualname.startswith("aten::") else self.op.qualname
        return f"{key_label(self.key)}.{name}"

    def apply(self) -> None:
        """Put the plugin's entry in place."""
        _put(self.op, self.key, self.after)

    def revert(self) -> None:
        """Put back the entry the plugin replaced."""
        _put(self.op, self.key, self.before)


def _put(op: Operator | None, key: DispatchKey, entry: Any) -> None:
    if op is None:
        register_fallback(key, None)  # also clears every op's kernel cache
        if entry is not None:
            _fallbacks[key] = entry
    elif entry is None:
        op.unregister(key)
    else:
        op._table[key] = entry
        op._cache.clear()


class KernelSnapshot:
    """Every operator's kernel table and every boxed fallback, as they are now."""

    def __init__(self) -> None:
        self.operators: dict[str, Operator] = dict(_operators)
        self.tables = {q: dict(op._table) for q, op in self.operators.items()}
        self.fallbacks = dict(_fallbacks)

    def new_operators(self) -> list[Operator]:
        """Operators defined since the snapshot."""
        return [op for q, op in _operators.items() if self.operators.get(q) is not op]

    def changes(self) -> list[KernelChange]:
        """Kernels and fallbacks registered, replaced or removed since the snapshot, for the
        operators that existed then (a new operator's kernels belong to whoever defined it)."""
        out = []
        for q, op in self.operators.items():
            old, new = self.tables[q], op._table
            if old == new:
                continue
            for key in {**old, **new}:
                if old.get(key) is not new.get(key):
                    out.append(KernelChange(op, key, old.get(key), new.get(key)))
        for key in {**self.fallbacks, **_fallbacks}:
            if self.fallbacks.get(key) is not _fallbacks.get(key):
                out.append(KernelChange(None, key, self.fallbacks.get(key), _fallbacks.get(key)))
        return out

    def restore(self) -> None:
        """Undo every change since the snapshot: new operators go, old tables come back."""
        for op in self.new_operators():
            _operators.pop(op.qualname, None)
        for q, op in self.operators.items():
            _operators[q] = op
            if op._table != self.tables[q]:
                op._table.clear()
                op._table.update(self.tables[q])
                op._cache.clear()
        for change in self.changes():
            change.revert()
