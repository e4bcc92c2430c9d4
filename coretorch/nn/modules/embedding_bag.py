"""EmbeddingBag: sums, means or maxima of bags of embeddings without building the per-index
embeddings of each bag."""

from __future__ import annotations

from .. import functional as F
from ._layer import SHOWN, options_repr
from .sparse import _EmbeddingTable

__all__ = ["EmbeddingBag"]


class EmbeddingBag(_EmbeddingTable):
    """``bag(input, offsets=None, per_sample_weights=None)``: one reduced embedding per bag
    (rows of a 2-D input, or slices of a 1-D input starting at `offsets`); weights start
    N(0, 1) with the `padding_idx` row zero."""

    def __init__(
        self,
        num_embeddings: int,
        embedding_dim: int,
        max_norm: float | None = None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        mode: str = "mean",
        sparse: bool = False,
        _weight=None,
        include_last_offset: bool = False,
        padding_idx: int | None = None,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__(
            num_embeddings,
            embedding_dim,
            padding_idx,
            max_norm,
            norm_type,
            scale_grad_by_freq,
            sparse,
            _weight,
            True,
            device,
            dtype,
        )
        self.mode = mode
        self.include_last_offset = include_last_offset

    def forward(self, input, offsets=None, per_sample_weights=None):
        return F.embedding_bag(
            input,
            self.weight,
            offsets,
            self.max_norm,
            self.norm_type,
            self.scale_grad_by_freq,
            self.mode,
            self.sparse,
            per_sample_weights,
            self.include_last_offset,
            self.padding_idx,
        )

    def extra_repr(self) -> str:
        return options_repr(
            self,
            ("num_embeddings", "embedding_dim"),
            max_norm=None,
            norm_type=2,
            scale_grad_by_freq=False,
            mode=SHOWN,
            padding_idx=None,
        )

    @classmethod
    def from_pretrained(
        cls,
        embeddings,
        freeze: bool = True,
        max_norm: float | None = None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        mode: str = "mean",
        sparse: bool = False,
        include_last_offset: bool = False,
        padding_idx: int | None = None,
    ) -> "EmbeddingBag":
        """An EmbeddingBag whose weight is the 2-D tensor `embeddings` (frozen by default)."""
        if embeddings.dim() != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        bag = cls(
            rows,
            cols,
            _weight=embeddings,
            max_norm=max_norm,
            norm_type=norm_type,
            scale_grad_by_freq=scale_grad_by_freq,
            mode=mode,
            sparse=sparse,
            include_last_offset=include_last_offset,
            padding_idx=padding_idx,
        )
        bag.weight.requires_grad_(not freeze)
        return bag
