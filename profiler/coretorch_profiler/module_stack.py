"""The modules whose forward is running in a thread, kept through the global module hooks
while an observer needs them, and the names they give to tensors: module paths
(``encoder.layers.0``), parameter names (``fc1.weight``), forward arguments."""

from __future__ import annotations

import threading
from typing import Any

from coretorch.nn.modules import module as _module

__all__ = ["ModuleStack", "module_path", "name_tensor"]


class ModuleStack:
    """While started, ``entries()`` is the (module, forward args) of each module whose forward
    runs in the calling thread, outermost first. Only the thread that started it is tracked."""

    def __init__(self) -> None:
        self._local = threading.local()
        self._handles: list = []
        self._thread = 0

    def start(self) -> None:
        """Install global module forward hooks that track the module call stack on this thread."""
        self._thread = threading.get_ident()
        self._handles = [
            _module.register_module_forward_pre_hook(self._pre),
            _module.register_module_forward_hook(self._post, always_call=True),
        ]

    def stop(self) -> None:
        """Remove the module hooks."""
        for h in self._handles:
            h.remove()
        self._handles = []

    def entries(self) -> list[tuple[Any, tuple]]:
        """The current thread's stack of (module, extra) entries, outermost first."""
        return getattr(self._local, "stack", None) or []

    def _pre(self, module, args) -> None:
        if threading.get_ident() != self._thread:
            return
        st = getattr(self._local, "stack", None)
        if st is None:
            st = self._local.stack = []
        st.append((module, args))

    def _post(self, module, args, output) -> None:
        st = getattr(self._local, "stack", None)
        while st:
            if st.pop()[0] is module:
                return


def module_path(modules: tuple | list) -> str:
    """'Net.encoder.layers.0' for a chain of modules each called by the one before (the root by
    its class name, the rest by attribute name; a module called without being its caller's
    registered child by its class name)."""
    if not modules:
        return ""
    parts = [type(modules[0]).__name__]
    for parent, child in zip(modules, modules[1:]):
        parts.append(
            next((n for n, m in parent._modules.items() if m is child), type(child).__name__)
        )
    return ".".join(parts)


def name_tensor(t, entries: list[tuple[Any, tuple]]) -> tuple[str, str] | None:
    """(name, kind) of a tensor sharing `t`'s memory among the running modules' parameters and
    buffers ("parameter": 'fc1.weight' under the outermost module) or forward arguments
    ("input": 'argument 0 of Net.forward'); None when it is neither."""
    if not entries:
        return None
    st = t._storage
    root = entries[0][0]
    for name, p in root.named_parameters():
        if p._storage is st:
            return name, "parameter"
    for name, b in root.named_buffers():
        if b is not None and b._storage is st:
            return name, "buffer"
    for m, args in entries:
        for i, a in enumerate(args):
            if getattr(a, "_storage", None) is st:
                return f"argument {i} of {type(m).__name__}.forward", "input"
    return None
