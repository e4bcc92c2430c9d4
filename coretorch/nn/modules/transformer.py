"""Transformer, TransformerEncoder(Layer) and TransformerDecoder(Layer) (PyTorch's submodule
names, so state_dicts move between the two; post-norm or `norm_first` pre-norm; relu/gelu or any
callable activation; attention masks, key padding masks and causal hints)."""

from __future__ import annotations

import copy
import warnings
from typing import Callable

from ... import dtypes as _dt
from ...autograd.grad_mode import is_grad_enabled
from ...ops import aten
from ...tensor.tensor import Tensor
from .. import functional as F, init
from .activation import GELU, ReLU
from .attention import MultiheadAttention
from .container import ModuleList
from .dropout import Dropout
from .linear import Linear
from .module import Module
from .normalization import LayerNorm

__all__ = [
    "Transformer",
    "TransformerEncoder",
    "TransformerDecoder",
    "TransformerEncoderLayer",
    "TransformerDecoderLayer",
]


def _generate_square_subsequent_mask(sz: int, device=None, dtype=None) -> Tensor:
    """A float (sz, sz) mask: -inf above the diagonal, 0 elsewhere."""
    return aten.full((sz, sz), float("-inf"), dtype=dtype, device=device).triu(1)


def _get_activation_fn(activation: str) -> Callable:
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    raise RuntimeError(f"activation should be relu/gelu, not {activation}")


def _get_clones(module: Module, n: int) -> ModuleList:
    return ModuleList([copy.deepcopy(module) for _ in range(n)])


def _canonical_mask(
    mask: Tensor | None, name: str, other: Tensor | None, other_name: str, dtype
) -> Tensor | None:
    """A bool mask (True = masked) as an additive float mask of 0 / -inf (PyTorch's
    ``F._canonical_mask``, with its warning for masks of different kinds)."""
    if mask is None:
        return None
    is_float = mask.dtype.is_floating_point
    if mask.dtype is not _dt.bool and not is_float:
        raise AssertionError(f"only bool and floating types of {name} are supported")
    if other is not None and other.dtype is not mask.dtype:
        warnings.warn(
            f"Support for mismatched {name} and {other_name} is deprecated. Use same "
            f"type for both instead.",
            stacklevel=4,
        )
    if is_float:
        return mask
    return aten.zeros(mask.shape, dtype=dtype, device=mask.device).masked_fill(mask, float("-inf"))


def _seq_len(src: Tensor, batch_first: bool) -> int:
    if src.dim() == 2:
        return src.shape[0]
    return src.shape[1 if batch_first else 0]


def _detect_is_causal_mask(
    mask: Tensor | None, is_causal: bool | None = None, size: int | None = None
) -> bool:
    """`is_causal` if given, else whether `mask` equals the square subsequent mask."""
    make_causal = is_causal is True
    if is_causal is None and mask is not None:
        sz = size if size is not None else mask.size(-2)
        causal = _generate_square_subsequent_mask(sz, device=mask.device, dtype=mask.dtype)
        make_causal = tuple(mask.shape) == tuple(causal.shape) and bool((mask == causal).all())
    return make_causal


def _activation_kind(activation) -> int:
    """1 for relu, 2 for gelu, 0 for anything else (PyTorch's activation_relu_or_gelu)."""
    if activation is F.relu or isinstance(activation, ReLU):
        return 1
    if activation is F.gelu or isinstance(activation, GELU):
        return 2
    return 0


class _TransformerLayer(Module):
    """The parts every Transformer layer has, registered in PyTorch's order: the attention
    block(s), the feed-forward block (linear1, dropout, linear2), one LayerNorm and one
    Dropout per block."""

    def _build(
        self,
        attentions: tuple,
        d_model: int,
        nhead: int,
        dim_feedforward: int,
        dropout: float,
        layer_norm_eps: float,
        batch_first: bool,
        norm_first: bool,
        bias: bool,
        kw: dict,
    ) -> None:
        for name in attentions:
            setattr(
                self,
                name,
                MultiheadAttention(
                    d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first, **kw
                ),
            )
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **kw)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **kw)
        self.norm_first = norm_first
        blocks = len(attentions) + 1
        for i in range(1, blocks + 1):
            setattr(self, f"norm{i}", LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw))
        for i in range(1, blocks + 1):
            setattr(self, f"dropout{i}", Dropout(dropout))
        self._blocks = blocks

    def _attend(
        self, attn: Module, drop: Module, x, mem, attn_mask, key_padding_mask, is_causal: bool
    ):
        x = attn(
            x,
            mem,
            mem,
            attn_mask=attn_mask,
            key_padding_mask=key_padding_mask,
            need_weights=False,
            is_causal=is_causal,
        )[0]
        return drop(x)

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal=False):
        return self._attend(
            self.self_attn, self.dropout1, x, x, attn_mask, key_padding_mask, is_causal
        )

    def _ff_block(self, x):
        last = getattr(self, f"dropout{self._blocks}")
        return last(self.linear2(self.dropout(self.activation(self.linear1(x)))))

    def _residual(self, x, i: int, block):
        """x + block(norm_i(x)) with norm_first, else norm_i(x + block(x))."""
        norm = getattr(self, f"norm{i}")
        return x + block(norm(x)) if self.norm_first else norm(x + block(x))


class TransformerEncoderLayer(_TransformerLayer):
    """Self-attention then a feed-forward block, each with residual, dropout and LayerNorm
    (after the residual by default, before the block with `norm_first`)."""

    def __init__(
        self,
        d_model: int,
        nhead: int,
        dim_feedforward: int = 2048,
        dropout: float = 0.1,
        activation: "str | Callable" = F.relu,
        layer_norm_eps: float = 1e-5,
        batch_first: bool = False,
        norm_first: bool = False,
        bias: bool = True,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        self._build(
            ("self_attn",),
            d_model,
            nhead,
            dim_feedforward,
            dropout,
            layer_norm_eps,
            batch_first,
            norm_first,
            bias,
            {"device": device, "dtype": dtype},
        )
        if isinstance(activation, str):
            activation = _get_activation_fn(activation)
        self.activation_relu_or_gelu = _activation_kind(activation)
        self.activation = activation

    def forward(
        self,
        src: Tensor,
        src_mask: Tensor | None = None,
        src_key_padding_mask: Tensor | None = None,
        is_causal: bool = False,
    ) -> Tensor:
        src_key_padding_mask = _canonical_mask(
            src_key_padding_mask, "src_key_padding_mask", src_mask, "src_mask", src.dtype
        )
        src_mask = _canonical_mask(src_mask, "src_mask", None, "", src.dtype)
        x = self._residual(
            src, 1, lambda y: self._sa_block(y, src_mask, src_key_padding_mask, is_causal)
        )
        return self._residual(x, 2, self._ff_block)


class TransformerDecoderLayer(_TransformerLayer):
    """Self-attention, attention over the encoder's memory, then a feed-forward block, each with
    residual, dropout and LayerNorm (post-norm, or pre-norm with `norm_first`)."""

    def __init__(
        self,
        d_model: int,
        nhead: int,
        dim_feedforward: int = 2048,
        dropout: float = 0.1,
        activation: "str | Callable" = F.relu,
        layer_norm_eps: float = 1e-5,
        batch_first: bool = False,
        norm_first: bool = False,
        bias: bool = True,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        self._build(
            ("self_attn", "multihead_attn"),
            d_model,
            nhead,
            dim_feedforward,
            dropout,
            layer_norm_eps,
            batch_first,
            norm_first,
            bias,
            {"device": device, "dtype": dtype},
        )
        self.activation = (
            _get_activation_fn(activation) if isinstance(activation, str) else activation
        )

    def forward(
        self,
        tgt: Tensor,
        memory: Tensor,
        tgt_mask: Tensor | None = None,
        memory_mask: Tensor | None = None,
        tgt_key_padding_mask: Tensor | None = None,
        memory_key_padding_mask: Tensor | None = None,
        tgt_is_causal: bool = False,
        memory_is_causal: bool = False,
    ) -> Tensor:
        x = self._residual(
            tgt, 1, lambda y: self._sa_block(y, tgt_mask, tgt_key_padding_mask, tgt_is_causal)
        )
        x = self._residual(
            x,
            2,
            lambda y: self._mha_block(
                y, memory, memory_mask, memory_key_padding_mask, memory_is_causal
            ),
        )
        return self._residual(x, 3, self._ff_block)

    def _mha_block(self, x, mem, attn_mask, key_padding_mask, is_causal=False):
        return self._attend(
            self.multihead_attn, self.dropout2, x, mem, attn_mask, key_padding_mask, is_causal
        )


def _why_no_nested(layer) -> str:
    """Why PyTorch's encoder would not run `layer` on nested tensors ("" if it would)."""
    name = "encoder_layer"
    if not isinstance(layer, TransformerEncoderLayer):
        return f"{name} was not TransformerEncoderLayer"
    attn = layer.self_attn
    if layer.norm_first:
        return f"{name}.norm_first was True"
    if not attn.batch_first:
        return (
            f"{name}.self_attn.batch_first was not True(use batch_first for better "
            f"inference performance)"
        )
    if not attn._qkv_same_embed_dim:
        return f"{name}.self_attn._qkv_same_embed_dim was not True"
    if attn.in_proj_bias is None:
        return f"{name}.self_attn was passed bias=False"
    if not layer.activation_relu_or_gelu:
        return f"{name}.activation_relu_or_gelu was not True"
    if layer.norm1.eps != layer.norm2.eps:
        return f"{name}.norm1.eps was not equal to {name}.norm2.eps"
    if attn.num_heads % 2 == 1:
        return f"{name}.self_attn.num_heads is odd"
    return ""


class TransformerEncoder(Module):
    """`num_layers` copies of `encoder_layer` applied in turn, then the optional `norm`."""

    def __init__(
        self,
        encoder_layer: Module,
        num_layers: int,
        norm: Module | None = None,
        enable_nested_tensor: bool = True,
        mask_check: bool = True,
    ) -> None:
        super().__init__()
        self.layers = _get_clones(encoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm
        self.enable_nested_tensor = enable_nested_tensor
        self.use_nested_tensor = enable_nested_tensor
        self.mask_check = mask_check
        why_not = _why_no_nested(encoder_layer)
        if enable_nested_tensor and why_not:
            warnings.warn(
                f"enable_nested_tensor is True, but self.use_nested_tensor is False "
                f"because {why_not}",
                stacklevel=2,
            )
            self.use_nested_tensor = False

    def _padded_positions(self, src: Tensor, mask, key_padding_mask) -> Tensor | None:
        """Where PyTorch's inference path (nested tensors) leaves zeros in the output: the
        padded positions, when that path applies; else None."""
        first = self.layers[0]
        if (
            not self.use_nested_tensor
            or first.training
            or src.dim() != 3
            or key_padding_mask is None
            or mask is not None
        ):
            return None
        keep = key_padding_mask == 0
        if self.mask_check:
            # left aligned: every row's kept positions come first
            n = keep.long().sum(-1, keepdim=True)
            pos = aten.arange(keep.shape[-1], device=keep.device)
            if not bool((keep == (pos < n)).all()):
                return None
        attn = first.self_attn
        params = (
            src,
            attn.in_proj_weight,
            attn.in_proj_bias,
            attn.out_proj.weight,
            attn.out_proj.bias,
            first.norm1.weight,
            first.norm1.bias,
            first.norm2.weight,
            first.norm2.bias,
            first.linear1.weight,
            first.linear1.bias,
            first.linear2.weight,
            first.linear2.bias,
        )
        if is_grad_enabled() and any(t is not None and t.requires_grad for t in params):
            return None
        return keep.logical_not()

    def forward(
        self,
        src: Tensor,
        mask: Tensor | None = None,
        src_key_padding_mask: Tensor | None = None,
        is_causal: bool | None = None,
    ) -> Tensor:
        src_key_padding_mask = _canonical_mask(
            src_key_padding_mask, "src_key_padding_mask", mask, "mask", src.dtype
        )
        mask = _canonical_mask(mask, "mask", None, "", src.dtype)
        padded = self._padded_positions(src, mask, src_key_padding_mask)
        batch_first = self.layers[0].self_attn.batch_first
        is_causal = _detect_is_causal_mask(mask, is_causal, _seq_len(src, batch_first))
        output = src
        for mod in self.layers:
            output = mod(
                output,
                src_mask=mask,
                is_causal=is_causal,
                src_key_padding_mask=src_key_padding_mask,
            )
        if padded is not None:
            output = output.masked_fill(padded.unsqueeze(-1), 0.0)
        if self.norm is not None:
            output = self.norm(output)
        return output


class TransformerDecoder(Module):
    """`num_layers` copies of `decoder_layer` applied in turn, then the optional `norm`."""

    def __init__(self, decoder_layer: Module, num_layers: int, norm: Module | None = None) -> None:
        super().__init__()
        self.layers = _get_clones(decoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(
        self,
        tgt: Tensor,
        memory: Tensor,
        tgt_mask: Tensor | None = None,
        memory_mask: Tensor | None = None,
        tgt_key_padding_mask: Tensor | None = None,
        memory_key_padding_mask: Tensor | None = None,
        tgt_is_causal: bool | None = None,
        memory_is_causal: bool = False,
    ) -> Tensor:
        output = tgt
        seq_len = _seq_len(tgt, self.layers[0].self_attn.batch_first)
        tgt_is_causal = _detect_is_causal_mask(tgt_mask, tgt_is_causal, seq_len)
        for mod in self.layers:
            output = mod(
                output,
                memory,
                tgt_mask=tgt_mask,
                memory_mask=memory_mask,
                tgt_key_padding_mask=tgt_key_padding_mask,
                memory_key_padding_mask=memory_key_padding_mask,
                tgt_is_causal=tgt_is_causal,
                memory_is_causal=memory_is_causal,
            )
        if self.norm is not None:
            output = self.norm(output)
        return output


class Transformer(Module):
    """The encoder-decoder model of "Attention Is All You Need": ``out = model(src, tgt)``.

    Matrices (every parameter with more than one dimension) start xavier-uniform, as PyTorch.
    """

    def __init__(
        self,
        d_model: int = 512,
        nhead: int = 8,
        num_encoder_layers: int = 6,
        num_decoder_layers: int = 6,
        dim_feedforward: int = 2048,
        dropout: float = 0.1,
        activation: "str | Callable" = F.relu,
        custom_encoder: Module | None = None,
        custom_decoder: Module | None = None,
        layer_norm_eps: float = 1e-5,
        batch_first: bool = False,
        norm_first: bool = False,
        bias: bool = True,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        kw = {"device": device, "dtype": dtype}
        layer_args = (
            d_model,
            nhead,
            dim_feedforward,
            dropout,
            activation,
            layer_norm_eps,
            batch_first,
            norm_first,
            bias,
        )

        def stack(custom: Module | None, stack_cls: type, layer_cls: type, n: int) -> Module:
            if custom is not None:
                return custom
            return stack_cls(
                layer_cls(*layer_args, **kw),
                n,
                LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw),
            )

        self.encoder = stack(
            custom_encoder, TransformerEncoder, TransformerEncoderLayer, num_encoder_layers
        )
        self.decoder = stack(
            custom_decoder, TransformerDecoder, TransformerDecoderLayer, num_decoder_layers
        )
        self._reset_parameters()
        self.d_model = d_model
        self.nhead = nhead
        self.batch_first = batch_first

    def forward(
        self,
        src: Tensor,
        tgt: Tensor,
        src_mask: Tensor | None = None,
        tgt_mask: Tensor | None = None,
        memory_mask: Tensor | None = None,
        src_key_padding_mask: Tensor | None = None,
        tgt_key_padding_mask: Tensor | None = None,
        memory_key_padding_mask: Tensor | None = None,
        src_is_causal: bool | None = None,
        tgt_is_causal: bool | None = None,
        memory_is_causal: bool = False,
    ) -> Tensor:
        batch_dim = 0 if self.batch_first else 1
        if src.dim() == 3 and src.size(batch_dim) != tgt.size(batch_dim):
            raise RuntimeError("the batch number of src and tgt must be equal")
        if src.size(-1) != self.d_model or tgt.size(-1) != self.d_model:
            raise RuntimeError("the feature number of src and tgt must be equal to d_model")
        memory = self.encoder(
            src, mask=src_mask, src_key_padding_mask=src_key_padding_mask, is_causal=src_is_causal
        )
        return self.decoder(
            tgt,
            memory,
            tgt_mask=tgt_mask,
            memory_mask=memory_mask,
            tgt_key_padding_mask=tgt_key_padding_mask,
            memory_key_padding_mask=memory_key_padding_mask,
            tgt_is_causal=tgt_is_causal,
            memory_is_causal=memory_is_causal,
        )

    @staticmethod
    def generate_square_subsequent_mask(sz: int, device=None, dtype=None) -> Tensor:
        """A float (sz, sz) causal mask: -inf above the diagonal, 0 elsewhere."""
        return _generate_square_subsequent_mask(sz, device=device, dtype=dtype)

    def _reset_parameters(self) -> None:
        for p in self.parameters():
            if p.dim() > 1:
                init.xavier_uniform_(p)
