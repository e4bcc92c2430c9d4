"""The kernel table a backend fills (``@table.kernel("add")``) and registers with its library.

A structured op's kernel is ``fn(out, *args, **kwargs)`` and fills `out` (see
`coretorch.ops.declare`); `register_kernels` registers it for the functional, in-place and out=
forms. Each table wraps its kernels with a guard chosen by the backend (`quiet_fp` for array
backends: numpy's floating-point warnings off, since PyTorch never warns on overflow or 0/0).
"""

from __future__ import annotations

from typing import Callable, Mapping, Optional

import numpy as np

__all__ = ["KernelTable", "quiet_fp", "register_kernels"]

Guard = Callable[[str, Callable], Callable]

try:  # numpy >= 2: errstate is a context variable; setting it directly costs ~0.2 µs
    from numpy._core._ufunc_config import _extobj_contextvar as _errvar  # type: ignore[attr-defined]  # private

    with np.errstate(all="ignore"):
        _IGNORE = _errvar.get()
except ImportError:  # pragma: no cover - numpy < 2
    _errvar = None


def _wrapped(run: Callable, name: str, fn: Callable) -> Callable:
    run.__name__ = getattr(fn, "__name__", name)
    run.__doc__ = fn.__doc__
    run.__wrapped__ = fn  # type: ignore[attr-defined]  # a function attribute
    return run


def quiet_fp(
    name: str,
    fn: Callable,
    translate: Optional[
        Callable[[str, BaseException, tuple, dict], Optional[BaseException]]
    ] = None,
) -> Callable:
    """`fn` run with numpy's floating-point warnings off. `translate(name, err, args, kwargs)`,
    when given, may turn an exception into the user-facing one (None: re-raise as is)."""
    if _errvar is None:  # pragma: no cover - numpy < 2

        def run(*args, **kwargs):
            with np.errstate(all="ignore"):
                return fn(*args, **kwargs)

        return _wrapped(run, name, fn)
    setvar, reset, ignore = _errvar.set, _errvar.reset, _IGNORE
    if translate is None:

        def run(*args, **kwargs):
            tok = setvar(ignore)
            try:
                return fn(*args, **kwargs)
            finally:
                reset(tok)

        # a caller that sets the error state once around many kernel calls (a compiled replay)
        # may call `fn` directly
        run.quiet_fp_inner = fn  # type: ignore[attr-defined]  # a function attribute
    else:

        def run(*args, **kwargs):
            tok = setvar(ignore)
            try:
                return fn(*args, **kwargs)
            except Exception as e:
                err = translate(name, e, args, kwargs)
                if err is not None:
                    raise err from None
                raise
            finally:
                reset(tok)

    return _wrapped(run, name, fn)


class KernelTable:
    """A backend's kernels by op name, each wrapped by the backend's `guard(name, fn)`."""

    def __init__(self, backend: str, guard: Guard):
        self.backend = backend
        self.guard = guard
        self.kernels: dict[str, Callable] = {}

    def add(self, name: str, fn: Callable) -> None:
        """Record `fn` as the kernel for op `name` (once per op)."""
        if name in self.kernels:
            raise RuntimeError(f"{self.backend} kernel for {name} registered twice")
        self.kernels[name] = self.guard(name, fn)

    def add_all(self, kernels: Mapping[str, Callable], skip: tuple = ()) -> None:
        """Record every kernel of `kernels` (e.g. a kit family) except the ops in `skip`,
        which the backend implements itself."""
        for name, fn in kernels.items():
            if name not in skip:
                self.add(name, fn)

    def fill_from(self, kernels: Mapping[str, Callable]) -> None:
        """Take every kernel of `kernels` (a kit module's ``KERNELS``) for the ops this table
        has no kernel for yet: register your own kernels first, then fill the rest."""
        self.add_all(kernels, skip=tuple(self.kernels))

    def kernel(self, *names: str) -> Callable[[Callable], Callable]:
        """Decorator: register the function as the kernel for each op in `names`."""

        def register(fn: Callable) -> Callable:
            for n in names:
                self.add(n, fn)
            return fn

        return register


def register_kernels(lib, kernels: Mapping[str, Callable], backend: str) -> None:
    """Register `kernels` with `lib` (a `coretorch.library.Library`) for each op's functional and
    in-place operators."""
    from coretorch.ops import REGISTRY

    for name, fn in kernels.items():
        decl = REGISTRY.get(name)
        if decl is None:
            raise RuntimeError(f"{backend} backend has a kernel for {name!r}, which no op declares")
        lib.impl(decl.op, fn)
        if decl.inplace_op is not None:
            lib.impl(decl.inplace_op, fn)
