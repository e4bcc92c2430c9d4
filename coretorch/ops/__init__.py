"""Operator declarations (one per op) and the operator namespaces.

``coretorch.ops.aten.add`` is the `Operator` object of ``add``; `REGISTRY` maps each op name to
its `OpDecl`; `primitives()` lists the ops a backend implements natively (everything else is
composite and written once here).
"""

from __future__ import annotations

import importlib
import pkgutil

from ..dispatch.operator import get_operator
from .declare import REGISTRY, OpDecl, declare, primitives

# every module of this package declares its ops when imported (a new file needs no line here;
# sorted, so the order ops are declared in is the same everywhere)
for _info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
    if _info.name not in ("methods",):
        importlib.import_module(f"{__name__}.{_info.name}")
from . import methods as _methods  # noqa: E402  (binds Tensor methods to the ops declared above)

_methods.bind_methods()


class _Namespace:
    """``coretorch.ops.<namespace>.<op>`` access to operators (``coretorch.ops.aten.add``)."""

    def __init__(self, name: str):
        self._name = name

    def __getattr__(self, op: str):
        try:
            return get_operator(f"{self._name}::{op}")
        except RuntimeError as e:
            raise AttributeError(str(e)) from None


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(name)
    return _Namespace(name)


__all__ = ["REGISTRY", "OpDecl", "declare", "primitives"]
