"""Attention of ``nn.functional``: scaled_dot_product_attention and PyTorch's
multi_head_attention_forward (sequence-first (L, N, E) layout, masks, need_weights)."""

from __future__ import annotations

import math

from ... import dtypes as _dt
from ...amp.autocast_mode import autocast_function
from ...ops import aten
from ...tensor.tensor import Tensor
from .dropout import dropout
from .linear import linear
from .padding import pad

__all__ = ["scaled_dot_product_attention", "multi_head_attention_forward"]


def _float_mask(mask: Tensor | None, name: str, dtype) -> Tensor | None:
    """A bool mask (True = not allowed) becomes an additive float mask of 0 / -inf."""
    if mask is None:
        return None
    if mask.dtype is _dt.bool:
        return aten.zeros(mask.shape, dtype=dtype, device=mask.device).masked_fill(
            mask, float("-inf")
        )
    if not mask.dtype.is_floating_point:
        raise AssertionError(f"only bool and floating types of {name} are supported")
    return mask


def _pad_masks(*masks: Tensor | None) -> list[Tensor | None]:
    """Each mask (or None) with one more key column, allowed, for an appended key."""
    return [None if m is None else pad(m, (0, 1)) for m in masks]


def _causal_mask(lq: int, lk: int, device) -> Tensor:
    rows = aten.arange(lq, device=device).unsqueeze(-1)
    cols = aten.arange(lk, device=device).unsqueeze(0)
    return cols > rows


@autocast_function("scaled_dot_product_attention")
def scaled_dot_product_attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    attn_mask: Tensor | None = None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    scale: float | None = None,
    enable_gqa: bool = False,
) -> Tensor:
    """softmax(q kᵀ * scale + mask) v over (..., L, E) tensors. A bool `attn_mask` marks the
    positions that may attend (True = take part), as in PyTorch's SDPA."""
    if enable_gqa:
        raise NotImplementedError(
            "scaled_dot_product_attention(): enable_gqa is not supported by coretorch yet"
        )
    lq, lk = query.shape[-2], key.shape[-2]
    scale = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    scores = (query * scale) @ key.transpose(-2, -1)
    if is_causal:
        if attn_mask is not None:
            raise RuntimeError(
                "scaled_dot_product_attention(): explicit attn_mask should not be "
                "set when is_causal=True"
            )
        scores = scores.masked_fill(_causal_mask(lq, lk, query.device), float("-inf"))
    elif attn_mask is not None:
        if attn_mask.dtype is _dt.bool:
            scores = scores.masked_fill(attn_mask.logical_not(), float("-inf"))
        else:
            scores = scores + attn_mask
    weights = scores.softmax(-1)
    if dropout_p > 0.0:
        weights = dropout(weights, dropout_p, True)
    return weights @ value


def multi_head_attention_forward(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    embed_dim_to_check: int,
    num_heads: int,
    in_proj_weight: Tensor | None,
    in_proj_bias: Tensor | None,
    bias_k: Tensor | None,
    bias_v: Tensor | None,
    add_zero_attn: bool,
    dropout_p: float,
    out_proj_weight: Tensor,
    out_proj_bias: Tensor | None,
    training: bool = True,
    key_padding_mask: Tensor | None = None,
    need_weights: bool = True,
    attn_mask: Tensor | None = None,
    use_separate_proj_weight: bool = False,
    q_proj_weight: Tensor | None = None,
    k_proj_weight: Tensor | None = None,
    v_proj_weight: Tensor | None = None,
    static_k: Tensor | None = None,
    static_v: Tensor | None = None,
    average_attn_weights: bool = True,
    is_causal: bool = False,
) -> tuple[Tensor, Tensor | None]:
    """Multi-head attention over sequence-first inputs: query (L, N, E), key/value (S, N, E)
    (or unbatched (L, E)). Masks: `key_padding_mask` (N, S), `attn_mask` (L, S) or
    (N*num_heads, L, S); bool masks mark positions NOT allowed to attend. Returns the output
    (L, N, E) and, with `need_weights`, the attention weights (averaged over heads by default)."""
    if static_k is not None or static_v is not None:
        raise NotImplementedError(
            "multi_head_attention_forward(): static_k/static_v are not supported by coretorch yet"
        )
    batched = query.dim() == 3
    if query.dim() not in (2, 3) or key.dim() != query.dim() or value.dim() != query.dim():
        raise AssertionError(
            f"query, key and value should be all 2D (unbatched) or 3D (batched) "
            f"tensors, got {query.dim()}D, {key.dim()}D and {value.dim()}D"
        )
    if not batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    if embed_dim != embed_dim_to_check:
        raise AssertionError(
            f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}"
        )
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if key.shape[:2] != value.shape[:2]:
        raise AssertionError(
            f"key shape {list(key.shape)} does not match value shape {list(value.shape)}"
        )
    if is_causal and attn_mask is None:
        raise RuntimeError(
            "Need attn_mask if specifying the is_causal hint. You may use the "
            "Transformer module method `generate_square_subsequent_mask` to "
            "create this mask."
        )
    dtype = query.dtype
    key_padding_mask = _float_mask(key_padding_mask, "key_padding_mask", dtype)
    attn_mask = _float_mask(attn_mask, "attn_mask", dtype)

    if not use_separate_proj_weight:
        assert in_proj_weight is not None  # the packed projection is used
        w_q, w_k, w_v = in_proj_weight.chunk(3)
    else:
        assert (
            q_proj_weight is not None and k_proj_weight is not None and v_proj_weight is not None
        )  # the separate projections are used
        w_q, w_k, w_v = q_proj_weight, k_proj_weight, v_proj_weight
    b_q = b_k = b_v = None
    if in_proj_bias is not None:
        b_q, b_k, b_v = in_proj_bias.chunk(3)
    q = linear(query, w_q, b_q)
    k = linear(key, w_k, b_k)
    v = linear(value, w_v, b_v)

    if attn_mask is not None:
        if attn_mask.dim() == 2:
            if tuple(attn_mask.shape) != (tgt_len, src_len):
                raise RuntimeError(
                    f"The shape of the 2D attn_mask is {attn_mask.shape}, but "
                    f"should be {(tgt_len, src_len)}."
                )
            attn_mask = attn_mask.unsqueeze(0)
        elif attn_mask.dim() == 3:
            if tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, src_len):
                raise RuntimeError(
                    f"The shape of the 3D attn_mask is {attn_mask.shape}, but "
                    f"should be {(bsz * num_heads, tgt_len, src_len)}."
                )
        else:
            raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")

    if bias_k is not None and bias_v is not None:
        k = aten.cat([k, bias_k.expand(1, bsz, embed_dim)])
        v = aten.cat([v, bias_v.expand(1, bsz, embed_dim)])
        attn_mask, key_padding_mask = _pad_masks(attn_mask, key_padding_mask)

    q = q.reshape(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    k = k.reshape(k.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    v = v.reshape(v.shape[0], bsz * num_heads, head_dim).transpose(0, 1)

    if add_zero_attn:
        zeros = aten.zeros((bsz * num_heads, 1, head_dim), dtype=k.dtype, device=k.device)
        k = aten.cat([k, zeros], 1)
        v = aten.cat([v, zeros], 1)
        attn_mask, key_padding_mask = _pad_masks(attn_mask, key_padding_mask)

    src_len = k.shape[1]
    if key_padding_mask is not None:
        if tuple(key_padding_mask.shape) != (bsz, src_len):
            raise AssertionError(
                f"expecting key_padding_mask shape of {(bsz, src_len)}, but got "
                f"{tuple(key_padding_mask.shape)}"
            )
        kpm = (
            key_padding_mask.reshape(bsz, 1, 1, src_len)
            .expand(bsz, num_heads, 1, src_len)
            .reshape(bsz * num_heads, 1, src_len)
        )
        attn_mask = kpm if attn_mask is None else attn_mask + kpm

    if not training:
        dropout_p = 0.0
    scores = (q * math.sqrt(1.0 / float(head_dim))) @ k.transpose(-2, -1)
    if attn_mask is not None:
        scores = scores + attn_mask
    weights = scores.softmax(-1)
    if dropout_p > 0.0:
        weights = dropout(weights, dropout_p, True)
    out = weights @ v
    out = out.transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
    out = linear(out, out_proj_weight, out_proj_bias).reshape(tgt_len, bsz, -1)
    if not need_weights:
        return (out if batched else out.squeeze(1)), None
    weights = weights.reshape(bsz, num_heads, tgt_len, src_len)
    if average_attn_weights:
        weights = weights.mean(1)
    if not batched:
        return out.squeeze(1), weights.squeeze(0)
    return out, weights
