"""Argument normalization shared by the N-d convolution functions written here (conv3d and the
transposed convolutions)."""

from __future__ import annotations

from ...ops.nn_ops import named_pads, symmetric_pads

__all__ = ["ntuple", "explicit_padding", "stride_dilation", "check_groups"]


def ntuple(op: str, name: str, value, n: int) -> tuple:
    """An int or a sequence of `n` ints as an `n`-tuple of ints."""
    if isinstance(value, (tuple, list)):
        if len(value) == 1 and n > 1:
            value = tuple(value) * n
        if len(value) != n or not all(
            isinstance(v, int) and not isinstance(v, bool) for v in value
        ):
            raise RuntimeError(
                f"{op}(): {name} must be an int or a tuple of {n} ints, got {value!r}"
            )
        return tuple(int(v) for v in value)
    if not isinstance(value, int) or isinstance(value, bool):
        raise RuntimeError(f"{op}(): {name} must be an int or a tuple of {n} ints, got {value!r}")
    return (int(value),) * n


def explicit_padding(op: str, padding, kernel: tuple, dilation: tuple, stride: tuple) -> tuple:
    """((lo, hi), ...) per spatial dim from an int, a tuple, 'valid' or 'same' (the rules of
    the declared convolutions, `coretorch.ops.nn_ops.conv_pads`)."""
    if isinstance(padding, str):
        return named_pads(op, padding, kernel, dilation, stride)
    return symmetric_pads(op, padding, ntuple(op, "padding", padding, len(kernel)))


def stride_dilation(op: str, stride, dilation, n: int) -> tuple[tuple, tuple]:
    """`stride` and `dilation` as positive `n`-tuples."""
    s = ntuple(op, "stride", stride, n)
    d = ntuple(op, "dilation", dilation, n)
    if any(v <= 0 for v in s):
        raise RuntimeError(f"{op}(): non-positive stride is not supported, got {stride!r}")
    if any(v <= 0 for v in d):
        raise RuntimeError(f"{op}(): dilation should be greater than zero, got {dilation!r}")
    return s, d


def check_groups(op: str, weight, groups) -> None:
    """`groups` is a positive int dividing the weight's first dimension."""
    if not isinstance(groups, int) or isinstance(groups, bool) or groups <= 0:
        raise RuntimeError(f"{op}(): non-positive groups is not supported, got {groups!r}")
    if weight.shape[0] % groups:
        raise RuntimeError(
            f"{op}(): Given groups={groups}, expected weight to be divisible by "
            f"{groups} at dimension 0, but got weight of size "
            f"{list(weight.shape)} instead"
        )
