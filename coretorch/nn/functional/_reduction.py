"""The `reduction=` argument of losses (and PyTorch's legacy size_average/reduce flags)."""

from __future__ import annotations

import warnings

__all__ = ["get_enum", "legacy_get_string", "reduce_loss", "resolve"]

_VALID = ("none", "mean", "sum")


def get_enum(reduction: str) -> int:
    if reduction not in _VALID:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return _VALID.index(reduction)


def legacy_get_string(size_average: bool | None, reduce: bool | None, emit_warning=True) -> str:
    """Map the deprecated size_average/reduce pair to a reduction string."""
    warning = "size_average and reduce args will be deprecated, please use reduction='{}' instead."
    if size_average is None:
        size_average = True
    if reduce is None:
        reduce = True
    ret = "none" if not reduce else ("mean" if size_average else "sum")
    if emit_warning:
        warnings.warn(warning.format(ret), stacklevel=3)
    return ret


def resolve(size_average, reduce, reduction: str) -> str:
    """The effective reduction string, validated."""
    if size_average is not None or reduce is not None:
        reduction = legacy_get_string(size_average, reduce)
    get_enum(reduction)
    return reduction


def reduce_loss(loss, reduction: str):
    """Apply 'none' / 'mean' / 'sum' to an elementwise loss."""
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss
