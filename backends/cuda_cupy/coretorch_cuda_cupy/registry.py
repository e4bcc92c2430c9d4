"""Where kernel modules put their kernels: ``@kernel("add")`` records `fn` for op ``add``.

A structured op's kernel is ``fn(out, *args, **kwargs)`` and fills `out` (see
`coretorch.ops.declare`); the plugin registers it for the functional, in-place and out= forms.
Kernels run with the tensors' device current (multi-GPU) and, in emulation, with numpy's
floating-point warnings off (a GPU never warns on overflow or 0/0: the IEEE result is the answer).
The table and the FP-quiet guard come from `coretorch.backend_kit` (shared with cpu).
"""

from __future__ import annotations

from typing import Any, Callable

from coretorch.backend_kit import KernelTable, quiet_fp

from . import array_module as am

__all__ = ["TABLE", "KERNELS", "kernel"]


def _first_device(args) -> Any:
    for a in args:
        d = getattr(a, "_device", None)
        if d is not None:
            return d
        if isinstance(a, (tuple, list)) and a:
            d = getattr(a[0], "_device", None)
            if d is not None:
                return d
    return None


def _guarded(name: str, fn: Callable) -> Callable:
    if am.EMULATED:
        return quiet_fp(name, fn)

    def run(*args, **kwargs):
        dev = _first_device(args)
        if dev is None or not dev.index:
            return fn(*args, **kwargs)
        with am.device_guard(dev.index):
            return fn(*args, **kwargs)

    run.__name__ = getattr(fn, "__name__", name)
    run.__doc__ = fn.__doc__
    run.__wrapped__ = fn  # type: ignore[attr-defined]  # a function attribute
    return run


TABLE = KernelTable("cuda", _guarded)
KERNELS: dict[str, Callable] = TABLE.kernels
kernel = TABLE.kernel
