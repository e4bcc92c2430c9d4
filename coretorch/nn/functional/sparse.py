"""embedding and one_hot of ``nn.functional``."""

from __future__ import annotations

from ... import dtypes as _dt
from ...ops import aten
from ...tensor.tensor import Tensor
from ._embedding_renorm import embedding_renorm_

__all__ = ["embedding", "one_hot"]


def normalize_padding_idx(padding_idx: int | None, num_embeddings: int) -> int | None:
    """`padding_idx` as a non-negative row index (None stays None); AssertionError when it is
    outside [-num_embeddings, num_embeddings), as PyTorch."""
    if padding_idx is None:
        return None
    if padding_idx > 0 and padding_idx >= num_embeddings:
        raise AssertionError("Padding_idx must be within num_embeddings")
    if padding_idx < 0:
        if padding_idx < -num_embeddings:
            raise AssertionError("Padding_idx must be within num_embeddings")
        padding_idx = num_embeddings + padding_idx
    return padding_idx


def embedding(
    input: Tensor,
    weight: Tensor,
    padding_idx: int | None = None,
    max_norm: float | None = None,
    norm_type: float = 2.0,
    scale_grad_by_freq: bool = False,
    sparse: bool = False,
) -> Tensor:
    """Rows of `weight` picked by the integer tensor `input`; the `padding_idx` row gets no
    gradient. With `max_norm`, the picked rows are first renormalized in place; with
    `scale_grad_by_freq`, a row's gradient is divided by how often the batch picks it."""
    if max_norm is not None:
        embedding_renorm_(weight, input, max_norm, norm_type)
    if sparse:
        raise NotImplementedError(
            "embedding(): sparse gradients are not supported by coretorch (no sparse tensors)"
        )
    return aten.embedding(weight, input, padding_idx, scale_grad_by_freq)


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """int64 tensor of shape ``tensor.shape + (num_classes,)`` with a 1 at each class index."""
    if tensor.dtype is not _dt.int64:
        raise RuntimeError(
            f"one_hot is only applicable to index tensor of type LongTensor, got "
            f"{tensor.dtype.name}"
        )
    if tensor.numel() and tensor.device.type != "meta":
        lo, hi = int(tensor.amin()), int(tensor.amax())
        if lo < 0:
            raise RuntimeError("one_hot(): Class values must be non-negative.")
        if num_classes == -1:
            num_classes = hi + 1
        elif hi >= num_classes:
            raise RuntimeError("one_hot(): Class values must be smaller than num_classes.")
    elif num_classes == -1:
        raise RuntimeError(
            "one_hot(): Can not infer total number of classes from empty tensor "
            "(or a meta tensor); pass num_classes"
        )
    classes = aten.arange(num_classes, device=tensor.device)
    return (tensor.unsqueeze(-1) == classes).long()
