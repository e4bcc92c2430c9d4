"""Margin and embedding losses of ``nn.functional`` (PyTorch's formulas and checks):
margin_ranking_loss, hinge_embedding_loss, soft_margin_loss, multilabel_soft_margin_loss,
multi_margin_loss, multilabel_margin_loss, cosine_embedding_loss, triplet_margin_loss and
triplet_margin_with_distance_loss."""

from __future__ import annotations

from typing import Callable

from ... import dtypes as _dt
from ...amp.autocast_mode import autocast_function
from ...ops import aten
from ...tensor.tensor import Tensor
from ._reduction import reduce_loss, resolve
from .activation import logsigmoid
from .distance import pairwise_distance

__all__ = [
    "margin_ranking_loss",
    "hinge_embedding_loss",
    "soft_margin_loss",
    "multilabel_soft_margin_loss",
    "multi_margin_loss",
    "multilabel_margin_loss",
    "cosine_embedding_loss",
    "triplet_margin_loss",
    "triplet_margin_with_distance_loss",
]


@autocast_function("margin_ranking_loss")
def margin_ranking_loss(
    input1: Tensor,
    input2: Tensor,
    target: Tensor,
    margin: float = 0.0,
    size_average=None,
    reduce=None,
    reduction: str = "mean",
) -> Tensor:
    """max(0, -y (x1 - x2) + margin) with y = ±1."""
    reduction = resolve(size_average, reduce, reduction)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(
            f"margin_ranking_loss : All input tensors should have same dimension "
            f"but got sizes: input1: {input1.shape}, input2: {input2.shape}, "
            f"target: {target.shape} "
        )
    return reduce_loss((-target * (input1 - input2) + margin).clamp(min=0), reduction)


@autocast_function("hinge_embedding_loss")
def hinge_embedding_loss(
    input: Tensor,
    target: Tensor,
    margin: float = 1.0,
    size_average=None,
    reduce=None,
    reduction: str = "mean",
) -> Tensor:
    """x where y = 1, max(0, margin - x) where y = -1."""
    reduction = resolve(size_average, reduce, reduction)
    margin_clamp = (margin - input).clamp(min=0)
    loss = aten.where(target != 1, margin_clamp, 0.0) + aten.where(target != -1, input, 0.0)
    return reduce_loss(loss, reduction)


@autocast_function("soft_margin_loss")
def soft_margin_loss(
    input: Tensor, target: Tensor, size_average=None, reduce=None, reduction: str = "mean"
) -> Tensor:
    """log(1 + exp(-y x))."""
    reduction = resolve(size_average, reduce, reduction)
    return reduce_loss((-input * target).exp().log1p(), reduction)


def multilabel_soft_margin_loss(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average=None,
    reduce=None,
    reduction: str = "mean",
) -> Tensor:
    """Per-class binary cross entropy with logits, averaged over the classes of each sample."""
    reduction = resolve(size_average, reduce, reduction)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.dim() - 1
    loss = loss.sum(class_dim) / input.size(class_dim)
    return reduce_loss(loss, reduction)


def _frames(name: str, input: Tensor) -> tuple[int, int]:
    """(number of samples, number of classes) of a 0/1/2-D classifier input."""
    nd = input.dim()
    if not ((nd == 2 and input.size(1) != 0) or (nd == 1 and input.size(0) != 0) or nd == 0):
        raise RuntimeError(
            f"{name}(): Expected non-empty vector or matrix with optional 0-dim "
            f"batch size, but got: {list(input.shape)}"
        )
    if nd <= 1:
        return 1, (input.numel() if nd == 1 else 1)
    return input.size(0), input.size(1)


def _check_long(name: str, target: Tensor) -> None:
    if target.dtype is not _dt.int64:
        raise RuntimeError(
            f"{name}(): expected target of class indices of dtype int64, got {target.dtype.name}"
        )


def _reduce_frames(loss: Tensor, reduction: str, batched_target: bool) -> Tensor:
    if reduction == "none":
        return loss if batched_target else loss.reshape(())
    return reduce_loss(loss, reduction)


@autocast_function("multi_margin_loss")
def multi_margin_loss(
    input: Tensor,
    target: Tensor,
    p: int = 1,
    margin: float = 1.0,
    weight: Tensor | None = None,
    size_average=None,
    reduce=None,
    reduction: str = "mean",
) -> Tensor:
    """Σ_{j ≠ y} max(0, margin - x_y + x_j)^p (times weight[y]) / C per sample."""
    reduction = resolve(size_average, reduce, reduction)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    nframe, dim = _frames("multi_margin_loss", input)
    _check_long("multi_margin_loss", target)
    if target.numel() != nframe or target.dim() > 1:
        raise RuntimeError(
            f"multi_margin_loss(): inconsistent target size, expected {nframe} "
            f"but got {list(target.shape)}"
        )
    if weight is not None and weight.numel() != dim:
        raise RuntimeError(
            f"multi_margin_loss(): inconsistent weight size, expected {dim} but "
            f"got {list(weight.shape)}"
        )
    x = input.reshape(nframe, dim)
    y = target.reshape(nframe, 1)
    if bool(((y < 0) | (y >= dim)).any()):
        raise RuntimeError("multi_margin_loss(): target out of range")
    z = margin - x.gather(1, y) + x
    h = z.clamp(min=0)
    if p == 2:
        h = h * h
    others = aten.arange(dim, device=input.device).unsqueeze(0) != y
    h = h * others
    if weight is not None:
        h = h * weight.index_select(0, y.reshape(-1)).unsqueeze(1)
    loss = h.sum(1) / dim
    return _reduce_frames(loss, reduction, target.dim() > 0 and input.dim() == 2)


@autocast_function("multilabel_margin_loss")
def multilabel_margin_loss(
    input: Tensor, target: Tensor, size_average=None, reduce=None, reduction: str = "mean"
) -> Tensor:
    """Σ over target classes j and non-target classes i of max(0, 1 - (x_j - x_i)) / C; each
    row of `target` lists class indices up to the first -1."""
    reduction = resolve(size_average, reduce, reduction)
    nframe, dim = _frames("multilabel_margin_loss", input)
    _check_long("multilabel_margin_loss", target)
    if tuple(target.shape) != tuple(input.shape):
        raise RuntimeError(
            f"multilabel_margin_loss(): inconsistent target size: "
            f"{list(target.shape)} for input of size: {list(input.shape)}"
        )
    x = input.reshape(nframe, dim)
    t = target.reshape(nframe, dim)
    valid = (t >= 0).long().cumprod(1).bool()  # positions before the first negative entry
    if bool((valid & (t >= dim)).any()):
        raise RuntimeError("multilabel_margin_loss(): target index is out of range")
    safe = t.masked_fill(~valid, 0)
    classes = aten.arange(dim, device=input.device)
    is_target = ((safe.unsqueeze(-1) == classes) & valid.unsqueeze(-1)).any(1)
    z = (1 - x.gather(1, safe)).unsqueeze(-1) + x.unsqueeze(1)  # (N, target pos, class)
    pairs = valid.unsqueeze(-1) & is_target.logical_not().unsqueeze(1)
    loss = (z.clamp(min=0) * pairs).sum((1, 2)) / dim
    return _reduce_frames(loss, reduction, input.dim() == 2)


@autocast_function("cosine_embedding_loss")
def cosine_embedding_loss(
    input1: Tensor,
    input2: Tensor,
    target: Tensor,
    margin: float = 0.0,
    size_average=None,
    reduce=None,
    reduction: str = "mean",
) -> Tensor:
    """1 - cos(x1, x2) where y = 1, max(0, cos(x1, x2) - margin) where y = -1."""
    reduction = resolve(size_average, reduce, reduction)
    tdim = target.dim()
    if tdim not in (0, 1):
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if tdim == 1 and (input1.dim() != 2 or input2.dim() != 2):
        raise RuntimeError(
            f"1D target tensor expects 2D input tensors, but found inputs with "
            f"sizes {list(input1.shape)} and {list(input2.shape)}."
        )
    if tdim == 0 and (input1.dim() != 1 or input2.dim() != 1):
        raise RuntimeError(
            f"0D target tensor expects 1D input tensors, but found inputs with "
            f"sizes {list(input1.shape)} and {list(input2.shape)}."
        )
    eps = 1e-12
    prod = (input1 * input2).sum(tdim)
    mag1 = (input1 * input1).sum(tdim) + eps
    mag2 = (input2 * input2).sum(tdim) + eps
    cos = prod / (mag1 * mag2).sqrt()
    pos = aten.where(target == 1, 1 - cos, 0.0)
    neg = aten.where(target == -1, (cos - margin).clamp(min=0), 0.0)
    return reduce_loss(pos + neg, reduction)


def _check_triplet_dims(anchor: Tensor, positive: Tensor, negative: Tensor) -> None:
    a, p, n = anchor.dim(), positive.dim(), negative.dim()
    if not (a == p == n):
        raise RuntimeError(
            f"The anchor, positive, and negative tensors are expected to have the "
            f"same number of dimensions, but got: anchor {a}D, positive {p}D, "
            f"and negative {n}D inputs"
        )


@autocast_function("triplet_margin_loss")
def triplet_margin_loss(
    anchor: Tensor,
    positive: Tensor,
    negative: Tensor,
    margin: float = 1.0,
    p: float = 2,
    eps: float = 1e-6,
    swap: bool = False,
    size_average=None,
    reduce=None,
    reduction: str = "mean",
) -> Tensor:
    """max(0, margin + d(a, p) - d(a, n)) with the pairwise p-norm distance d; `swap` uses
    min(d(a, n), d(p, n))."""
    reduction = resolve(size_average, reduce, reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    _check_triplet_dims(anchor, positive, negative)
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = aten.minimum(d_neg, pairwise_distance(positive, negative, p, eps))
    return reduce_loss((margin + d_pos - d_neg).clamp(min=0), reduction)


def triplet_margin_with_distance_loss(
    anchor: Tensor,
    positive: Tensor,
    negative: Tensor,
    *,
    distance_function: Callable | None = None,
    margin: float = 1.0,
    swap: bool = False,
    reduction: str = "mean",
) -> Tensor:
    """The triplet margin loss with any `distance_function` (pairwise_distance by default)."""
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    _check_triplet_dims(anchor, positive, negative)
    dist = distance_function if distance_function is not None else pairwise_distance
    d_pos = dist(anchor, positive)
    d_neg = dist(anchor, negative)
    if swap:
        d_neg = aten.minimum(d_neg, dist(positive, negative))
    return reduce_loss((margin + d_pos - d_neg).clamp(min=0), reduction)
