"""PyTorch's alternative names for ops (``torch.clip`` is ``torch.clamp``, ``Tensor.arccos_`` is
``Tensor.acos_``), bound once to the same entry points, so an alias behaves exactly as its op.

An alias is bound wherever its op exists: as a ``coretorch`` function, as a Tensor method, and
in place (``absolute_``) where the op has an in-place form.
"""

from __future__ import annotations

from types import ModuleType

__all__ = ["ALIASES", "bind_aliases"]

# alias -> the op it names (PyTorch's native_functions.yaml aliases)
ALIASES = {
    "absolute": "abs",
    "arccos": "acos",
    "arccosh": "acosh",
    "arcsin": "asin",
    "arcsinh": "asinh",
    "arctan": "atan",
    "arctanh": "atanh",
    "arctan2": "atan2",
    "clip": "clamp",
    "concat": "cat",
    "concatenate": "cat",
    "divide": "div",
    "multiply": "mul",
    "subtract": "sub",
    "negative": "neg",
    "greater": "gt",
    "greater_equal": "ge",
    "less": "lt",
    "less_equal": "le",
    "not_equal": "ne",
    "fix": "trunc",
    "moveaxis": "movedim",
    "swapaxes": "transpose",
    "swapdims": "transpose",
    "row_stack": "vstack",
    "ger": "outer",
}


def bind_aliases(namespace: ModuleType, tensor_cls: type, inplace_functions: frozenset) -> None:
    """Bind every alias whose op `namespace` (``coretorch``) or `tensor_cls` has; in place as a
    free function only where PyTorch has that function (`inplace_functions`)."""
    for alias, name in ALIASES.items():
        for owner in (namespace, tensor_cls):
            for suffix in ("", "_"):
                if owner is namespace and suffix and alias + suffix not in inplace_functions:
                    continue
                target = getattr(owner, name + suffix, None)
                if target is not None and not hasattr(owner, alias + suffix):
                    setattr(owner, alias + suffix, target)
