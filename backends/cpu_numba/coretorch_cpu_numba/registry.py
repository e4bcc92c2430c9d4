"""Where kernel modules put their kernels: ``@kernel("add")`` records `fn` for op ``add``.

A structured op's kernel is ``fn(out, *args, **kwargs)`` and fills `out` (see
`coretorch.ops.declare`); the plugin registers it for the functional, in-place and out= forms.
"""
from __future__ import annotations

from typing import Callable

KERNELS: dict[str, Callable] = {}


def kernel(*names: str) -> Callable[[Callable], Callable]:
    """Register the decorated function as this backend's kernel for each op in `names`."""
    def register(fn: Callable) -> Callable:
        for n in names:
            if n in KERNELS:
                raise RuntimeError(f"cpu kernel for {n} registered twice")
            KERNELS[n] = fn
        return fn
    return register
