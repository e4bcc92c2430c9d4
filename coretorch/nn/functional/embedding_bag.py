"""embedding_bag of ``nn.functional``: the sum, mean or max of the embeddings of each bag of
indices, without materializing the per-index embeddings per bag for sum and mean (one
index_select and one index_add). A composite stand-in until a backend provides a native kernel.
"""

from __future__ import annotations

import warnings

import numpy as np

from ... import dtypes as _dt
from ...ops import aten
from ...ops.factories_public import tensor as _tensor
from ...tensor.tensor import Tensor
from ._embedding_renorm import embedding_renorm_

__all__ = ["embedding_bag"]


def _long(values, device) -> Tensor:
    return _tensor(np.asarray(values, dtype=np.int64), dtype=_dt.int64, device=device)


def _bags(
    input: Tensor,
    offsets: Tensor | None,
    include_last_offset: bool,
    per_sample_weights: Tensor | None,
):
    """(flat indices, per-sample weights or None, bag boundaries as a host list)."""
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError(
                f"if input is 2D, then offsets has to be None, as input is treated "
                f"is a mini-batch of fixed length sequences. However, found "
                f"offsets of type {type(offsets)}"
            )
        rows, width = input.shape
        bounds = [i * width for i in range(rows + 1)]
        psw = None if per_sample_weights is None else per_sample_weights.reshape(-1)
        return input.reshape(-1), psw, bounds
    if input.dim() != 1:
        raise ValueError(
            f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.dim()}"
        )
    if offsets is None:
        raise ValueError("offsets has to be a 1D Tensor but got None")
    if offsets.dim() != 1:
        raise ValueError("offsets has to be a 1D Tensor")
    starts = [int(v) for v in offsets.tolist()]
    n = input.numel()
    if starts and starts[0] != 0:
        raise RuntimeError(
            f"embedding_bag(): offsets[0] has to be 0, i.e., the first sequence "
            f"in the mini-batch has to start from position 0. However, got "
            f"{starts[0]}"
        )
    if any(b < a for a, b in zip(starts, starts[1:])) or (starts and starts[-1] > n):
        raise RuntimeError(
            f"embedding_bag(): offsets must be non-decreasing and at most the "
            f"input length {n}, got {starts}"
        )
    bounds = starts if include_last_offset else starts + [n]
    return input, per_sample_weights, bounds


def embedding_bag(
    input: Tensor,
    weight: Tensor,
    offsets: Tensor | None = None,
    max_norm: float | None = None,
    norm_type: float = 2,
    scale_grad_by_freq: bool = False,
    mode: str = "mean",
    sparse: bool = False,
    per_sample_weights: Tensor | None = None,
    include_last_offset: bool = False,
    padding_idx: int | None = None,
) -> Tensor:
    """Reduce (sum / mean / max) the rows of `weight` picked by each bag: the rows of a 2-D
    `input`, or the slices of a 1-D `input` that start at `offsets`. Entries equal to
    `padding_idx` are skipped; an empty bag gives zeros."""
    if weight.dtype is _dt.int64 and input.is_floating_point():
        warnings.warn(
            "Argument order of nn.functional.embedding_bag was changed. Usage "
            "`embedding_bag(weight, input, ...)` is deprecated, and should now be "
            "`embedding_bag(input, weight, ...)`.",
            stacklevel=2,
        )
        weight, input = input, weight
    if per_sample_weights is not None and tuple(input.shape) != tuple(per_sample_weights.shape):
        raise ValueError(
            f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is "
            f"not None, then it must have the same shape as the input "
            f"({input.shape})"
        )
    if weight.dim() != 2:
        raise ValueError(
            f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.dim()}"
        )
    flat, psw, bounds = _bags(input, offsets, include_last_offset, per_sample_weights)
    if mode not in ("sum", "mean", "max"):
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max" and scale_grad_by_freq:
        raise ValueError("max mode does not support scaling the gradient by the frequency")
    if mode == "max" and sparse:
        raise ValueError("max mode does not support sparse weights")
    if sparse:
        raise NotImplementedError(
            "embedding_bag(): sparse gradients are not supported by coretorch (no sparse tensors)"
        )
    if scale_grad_by_freq:
        raise NotImplementedError(
            "embedding_bag(): scale_grad_by_freq is not supported by coretorch yet"
        )
    if psw is not None and mode != "sum":
        raise NotImplementedError(
            f"embedding_bag: per_sample_weights was not None. "
            f"per_sample_weights is only supported for mode='sum' (got "
            f"mode='{mode}'). Please open a feature request on GitHub."
        )
    if max_norm is not None:
        embedding_renorm_(weight, flat, max_norm, norm_type)
    num = weight.shape[0]
    if padding_idx is not None:
        if not -num <= padding_idx < num:
            raise AssertionError("padding_idx must be within the number of embeddings")
        padding_idx %= num
    ids = np.asarray(flat.tolist(), dtype=np.int64)
    if ids.size and (ids.min() < 0 or ids.max() >= num):
        raise IndexError("index out of range in self")
    keep = np.ones(ids.size, dtype=bool) if padding_idx is None else ids != padding_idx
    n_bags = len(bounds) - 1
    bag_of = np.repeat(np.arange(n_bags), np.diff(bounds)) if n_bags > 0 else np.zeros(0, int)
    bag_of = bag_of[: ids.size]
    dim = weight.shape[1]
    dev = weight.device
    if mode == "max":
        return _bag_max(weight, ids, keep, bag_of, n_bags)
    sel = np.nonzero(keep)[0]
    rows = weight.index_select(0, _long(ids[sel], dev))
    if psw is not None:
        rows = rows * psw.index_select(0, _long(sel, psw.device)).unsqueeze(1)
    out = aten.zeros((n_bags, dim), dtype=weight.dtype, device=dev).index_add(
        0, _long(bag_of[sel], dev), rows
    )
    if mode == "mean":
        counts = np.bincount(bag_of[sel], minlength=n_bags).astype(np.float64)
        out = out / _tensor(np.maximum(counts, 1.0).reshape(-1, 1), dtype=weight.dtype, device=dev)
    return out


def _bag_max(
    weight: Tensor, ids: np.ndarray, keep: np.ndarray, bag_of: np.ndarray, n_bags: int
) -> Tensor:
    """Per-feature max over each bag (gradient to the chosen row only); empty bags give 0."""
    dev = weight.device
    members = [np.nonzero((bag_of == b) & keep)[0] for b in range(n_bags)]
    width = max([m.size for m in members] + [1])
    table = np.zeros((n_bags, width), dtype=np.int64)
    present = np.zeros((n_bags, width), dtype=bool)
    for b, m in enumerate(members):
        table[b, : m.size] = ids[m]
        present[b, : m.size] = True
    rows = weight.index_select(0, _long(table.reshape(-1), dev)).reshape(
        n_bags, width, weight.shape[1]
    )
    mask = _tensor(present[:, :, None], dtype=_dt.bool, device=dev)
    scored = rows.masked_fill(mask.logical_not(), float("-inf"))
    best = scored.argmax(1, keepdim=True)
    out = rows.gather(1, best).squeeze(1)
    empty = _tensor(~present.any(1, keepdims=True), dtype=_dt.bool, device=dev)
    return out.masked_fill(empty, 0.0)
