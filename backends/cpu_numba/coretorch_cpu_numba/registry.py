"""Where kernel modules put their kernels: ``@kernel("add")`` records `fn` for op ``add``.

A structured op's kernel is ``fn(out, *args, **kwargs)`` and fills `out` (see
`coretorch.ops.declare`); the plugin registers it for the functional, in-place and out= forms.
The table and the FP-quiet guard come from `coretorch.backend_kit` (shared with cuda).

Every registered kernel runs with numpy's floating-point warnings off (PyTorch never warns on
overflow or 0/0: the IEEE result is the answer) and with numba's compiler errors turned into a
RuntimeError naming the op and the argument dtypes, so no numba traceback reaches a user.
"""

from __future__ import annotations

from typing import Callable

from coretorch.backend_kit import KernelTable, quiet_fp

from .layout import POINTWISE_FAMILIES, follow_input_layout

__all__ = ["TABLE", "KERNELS", "kernel", "guarded", "numba_error"]


def _describe(args, kwargs) -> str:
    parts = []
    for a in list(args) + list(kwargs.values()):
        d = getattr(a, "_dtype", None)
        parts.append(d.name if d is not None else type(a).__name__)
    return ", ".join(parts)


def numba_error(name: str, err: BaseException, args=(), kwargs=None) -> RuntimeError:
    """The user-facing error for a numba compile/typing failure inside kernel `name`."""
    first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
    return RuntimeError(
        f"{name}(): the cpu kernel does not support these arguments "
        f"({_describe(args, kwargs or {})}): {first}"
    )


def _translate(name: str, err: BaseException, args, kwargs):
    return (
        numba_error(name, err, args, kwargs) if type(err).__module__.startswith("numba") else None
    )


def guarded(name: str, fn: Callable) -> Callable:
    """`fn` with numpy FP warnings off and numba errors wrapped (see the module docstring).
    A pointwise kernel writing into an output laid out unlike its inputs (``out=``, in-place)
    computes in the inputs' memory order (`layout`); its `fresh_output_kernel`, which the core
    calls with the new output it laid out like the inputs, skips that check."""
    from coretorch.ops.declare import REGISTRY

    quiet = quiet_fp(name, fn, _translate)
    decl = REGISTRY.get(name)
    if decl is not None and decl.family in POINTWISE_FAMILIES and decl.structured:
        run = quiet_fp(name, follow_input_layout(fn), _translate)
        run.fresh_output_kernel = quiet  # type: ignore[attr-defined]  # a function attribute
        return run
    return quiet


TABLE = KernelTable("cpu", guarded)
KERNELS: dict[str, Callable] = TABLE.kernels
kernel = TABLE.kernel
